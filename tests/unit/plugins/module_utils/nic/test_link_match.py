# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""How a persisted .link file matches its NIC (nic_tuning ``match``), and persist-only mode (an
image bake) planning files for NICs that are not present - never by a MAC address seen there."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _linkfile, _select
from ansible_collections.hpcnet.rdma.plugins.modules import nic_tuning

from ....conftest import Failed, FakeModule, mlx5, veth

J = "/var/lib/hpcnet-rdma"
MLX = {"name": "ens1f0np0", "driver": "mlx5_core", "device_driver": "mlx5_core", "udev_path": "pci-0000:3b:00.0",
       "path_unique": True, "permaddr": None, "permanent_mac": "b8:ce:f6:00:00:01"}
NO_UDEV = dict(MLX, udev_path=None)               # a chroot or a container: no udev database
SHARED = dict(MLX, path_unique=False)              # two netdevs on one PCI function
VETH = {"name": "data0", "driver": "veth", "permaddr": None}


@pytest.mark.parametrize("obs, match, value, persist_only, lines, driver", [
    # auto: today's choice, live or persisted
    (MLX, "auto", None, False, ["Path=pci-0000:3b:00.0", "Driver=mlx5_core"], None),
    (MLX, "auto", None, True, ["Path=pci-0000:3b:00.0", "Driver=mlx5_core"], None),
    (NO_UDEV, "auto", None, False, ["PermanentMACAddress=b8:ce:f6:00:00:01"], None),
    (VETH, "auto", None, True, ["OriginalName=data0"], None),
    # path: the slot, read or given
    (MLX, "path", None, True, ["Path=pci-0000:3b:00.0", "Driver=mlx5_core"], None),
    # a given path is the target nodes': nothing of this node's device is added to it
    (NO_UDEV, "path", "pci-0000:af:00.1", True, ["Path=pci-0000:af:00.1"], None),
    (SHARED, "path", "pci-0000:3b:00.0", False, ["Path=pci-0000:3b:00.0"], None),
    ({}, "path", "pci-0000:3b:00.0", True, ["Path=pci-0000:3b:00.0"], None),
    # driver: one file for the driver
    (MLX, "driver", None, True, ["Driver=mlx5_core"], "mlx5_core"),
    (VETH, "driver", None, False, ["Driver=veth"], "veth"),
    ({}, "driver", "ice", True, ["Driver=ice"], "ice"),
    # original_name: the kernel's name, the selected one unless given
    (MLX, "original_name", None, True, ["OriginalName=ens1f0np0"], None),
    ({}, "original_name", "eth1", True, ["OriginalName=eth1"], None),
    # mac: explicit, live only
    (NO_UDEV, "mac", None, False, ["PermanentMACAddress=b8:ce:f6:00:00:01"], None),
])
def test_match_lines(obs, match, value, persist_only, lines, driver):
    assert _linkfile.match_lines(obs.get("name", "ens1f0np0"), obs, match, value, persist_only) == (lines, driver)


@pytest.mark.parametrize("obs, match, value, persist_only, message", [
    # a bake never matches by the bake host's MAC
    (NO_UDEV, "auto", None, True, r"permanent MAC address \(b8:ce:f6:00:00:01\), which only this node has.*"
                                  r"set match: path"),
    (NO_UDEV, "mac", None, True, "match: mac matches this node's NIC only"),
    (VETH, "mac", None, False, "no permanent MAC address"),
    # not present: nothing to read
    ({}, "auto", None, True, "is not present here.*set match: original_name"),
    ({}, "path", None, True, "the interface is not present here; give match_value"),
    ({}, "driver", None, True, "unknown .the interface is not present here.; give match_value"),
    (NO_UDEV, "path", None, True, "no udev database"),
    (SHARED, "path", None, False, "would match them all"),
    # match_value only where it means something, and well-formed
    (MLX, "auto", "x", False, "match_value 'x' needs match path, driver or original_name"),
    (MLX, "mac", "x", False, "match_value 'x' needs match path"),
    (MLX, "driver", "a/b", True, "'a/b' is not a driver name"),
    (MLX, "original_name", " ", True, "is not an interface name"),
    (MLX, "sometimes", None, True, "match 'sometimes' is not one of auto, path, driver, original_name, mac"),
])
def test_match_lines_refused(obs, match, value, persist_only, message):
    with pytest.raises(ValueError, match=message):
        _linkfile.match_lines("ens1f0np0", obs, match, value, persist_only)


