# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils import _link

J = "/var/lib/hpcnet-rdma"

MLX = {"name": "ens1f0np0", "driver": "mlx5_core", "mtu": 1500, "min_mtu": 68, "max_mtu": 9978,
       "address": "b8:ce:f6:00:00:01", "permaddr": None,
       "addresses": [{"family": "inet", "local": "10.10.1.5", "prefixlen": 16}],
       "rings": {"max": {"rx": 8192, "rx_mini": None, "rx_jumbo": None, "tx": 8192},
                 "current": {"rx": 1024, "rx_mini": None, "rx_jumbo": None, "tx": 1024}},
       "channels": {"max": {"rx": None, "tx": None, "other": None, "combined": 63},
                    "current": {"rx": None, "tx": None, "other": None, "combined": 63}},
       "coalesce": {"adaptive_rx": True, "adaptive_tx": True, "rx_usecs": 8, "tx_usecs": 16,
                    "rx_frames": 128, "tx_frames": 32}}
VETH = {"name": "data0", "driver": "veth", "mtu": 1500, "min_mtu": 68, "max_mtu": 65535,
        "address": "02:00:00:00:00:02", "permaddr": None,
        "addresses": [{"family": "inet", "local": "10.77.0.1", "prefixlen": 24}],
        "rings": None, "channels": {"max": {"rx": 2, "tx": 2, "other": None, "combined": None},
                                    "current": {"rx": 1, "tx": 1, "other": None, "combined": None}},
        "coalesce": None}
MGMT = {"name": "eth0", "driver": "virtio_net", "mtu": 1500, "min_mtu": 68, "max_mtu": 65535,
        "address": "52:54:00:00:00:01", "permaddr": None,
        "addresses": [{"family": "inet", "local": "192.168.122.10", "prefixlen": 24}],
        "rings": None, "channels": None, "coalesce": None}
LINKS = {"ens1f0np0": MLX, "data0": VETH, "eth0": MGMT}


@pytest.mark.parametrize("entries, selected", [
    ([{"name": "data0"}], ["data0"]),
    ([{"glob": "ens*"}], ["ens1f0np0"]),
    ([{"glob": "*"}], ["data0", "ens1f0np0", "eth0"]),
    ([{"driver": "mlx5_core"}], ["ens1f0np0"]),
    ([{"subnet": "10.77.0.0/24"}], ["data0"]),
    ([{"subnet": "10.0.0.0/8"}], ["data0", "ens1f0np0"]),
    ([{"driver": "veth"}, {"name": "ens1f0np0"}], ["data0", "ens1f0np0"]),
])
def test_select(entries, selected):
    assert sorted(_link.select(entries, LINKS)) == selected


def test_later_entries_override_per_setting():
    chosen = _link.select([{"glob": "*", "mtu": 9000, "rings": {"rx": 4096, "tx": 4096}},
                           {"name": "ens1f0np0", "rings": {"rx": 8192, "tx": None}}], LINKS)
    assert chosen["ens1f0np0"]["mtu"] == 9000
    assert chosen["ens1f0np0"]["rings"] == {"rx": 8192, "tx": 4096}
    assert chosen["ens1f0np0"]["selected_by"] == ["glob=*", "name=ens1f0np0"]


def test_defaults_apply_to_every_selection_and_entries_override_them():
    chosen = _link.select([{"driver": "veth"}, {"name": "ens1f0np0", "mtu": 4200, "rings": {"tx": 512}}], LINKS,
                          {"mtu": 9000, "rings": {"rx": 4096, "tx": 4096}})
    assert (chosen["data0"]["mtu"], chosen["data0"]["rings"]) == (9000, {"rx": 4096, "tx": 4096})
    assert (chosen["ens1f0np0"]["mtu"], chosen["ens1f0np0"]["rings"]) == (4200, {"rx": 4096, "tx": 512})


@pytest.mark.parametrize("entries, message", [
    ([{"name": "eth9"}], r"interfaces\[0\].name: unknown interface 'eth9'; present: data0 \(veth\)"),
    ([{"driver": "ice"}], r"interfaces\[0\]: selector driver='ice' matched no interface"),
    ([{"glob": "ib*"}], "selector glob='ib\\*' matched no interface"),
    ([{"subnet": "172.16.0.0/12"}], "matched no interface"),
    ([{"subnet": "not-a-net"}], "is not an IPv4/IPv6 network"),
    ([{"name": "data0", "driver": "veth"}], r"give exactly one of name, glob, driver, subnet \(got name, driver\)"),
    ([{"mtu": 9000}], r"\(got none\)"),
])
def test_select_errors(entries, message):
    with pytest.raises(ValueError, match=message):
        _link.select(entries, LINKS)


def _plan(settings, obs, cap=False, mode="runtime", mgmt=(), allow=False):
    return _link.plan({obs["name"]: settings}, {obs["name"]: obs}, mode, cap, list(mgmt), allow, {}, J)


