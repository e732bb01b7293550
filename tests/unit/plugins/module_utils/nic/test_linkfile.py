# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/nic/_linkfile.py: the .link file, how it matches its device, and the files that shadow it."""
from __future__ import annotations

import os

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _linkfile
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host

from .nics import MGMT, MLX, VETH, plan_one


def test_link_file_content():
    ident = dict(MLX, udev_path="pci-0000:3b:00.0", device_driver="mlx5_core", path_unique=True)
    out = plan_one({"mtu": 9000, "rings": {"rx": 4096}, "channels": {"combined": 8},
                    "coalesce": {"adaptive_rx": False, "rx_usecs": 8}}, ident, mode="both")
    f = [c for c in out["plan"] if c.domain == "file"][0]
    assert f.key == "file:/etc/systemd/network/10-hpcnet-rdma-ens1f0np0.link"
    body = f.after["content"].split("[Match]\n", 1)[1]
    assert body == ("Path=pci-0000:3b:00.0\nDriver=mlx5_core\n\n[Link]\nName=ens1f0np0\nMTUBytes=9000\n"
                    "RxBufferSize=4096\nCombinedChannels=8\nUseAdaptiveRxCoalesce=no\nRxCoalesceSec=8us\n")
    perm = dict(MLX, permaddr="b8:ce:f6:00:00:99")
    f = [c for c in plan_one({"mtu": 9000}, perm, mode="both")["plan"] if c.domain == "file"][0]   # persist alone refuses a MAC
    assert "PermanentMACAddress=b8:ce:f6:00:00:99\n" in f.after["content"]


@pytest.mark.parametrize("obs, match", [
    # the bus position (+ driver): the same on every node with this layout, so a baked file works there
    (dict(MLX, udev_path="pci-0000:3b:00.0", device_driver="mlx5_core", path_unique=True),
     ["Path=pci-0000:3b:00.0", "Driver=mlx5_core"]),
    (dict(MGMT, udev_path="pci-0000:00:04.0", device_driver="virtio_net", path_unique=True),
     ["Path=pci-0000:00:04.0", "Driver=virtio_net"]),
    # a bus device with several netdevs (representors, multi-port function): Path= would match them all
    (dict(MLX, udev_path="pci-0000:3b:00.0", device_driver="mlx5_core", path_unique=False,
          permanent_mac="b8:ce:f6:00:00:01"), ["PermanentMACAddress=b8:ce:f6:00:00:01"]),
    # no udev database (a container, a chroot): the permanent address the kernel reports
    (dict(MLX, permanent_mac="b8:ce:f6:00:00:01"), ["PermanentMACAddress=b8:ce:f6:00:00:01"]),
    (dict(MLX, permaddr="b8:ce:f6:00:00:99"), ["PermanentMACAddress=b8:ce:f6:00:00:99"]),
    # a virtual device: created under its name with a random MAC; never MACAddress= (a VLAN or bond shares it)
    (VETH, ["OriginalName=data0"]),
    (MLX, ["OriginalName=ens1f0np0"]),
])
def test_link_match_never_uses_the_current_mac(obs, match):
    assert _linkfile.link_match(obs["name"], obs) == match


# ---------------------------------------------------------------------- other .link files

@pytest.mark.parametrize("text, why", [
    ("[Match]\nMACAddress=B8:CE:F6:00:00:01 52:54:00:00:00:09\n[Link]\nMTUBytes=1500\n",
     "MACAddress=B8:CE:F6:00:00:01 52:54:00:00:00:09"),
    ("[Match]\nOriginalName=ens*\nDriver=mlx5_*\n", "OriginalName=ens*, Driver=mlx5_*"),
    ("[Match]\nPath=pci-0000:3b:00.0\n", "Path=pci-0000:3b:00.0"),
    ("[Match]\nOriginalName=*\nHost=node1\n", "OriginalName=*, Host=node1 (not checked)"),
    ("# comment\n[Match]\nDriver=!virtio_net\n", "Driver=!virtio_net"),
    ("[Match]\nDriver=virtio_net\n", None),
    ("[Match]\nMACAddress=52:54:00:00:00:09\n", None),
    ("[Match]\nPermanentMACAddress=b8:ce:f6:00:00:01\n", None),     # permanent address not known here
    ("[Match]\nOriginalName=*\nKind=vlan\n", None),
    ("[Link]\nMTUBytes=1500\n", None),                                 # no [Match]: udev ignores the file
])
def test_link_file_matches(text, why):
    obs = dict(MLX, udev_path="pci-0000:3b:00.0", device_driver="mlx5_core")
    assert _linkfile.link_file_matches(text, "ens1f0np0", obs) == why


def test_earlier_link_files_that_match_are_warned_about(tmp_path):
    root = tmp_path / "root"

    def put(path, text):
        full = root / path.lstrip("/")
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(text)

    put("/etc/systemd/network/05-site.link", "[Match]\nMACAddress=b8:ce:f6:00:00:01\n\n[Link]\nMTUBytes=1500\n")
    put("/etc/systemd/network/50-late.link", "[Match]\nOriginalName=*\n")           # sorts after ours
    put("/etc/systemd/network/10-hpcnet-rdma-data0.link", "[Match]\nOriginalName=*\n")  # ours, another NIC
    put("/usr/lib/systemd/network/01-vendor.link", "[Match]\nDriver=mlx5_core\n")
    put("/usr/lib/systemd/network/02-masked.link", "[Match]\nOriginalName=*\n")
    os.symlink("/dev/null", str(root / "etc/systemd/network/02-masked.link"))        # masked by /etc
    put("/run/systemd/network/03-other.link", "[Match]\nDriver=ice\n")
    host = Host(root=str(root), environ={})
    warnings = _linkfile.earlier_link_files(host, "ens1f0np0", dict(MLX, device_driver="mlx5_core"))
    assert [w.split(" ", 1)[0] for w in warnings] == ["/usr/lib/systemd/network/01-vendor.link",
                                                      "/etc/systemd/network/05-site.link"]
    assert warnings[1] == (
        "/etc/systemd/network/05-site.link sorts before 10-hpcnet-rdma-ens1f0np0.link and matches ens1f0np0 "
        "(MACAddress=b8:ce:f6:00:00:01): udev applies only the first .link file that matches a device, so the "
        "settings persisted for ens1f0np0 would not apply at boot; rename it to sort after "
        "10-hpcnet-rdma-ens1f0np0.link or narrow its [Match]")