def _nic(node, check=False, **params):
    params.setdefault("journal_dir", node.path(J))
    params.setdefault("management_connection", "none")
    return nic_tuning.run(FakeModule(nic_tuning.ARGUMENT_SPEC, params, check_mode=check), node.host())


@pytest.mark.parametrize("params, files", [
    # no NIC here at all: name + original_name / path with the slot; driver + driver
    ({"interfaces": [{"name": "data0", "match": "original_name", "match_value": "eth1", "mtu": 9000}]},
     {"/etc/systemd/network/10-hpcnet-rdma-data0.link":
      "[Match]\nOriginalName=eth1\n\n[Link]\nName=data0\nMTUBytes=9000\n"}),
    ({"interfaces": [{"name": "ens1f0np0", "match": "path", "match_value": "pci-0000:3b:00.0",
                      "rings": {"rx": 8192}}]},
     {"/etc/systemd/network/10-hpcnet-rdma-ens1f0np0.link": "[Match]\nPath=pci-0000:3b:00.0\n\n[Link]\n"
                                                            "Name=ens1f0np0\nRxBufferSize=8192\n"}),
    ({"interfaces": [{"driver": "mlx5_core", "match": "driver", "mtu": 9000}], "defaults": {"rings": {"rx": 4096}}},
     {"/etc/systemd/network/20-hpcnet-rdma-driver-mlx5_core.link":
      "[Match]\nDriver=mlx5_core\n\n[Link]\n" + "".join(x + "\n" for x in _linkfile.DEFAULT_NAMING) +
      "MTUBytes=9000\nRxBufferSize=4096\n"}),
    # module-level match serves every entry; an entry's own wins
    ({"match": "driver", "interfaces": [{"driver": "ice", "mtu": 9000},
                                        {"name": "ens2", "match": "original_name", "mtu": 4200}]},
     {"/etc/systemd/network/20-hpcnet-rdma-driver-ice.link":
      "[Match]\nDriver=ice\n\n[Link]\n" + "".join(x + "\n" for x in _linkfile.DEFAULT_NAMING) + "MTUBytes=9000\n",
      "/etc/systemd/network/10-hpcnet-rdma-ens2.link": "[Match]\nOriginalName=ens2\n\n[Link]\nName=ens2\n"
                                                       "MTUBytes=4200\n"}),
])
def test_persist_plans_link_files_for_absent_nics(node, params, files):
    out = _nic(node, mode="persist", **params)
    assert out["changed"]
    got = {}
    for path in files:
        text = node.read(path)
        assert text is not None, path
        got[path] = text.split("[Match]\n", 1)[1]
        assert text.startswith("# Managed by hpcnet.rdma")
    assert got == dict((p, t.split("[Match]\n", 1)[1]) for p, t in files.items())
    assert sorted(c["key"] for c in out["changes"] if c["key"].startswith("file:")) == sorted("file:" + p for p in files)
    assert all(not i.get("present", True) for i in out["interfaces"].values())
    assert node.calls and all(c[:2] == ["ip", "-j"] for c in node.calls)   # read the links, changed none