@pytest.mark.parametrize("settings, obs, changes", [
    ({"mtu": 9000}, VETH, [("nic:data0:mtu", 1500, 9000)]),
    ({"mtu": 1500}, VETH, []),
    ({"rings": {"rx": 8192}}, MLX, [("nic:ens1f0np0:ring.rx", 1024, 8192)]),
    ({"channels": {"combined": 16}}, MLX, [("nic:ens1f0np0:channel.combined", 63, 16)]),
    ({"channels": {"rx": 2}}, VETH, [("nic:data0:channel.rx", 1, 2)]),
    ({"coalesce": {"rx_usecs": 0, "adaptive_rx": False}}, MLX,
     [("nic:ens1f0np0:coalesce.adaptive_rx", True, False), ("nic:ens1f0np0:coalesce.rx_usecs", 8, 0)]),
])
def test_plan_runtime(settings, obs, changes):
    out = _plan(settings, obs)
    assert [(c.key, c.before, c.after) for c in out["plan"]] == changes


@pytest.mark.parametrize("settings, obs, message", [
    ({"mtu": 10000}, MLX, r"ens1f0np0 mtu=10000 is outside what the device allows \(68..9978\)"),
    ({"mtu": 60}, VETH, r"outside what the device allows \(68..65535\)"),
    ({"rings": {"rx": 16384}}, MLX, "rings.rx=16384 is above the hardware maximum 8192; use 8192 or less"),
    ({"rings": {"rx": 0}}, MLX, r"rings.rx=0 is invalid; allowed: 1..8192"),
    ({"rings": {"rx_jumbo": 1024}}, MLX, "rings.rx_jumbo is not supported by driver mlx5_core"),
    ({"rings": {"rx": 512}}, VETH, r"rings not supported by driver veth \(ethtool -g: Operation not supported\)"),
    ({"channels": {"combined": 64}}, MLX, "channels.combined=64 is above the hardware maximum 63"),
    ({"channels": {"combined": 2}}, VETH, "channels.combined is not supported by driver veth"),
    ({"coalesce": {"rx_usecs": -1}}, MLX, "coalesce.rx_usecs=-1 is negative; allowed: 0 or more"),
    ({"coalesce": {"rx_usecs": 8}}, VETH, "coalesce not supported by driver veth"),
    ({"coalesce": {"tx_usecs": -3}}, VETH, "coalesce.tx_usecs=-3 is negative"),
])
def test_plan_refuses_beyond_capabilities(settings, obs, message):
    with pytest.raises(ValueError, match=message):
        _plan(settings, obs)


def test_cap_lowers_to_maximum_and_reports_it():
    out = _plan({"rings": {"rx": 65536, "tx": 4096}}, MLX, cap=True)
    assert [(c.key, c.after) for c in out["plan"]] == [("nic:ens1f0np0:ring.rx", 8192), ("nic:ens1f0np0:ring.tx", 4096)]
    assert out["capped"] == [{"interface": "ens1f0np0", "setting": "rings.rx", "requested": 65536, "applied": 8192}]


def test_management_interface_is_refused_unless_allowed():
    mgmt = _link.management_interfaces(LINKS, "192.168.122.10")
    assert mgmt == ["eth0"]
    with pytest.raises(ValueError, match="eth0 carries the Ansible connection; changing mtu"):
        _plan({"mtu": 9000}, MGMT, mgmt=mgmt)
    assert len(_plan({"mtu": 9000}, MGMT, mgmt=mgmt, allow=True)["plan"]) == 1
    # no change planned for it: nothing to refuse
    assert len(_plan({"mtu": 1500}, MGMT, mgmt=mgmt)["plan"]) == 0
    # persist-only never touches the live link
    assert [c.domain for c in _plan({"mtu": 9000}, MGMT, mgmt=mgmt, mode="persist")["plan"]] == ["file"]


def test_link_file_content():
    out = _plan({"mtu": 9000, "rings": {"rx": 4096}, "channels": {"combined": 8},
                 "coalesce": {"adaptive_rx": False, "rx_usecs": 8}}, MLX, mode="both")
    f = [c for c in out["plan"] if c.domain == "file"][0]
    assert f.key == "file:/etc/systemd/network/10-hpcnet-rdma-ens1f0np0.link"
    body = f.after["content"].split("[Match]\n", 1)[1]
    assert body == ("MACAddress=b8:ce:f6:00:00:01\n\n[Link]\nName=ens1f0np0\nMTUBytes=9000\nRxBufferSize=4096\n"
                    "CombinedChannels=8\nUseAdaptiveRxCoalesce=no\nRxCoalesceSec=8us\n")
    perm = dict(MLX, permaddr="b8:ce:f6:00:00:99")
    f = list(_plan({"mtu": 9000}, perm, mode="persist")["plan"])[0]
    assert "PermanentMACAddress=b8:ce:f6:00:00:99\n" in f.after["content"]