@pytest.mark.parametrize("params, message", [
    ({"interfaces": [{"name": "data0", "mtu": 9000}]}, "data0 is not present here.*set match"),
    ({"interfaces": [{"driver": "mlx5_core", "mtu": 9000}]},
     "no interface of driver mlx5_core is present here.*set match: driver"),
    ({"interfaces": [{"driver": "mlx5_core", "match": "original_name", "mtu": 9000}]}, "set match: driver"),
    ({"interfaces": [{"glob": "ens*", "match": "driver", "mtu": 9000}]}, "glob and subnet need the interfaces"),
    ({"interfaces": [{"subnet": "10.0.0.0/8", "match": "driver"}]}, "glob and subnet need the interfaces"),
    ({"interfaces": [{"name": "data0", "match": "path", "mtu": 9000}]}, "give match_value"),
    ({"interfaces": [{"name": "data0", "match": "mac", "mtu": 9000}]}, "match: mac matches this node's NIC only"),
    ({"interfaces": [{"name": "data0", "match": "original_name", "mtu": 70000}]}, "outside 68..65535"),
    ({"interfaces": [{"name": "data0", "match": "original_name", "mtu": 500}]}, "below 576"),
    ({"interfaces": [{"name": "data0", "match": "original_name", "rings": {"rx": 0}}]}, "rings.rx=0 is invalid"),
    ({"interfaces": [{"driver": "ice", "match": "driver", "mtu": 9000},
                     {"name": "eth1", "match": "driver", "match_value": "ice", "mtu": 1500}]},
     "both match by driver ice.*want different settings"),
    ({"interfaces": [{"driver": "ice", "match": "driver", "mtu": 9000},
                     {"driver": "ice", "match": "path", "match_value": "pci-0000:3b:00.0"}]},
     "give driver=ice a different match"),
])
def test_persist_refuses_what_cannot_match_elsewhere_and_changes_nothing(node, params, message):
    before = node.snapshot()
    with pytest.raises(Failed, match=message):
        _nic(node, mode="persist", **params)
    assert node.snapshot() == before


@pytest.mark.parametrize("mode", ["both", "runtime"])
def test_absent_nics_stay_an_error_when_the_node_is_live(node, mode):
    with pytest.raises(Failed, match="unknown interface 'data0'"):
        _nic(node, mode=mode, interfaces=[{"name": "data0", "match": "original_name", "mtu": 9000}])


def test_bake_host_mac_is_never_persisted(node):
    """A NIC the bake host has, without udev data (a chroot): auto refuses its MAC; a chosen match works."""
    node.add_nic(mlx5(addresses=[]))
    node.write("/sys/class/net/ens1f0np0/addr_assign_type", "0\n")
    node.write("/sys/class/net/ens1f0np0/address", "b8:ce:f6:00:00:01\n")
    with pytest.raises(Failed, match="permanent MAC address .b8:ce:f6:00:00:01."):
        _nic(node, mode="persist", interfaces=[{"name": "ens1f0np0", "mtu": 9000}])
    out = _nic(node, mode="persist", match="driver", interfaces=[{"name": "ens1f0np0", "mtu": 9000}])
    text = node.read("/etc/systemd/network/20-hpcnet-rdma-driver-mlx5_core.link")
    assert "Driver=mlx5_core\n" in text and "b8:ce" not in text and "Name=" not in text.replace("NamePolicy", "")
    assert out["interfaces"]["ens1f0np0"]["values"] == {"mtu": 9000}
    assert node.nics["ens1f0np0"].mtu == 1500          # persist: nothing live


def test_live_mode_keeps_auto_and_takes_match(node):
    node.add_nic(veth(addresses=[("10.77.0.1", 24)]))
    _nic(node, mode="both", interfaces=[{"name": "data0", "mtu": 9000}])
    assert "OriginalName=data0\n" in node.read("/etc/systemd/network/10-hpcnet-rdma-data0.link")
    out = _nic(node, mode="both", interfaces=[{"name": "data0", "mtu": 9000, "match": "driver"}])
    # the driver's file; the interface's own file of the first call is not this call's (release_scope returns it)
    assert [c["key"] for c in out["changes"]] == ["file:/etc/systemd/network/20-hpcnet-rdma-driver-veth.link"]
    assert "Driver=veth\n" in node.read("/etc/systemd/network/20-hpcnet-rdma-driver-veth.link")


@pytest.mark.parametrize("entries, match", [
    ([{"glob": "*", "match": "driver"}, {"name": "data0", "match": "original_name"}], ("original_name", None)),
    ([{"name": "data0", "match": "path", "match_value": "pci-0000:00:05.0"}], ("path", "pci-0000:00:05.0")),
    ([{"glob": "*"}], None),
])
def test_select_records_the_entry_match(entries, match):
    links = {"data0": {"name": "data0", "driver": "veth"}, "eth0": {"name": "eth0", "driver": "virtio_net"}}
    assert _select.select(entries, links)["data0"].get("match") == match
