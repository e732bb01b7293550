# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

import os

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _domain as _nic
from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _guard, _linkfile, _select
from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _plan as _planner
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.modules import nic_tuning

from ....conftest import Failed, FakeModule, fixture, mlx5, veth

J = "/var/lib/hpcnet-rdma"


def NO_ROUTE(address, oif):
    return None, "no route (test)"


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
    assert sorted(_select.select(entries, LINKS)) == selected


def test_later_entries_override_per_setting():
    chosen = _select.select([{"glob": "*", "mtu": 9000, "rings": {"rx": 4096, "tx": 4096}},
                             {"name": "ens1f0np0", "rings": {"rx": 8192, "tx": None}}], LINKS)
    assert chosen["ens1f0np0"]["mtu"] == 9000
    assert chosen["ens1f0np0"]["rings"] == {"rx": 8192, "tx": 4096}
    assert chosen["ens1f0np0"]["selected_by"] == ["glob=*", "name=ens1f0np0"]


def test_defaults_apply_to_every_selection_and_entries_override_them():
    chosen = _select.select([{"driver": "veth"}, {"name": "ens1f0np0", "mtu": 4200, "rings": {"tx": 512}}], LINKS,
                            {"mtu": 9000, "rings": {"rx": 4096, "tx": 4096}})
    assert (chosen["data0"]["mtu"], chosen["data0"]["rings"]) == (9000, {"rx": 4096, "tx": 4096})
    assert (chosen["ens1f0np0"]["mtu"], chosen["ens1f0np0"]["rings"]) == (4200, {"rx": 4096, "tx": 512})


@pytest.mark.parametrize("entries, defaults, observed, kept, dropped", [
    # veth offers channels but no coalescing: the profile's coalescing is skipped, its mtu stays
    ([{"name": "data0"}], {"mtu": 9000, "coalesce": {"adaptive_rx": True}},
     {"driver": "veth", "coalesce": None, "channels": {"max": {"rx": 2}, "current": {"rx": 1}}},
     {"mtu": 9000}, ["coalesce.adaptive_rx"]),
    # a field the driver lacks (maximum 0) goes, the other stays
    ([{"name": "data0"}], {"channels": {"rx": 2, "combined": 4}},
     {"driver": "veth", "channels": {"max": {"rx": 2, "combined": 0}, "current": {"rx": 1, "combined": 0}}},
     {"channels": {"rx": 2}}, ["channels.combined"]),
    # a coalesce field the driver does not report
    ([{"name": "data0"}], {"coalesce": {"adaptive_rx": True, "rx_usecs": 8}},
     {"driver": "veth", "coalesce": {"rx_usecs": 3}}, {"coalesce": {"rx_usecs": 8}}, ["coalesce.adaptive_rx"]),
    # given in the entry too: not the defaults' alone, so it stays (and desired_values refuses it)
    ([{"name": "data0", "coalesce": {"adaptive_rx": True}}], {"coalesce": {"adaptive_rx": True}},
     {"driver": "veth", "coalesce": None}, {"coalesce": {"adaptive_rx": True}}, []),
    # everything supported: nothing dropped
    ([{"name": "data0"}], {"mtu": 9000, "rings": {"rx": 1024}},
     {"driver": "virtio_net", "rings": {"max": {"rx": 1024}, "current": {"rx": 256}}},
     {"mtu": 9000, "rings": {"rx": 1024}}, []),
])
def test_defaults_apply_where_the_nic_allows(entries, defaults, observed, kept, dropped):
    chosen = _select.select(entries, LINKS, defaults)
    out = _select.drop_unsupported_defaults(chosen, {"data0": observed})
    assert [d["setting"] for d in out] == dropped
    assert all(d["interface"] == "data0" and observed["driver"] in d["reason"] for d in out)
    assert dict((k, v) for k, v in chosen["data0"].items() if k not in ("selected_by", "from_defaults")) == kept


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
        _select.select(entries, LINKS)


def _plan(settings, obs, cap=False, mode="runtime", mgmt=(), allow=False, **kw):
    if not isinstance(mgmt, _guard.ManagementPath):
        mgmt = list(mgmt)
    return _planner.plan({obs["name"]: settings}, {obs["name"]: obs}, mode, cap, mgmt, allow, {}, J, **kw)


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
    mgmt = _guard.management_path(LINKS, [_guard.Endpoint("192.168.122.10", "controller", "management_address")],
                                  NO_ROUTE)
    assert list(mgmt.protected) == ["eth0"] and mgmt.determined
    with pytest.raises(ValueError, match="eth0 carries the Ansible connection; changing mtu could cut it off"):
        _plan({"mtu": 9000}, MGMT, mgmt=mgmt)
    assert len(_plan({"mtu": 9000}, MGMT, mgmt=mgmt, allow=True)["plan"]) == 1
    # no change planned for it: nothing to refuse
    assert len(_plan({"mtu": 1500}, MGMT, mgmt=mgmt)["plan"]) == 0
    # persist-only never touches the live link
    assert [c.domain for c in _plan({"mtu": 9000}, MGMT, mgmt=mgmt, mode="persist")["plan"]] == ["file"]


def test_link_file_content():
    ident = dict(MLX, udev_path="pci-0000:3b:00.0", device_driver="mlx5_core", path_unique=True)
    out = _plan({"mtu": 9000, "rings": {"rx": 4096}, "channels": {"combined": 8},
                 "coalesce": {"adaptive_rx": False, "rx_usecs": 8}}, ident, mode="both")
    f = [c for c in out["plan"] if c.domain == "file"][0]
    assert f.key == "file:/etc/systemd/network/10-hpcnet-rdma-ens1f0np0.link"
    body = f.after["content"].split("[Match]\n", 1)[1]
    assert body == ("Path=pci-0000:3b:00.0\nDriver=mlx5_core\n\n[Link]\nName=ens1f0np0\nMTUBytes=9000\n"
                    "RxBufferSize=4096\nCombinedChannels=8\nUseAdaptiveRxCoalesce=no\nRxCoalesceSec=8us\n")
    perm = dict(MLX, permaddr="b8:ce:f6:00:00:99")
    f = [c for c in _plan({"mtu": 9000}, perm, mode="both")["plan"] if c.domain == "file"][0]   # persist alone refuses a MAC
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


def test_observe_identity_and_shared_paths(tmp_path):
    root = tmp_path / "root"

    def put(path, text):
        full = root / path.lstrip("/")
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(text)

    put("/run/udev/data/n2", "I:1234\nE:ID_NET_DRIVER=mlx5_core\nE:ID_PATH=pci-0000:3b:00.0\nE:ID_PATH_TAG=pci-0000_3b_00_0\n")
    put("/sys/devices/pci0000:3a/0000:3b:00.0/driver-target", "")
    for name, dev in (("ens1f0np0", "0000:3b:00.0"), ("pf0vf0", "0000:3b:00.0"), ("ens2", "0000:5e:00.0")):
        put("/sys/class/net/%s/addr_assign_type" % name, "0\n")
        put("/sys/class/net/%s/address" % name, "b8:ce:f6:00:00:01\n")
        os.symlink("../../../devices/pci0000:3a/" + dev, str(root / "sys/class/net" / name / "device"))
    os.makedirs(str(root / "sys/bus/pci/drivers/mlx5_core"))
    os.symlink("../../../../bus/pci/drivers/mlx5_core", str(root / "sys/devices/pci0000:3a/0000:3b:00.0/driver"))
    put("/sys/class/net/data0/addr_assign_type", "1\n")          # veth: random address, no device
    host = Host(root=str(root), environ={})
    ident = _nic.observe_identity(host, "ens1f0np0", 2)
    assert ident == {"udev_path": "pci-0000:3b:00.0", "device_driver": "mlx5_core", "permanent_mac": "b8:ce:f6:00:00:01"}
    assert _nic.observe_identity(host, "data0", 9) == {"udev_path": None, "device_driver": None, "permanent_mac": None}
    observed = {"ens1f0np0": dict(ident), "ens2": {}}
    _nic.mark_shared_paths(host, observed, {"ens1f0np0": {}, "pf0vf0": {}, "ens2": {}, "data0": {}})
    assert observed["ens1f0np0"]["path_unique"] is False and observed["ens2"]["path_unique"] is True


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


# ---------------------------------------------------------------------- MTU floors

@pytest.mark.parametrize("mtu, obs, kw, message", [
    (1000, dict(VETH, addresses=VETH["addresses"] + [{"family": "inet6", "local": "fe80::1", "prefixlen": 64}]), {},
     r"data0 mtu=1000 is below 1280, the IPv6 minimum MTU \(RFC 8200\), and data0 has IPv6 configured "
     r"\(fe80::1\): the kernel would drop its IPv6 addresses"),
    (500, VETH, {}, r"data0 mtu=500 is below 576, .*set allow_low_mtu: true"),
    (100, VETH, {"mode": "persist"}, "below 576"),     # input, checked in every mode
])
def test_low_mtu_is_refused_naming_the_reason(mtu, obs, kw, message):
    with pytest.raises(ValueError, match=message):
        _plan({"mtu": mtu}, obs, **kw)


def test_low_mtu_allowed_where_nothing_breaks():
    v6 = dict(VETH, addresses=[{"family": "inet6", "local": "fe80::1", "prefixlen": 64}])
    assert [c.after for c in _plan({"mtu": 500}, VETH, allow_low_mtu=True)["plan"]] == [500]
    assert [c.after for c in _plan({"mtu": 1279}, VETH)["plan"]] == [1279]          # IPv4 only
    # persist only: this node's addresses say nothing about the node the file boots on
    assert [c.domain for c in _plan({"mtu": 1000}, v6, mode="persist")["plan"]] == ["file"]
    with pytest.raises(ValueError, match="IPv6 minimum"):
        _plan({"mtu": 1000}, v6, allow_low_mtu=True)


# ---------------------------------------------------------------------- one interface, two entries

@pytest.mark.parametrize("entries, message", [
    ([{"name": "data0", "mtu": 9000}, {"name": "data0", "mtu": 1500}],
     r"interfaces\[0\] \(name=data0\) and interfaces\[1\] \(name=data0\) both select data0 with a different mtu "
     r"\(9000, then 1500\)"),
    ([{"glob": "*", "mtu": 9000}, {"driver": "veth", "mtu": 1500}],
     r"interfaces\[0\] \(glob=\*\) and interfaces\[1\] \(driver=veth\) both select data0 with a different mtu"),
    ([{"name": "data0", "rings": {"rx": 512}}, {"subnet": "10.77.0.0/24", "rings": {"rx": 256}}],
     r"interfaces\[0\] \(name=data0\) and interfaces\[1\] \(subnet=10.77.0.0/24\) both select data0 with a "
     r"different rings.rx \(512, then 256\)"),
    ([{"driver": "veth", "coalesce": {"adaptive_rx": True}}, {"glob": "data*", "coalesce": {"adaptive_rx": False}}],
     "different coalesce.adaptive_rx"),
])
def test_one_interface_given_conflicting_values_names_both_entries(entries, message):
    with pytest.raises(ValueError, match=message):
        _select.select(entries, LINKS)


def test_agreeing_entries_and_name_refinements_are_fine():
    chosen = _select.select([{"name": "data0", "mtu": 9000}, {"glob": "data*", "mtu": 9000, "rings": {"rx": 1}}], LINKS)
    assert (chosen["data0"]["mtu"], chosen["data0"]["rings"]) == (9000, {"rx": 1})
    chosen = _select.select([{"glob": "*", "mtu": 9000}, {"name": "data0", "mtu": 1500},
                             {"driver": "mlx5_core", "mtu": 9000}], LINKS)
    assert [chosen[n]["mtu"] for n in ("data0", "ens1f0np0", "eth0")] == [1500, 9000, 9000]


# ---------------------------------------------------------------------- the management path

def network(link_fixture, addr_fixture=None):
    """``read_network`` of a node whose ip prints the given recorded outputs."""
    def runner(argv):
        if "link" in argv:
            return 0, fixture(link_fixture), ""
        if "addr" in argv:
            return 0, fixture(addr_fixture) if addr_fixture else "[]", ""
        return 1, "", "unexpected %r" % argv
    return _nic.read_network(Host(root="/nonexistent", runner=runner, bin_path=lambda n: "/sbin/" + n, environ={}))


BRIDGED = network("ip-link.bridge-macvlan.captured.json", "ip-addr.bridge-macvlan.captured.json")
ROUTES = {("10.9.0.5", None): {"dev": "br0", "type": None}, ("198.51.100.1", None): {"dev": "br0", "type": None},
          ("10.9.2.7", None): {"dev": "mv0", "type": None}, ("fe80::1", "mv0"): {"dev": "mv0", "type": None},
          ("127.0.0.1", None): {"dev": "lo", "type": "local"}}


def route(address, oif):
    found = ROUTES.get((address, oif))
    return (found, "") if found else (None, "RTNETLINK answers: Network is unreachable")


def path(*endpoints, required=True):
    return _guard.management_path(BRIDGED, [_guard.Endpoint(*e) for e in endpoints], route, required)


SSH = "SSH_CONNECTION"


@pytest.mark.parametrize("endpoints, protected", [
    # the address sits on a bridge: the bridge, its port, and the port's veth peer are under it
    ([("10.9.0.1", "node", SSH), ("10.9.0.5", "peer", SSH)], ["br0", "v0", "v1"]),
    # a macvlan carries it: its lower device is under it (and that veth's peer)
    ([("10.9.2.1", "node", SSH)], ["mv0", "v0", "v1"]),
    # link-local with the node's zone, or without it (read from the sshd socket): compared as addresses
    ([("fe80::aa%mv0", "node", SSH), ("fe80::1%mv0", "peer", SSH)], ["mv0", "v0", "v1"]),
    ([("fe80:0:0::aa", "node", "the connection of sshd (pid 9)")], ["mv0", "v0", "v1"]),
    # an IPv4 connection on a dual-stack socket, as /proc/net/tcp6 shows it
    ([("::ffff:10.9.0.1", "node", "the connection of sshd (pid 9)")], ["br0", "v0", "v1"]),
    # the controller's ansible_host: held here, or NATed and reached by a route
    ([("10.9.2.1", "controller", "management_address")], ["mv0", "v0", "v1"]),
    ([("198.51.100.1", "controller", "management_address")], ["br0", "v0", "v1"]),
    # the route back to the SSH client alone
    ([("10.9.2.7", "peer", SSH)], ["mv0", "v0", "v1"]),
    # ssh to the node from itself: determined, no NIC
    ([("127.0.0.1", "node", SSH), ("127.0.0.1", "peer", SSH)], []),
])
def test_management_path(endpoints, protected):
    mgmt = path(*endpoints)
    assert mgmt.determined
    assert sorted(mgmt.protected) == protected


def test_management_path_says_why():
    mgmt = path(("10.9.0.1", "node", SSH))
    assert mgmt.protected["br0"] == "holds 10.9.0.1 (SSH_CONNECTION: the node's end)"
    assert mgmt.protected["v0"] == ("is the veth peer of v1, which is a port of br0, which holds 10.9.0.1 "
                                    "(SSH_CONNECTION: the node's end)")
    with pytest.raises(ValueError) as e:
        _planner.plan({"v0": {"mtu": 1500}}, {"v0": dict(BRIDGED["v0"], driver="veth")}, "runtime", False, mgmt,
                      False, {}, J, net=BRIDGED)
    assert str(e.value) == (
        "interfaces: v0 carries the Ansible connection; changing mtu could cut it off (v0 is the veth peer of v1, "
        "which is a port of br0, which holds 10.9.0.1 (SSH_CONNECTION: the node's end)). "
        "Set allow_management_interface: true to proceed")


@pytest.mark.parametrize("endpoints, note", [
    ([], None),
    ([("127.0.0.1", "controller", "management_address")], "is a loopback address of the controller"),
    ([("node1.cluster", "controller", "management_address")], "node1.cluster (management_address: the address Ansible "
                                                              "connects to) is not an IP address"),
    ([("203.0.113.9", "controller", "management_address")], "no route to 203.0.113.9"),
    ([("10.9.9.9", "node", SSH), ("203.0.113.9", "peer", SSH)], "no interface holds it"),
    ([("fe80::5", "peer", SSH)], "is link-local without an interface"),
])
def test_management_path_undetermined(endpoints, note):
    mgmt = path(*endpoints)
    assert not mgmt.determined and mgmt.protected == {}
    if note:
        assert any(note in n for n in mgmt.notes), mgmt.notes
    obs = {"data0": VETH}
    with pytest.raises(ValueError, match="cannot tell which interface carries the Ansible connection"):
        _planner.plan({"data0": {"mtu": 9000}}, obs, "runtime", False, mgmt, False, {}, J)
    # the controller said the connection does not use this node's network
    mgmt.required = False
    assert len(_planner.plan({"data0": {"mtu": 9000}}, obs, "both", False, mgmt, False, {}, J)["plan"]) == 2
    # nothing to change at runtime: nothing to refuse, whatever the path
    mgmt.required = True
    assert len(_planner.plan({"data0": {"mtu": 1500}}, obs, "runtime", False, mgmt, False, {}, J)["plan"]) == 0
    assert len(_planner.plan({"data0": {"mtu": 9000}}, obs, "persist", False, mgmt, False, {}, J)["plan"]) == 1
    assert len(_planner.plan({"data0": {"mtu": 9000}}, obs, "runtime", False, mgmt, True, {}, J)["plan"]) == 1


# ---------------------------------------------------------------------- the sshd parent when SSH_CONNECTION is gone

def fake_proc(root, sshd_ns="net:[4026531840]", comm="sshd"):
    """python (300) <- sudo (200) <- sshd (100) <- systemd (1); sshd's socket 418952 is the
    connection in the captured /proc/net/tcp (127.0.0.1:2222 <- 127.0.0.1:56060)."""
    chain = [("300", "200", "python3"), ("200", "100", "sudo"), ("100", "1", comm), ("1", "0", "systemd")]
    for pid, ppid, name in chain:
        d = root / "proc" / pid
        (d / "fd").mkdir(parents=True)
        (d / "ns").mkdir()
        (d / "status").write_text("Name:\t%s\nPPid:\t%s\n" % (name, ppid))
        (d / "comm").write_text(name + "\n")
        os.symlink(sshd_ns if pid == "100" else "net:[4026531840]", str(d / "ns" / "net"))
    os.symlink("300", str(root / "proc" / "self"))
    os.symlink("socket:[418952]", str(root / "proc/100/fd/4"))
    os.symlink("/dev/null", str(root / "proc/100/fd/0"))
    (root / "proc/100/net").mkdir()
    (root / "proc/100/net/tcp").write_text(fixture("proc-net-tcp.captured.txt"))


def test_sshd_parent_gives_the_connection_when_become_dropped_the_environment(tmp_path):
    fake_proc(tmp_path)
    host = Host(root=str(tmp_path), environ={})
    assert _guard.sshd_connections(host) == ([("127.0.0.1", "127.0.0.1", "the connection of sshd (pid 100)")], "")
    endpoints, notes = _guard.connection_endpoints(host, "10.9.0.1")
    assert [(e.address, e.side) for e in endpoints] == [("127.0.0.1", "node"), ("127.0.0.1", "peer"),
                                                        ("10.9.0.1", "controller")]
    assert notes == ["no SSH_CONNECTION in the module's environment"]
    # SSH_CONNECTION, when there, is used as it is
    host = Host(root=str(tmp_path), environ={"SSH_CONNECTION": "fe80::1%mgmt0 50000 fe80::2%mgmt0 22"})
    endpoints, notes = _guard.connection_endpoints(host, None)
    assert [(e.address, e.side) for e in endpoints] == [("fe80::2%mgmt0", "node"), ("fe80::1%mgmt0", "peer")]
    assert notes == ["management_address not given"]


@pytest.mark.parametrize("kw, reason", [
    ({"sshd_ns": "net:[4026532000]"}, "the sshd parent (pid 100) is in another network namespace"),
    ({"comm": "bash"}, "no sshd among the module's parent processes"),
])
def test_sshd_parent_elsewhere_tells_nothing(tmp_path, kw, reason):
    fake_proc(tmp_path, **kw)
    assert _guard.sshd_connections(Host(root=str(tmp_path), environ={})) == ([], reason)


# ---------------------------------------------------------------------- devices stacked on a tuned NIC

VLANS = network("ip-link.vlan.json")


def _obs(name, net, **kw):
    return dict(net[name], driver=net[name].get("kind") or "mlx5_core", rings=None, channels=None, coalesce=None, **kw)


def test_lowering_a_nic_journals_the_vlan_it_drags_down():
    out = _planner.plan({"ens1f0np0": {"mtu": 4000}}, {"ens1f0np0": _obs("ens1f0np0", VLANS)}, "runtime", False, [],
                        False, {}, J, net=VLANS)
    assert [(c.key, c.before, c.after) for c in out["plan"]] == [
        ("nic:ens1f0np0.100:mtu", 9000, 4000), ("nic:ens1f0np0:mtu", 9000, 4000)]
    assert out["previous"]["nic:ens1f0np0.100:mtu"] == 9000
    assert out["dragged"] == {"ens1f0np0": ["ens1f0np0.100"]}
    # raising it drags nothing (the kernel never raises a VLAN's MTU)
    out = _planner.plan({"bond0": {"mtu": 9000}}, {"bond0": _obs("bond0", VLANS)}, "runtime", False, [], False, {}, J,
                        net=VLANS)
    assert [c.key for c in out["plan"]] == [] and out["dragged"] == {}


def test_macvlan_on_a_veth_is_dragged_too():
    net = dict(BRIDGED, mv0=dict(BRIDGED["mv0"], mtu=9000))
    out = _planner.plan({"v0": {"mtu": 1500}}, {"v0": _obs("v0", net)}, "runtime", False, [], False, {}, J, net=net)
    assert [(c.key, c.after) for c in out["plan"]] == [("nic:mv0:mtu", 1500), ("nic:v0:mtu", 1500)]


def test_stacked_mtu_order_holds_while_applying_and_rolling_back():
    net = dict(VLANS, **{"ens1f0np0.100": dict(VLANS["ens1f0np0.100"], mtu=1500),
                         "ens1f0np0": dict(VLANS["ens1f0np0"], mtu=1500)})
    chosen = {"ens1f0np0.100": {"mtu": 9000}, "ens1f0np0": {"mtu": 9000}}
    observed = dict((n, _obs(n, net)) for n in chosen)
    out = _planner.plan(chosen, observed, "runtime", False, [], False, {}, J, net=net)
    # up: the lower device first (a VLAN cannot exceed it); rollback replays in reverse, VLAN first
    assert [c.key for c in out["plan"]] == ["nic:ens1f0np0:mtu", "nic:ens1f0np0.100:mtu"]
    observed = dict((n, _obs(n, VLANS)) for n in chosen)
    chosen = {"ens1f0np0.100": {"mtu": 1500}, "ens1f0np0": {"mtu": 1500}}
    out = _planner.plan(chosen, observed, "runtime", False, [], False, {}, J, net=VLANS)
    assert [c.key for c in out["plan"]] == ["nic:ens1f0np0.100:mtu", "nic:ens1f0np0:mtu"]


def test_stacked_devices_refuse_what_the_kernel_would():
    chosen = {"ens1f0np0.100": {"mtu": 9000}, "ens1f0np0": {"mtu": 4000}}
    observed = dict((n, _obs(n, VLANS)) for n in chosen)
    with pytest.raises(ValueError, match=r"ens1f0np0.100 mtu=9000 is above 4000, the MTU of ens1f0np0, the vlan's "
                                         r"lower device \(after this call\)"):
        _planner.plan(chosen, observed, "runtime", False, [], False, {}, J, net=VLANS)
    v6 = dict(VLANS, **{"ens1f0np0.100": dict(VLANS["ens1f0np0.100"], addresses=[
        {"family": "inet6", "local": "fd00:100::5", "prefixlen": 64}])})
    with pytest.raises(ValueError, match=r"ens1f0np0 mtu=1200 is below 1280, the IPv6 minimum MTU \(RFC 8200\), and "
                                         r"ens1f0np0.100 \(vlan on ens1f0np0, which the kernel lowers with it\) has "
                                         r"IPv6 configured \(fd00:100::5\)"):
        _planner.plan({"ens1f0np0": {"mtu": 1200}}, {"ens1f0np0": _obs("ens1f0np0", v6)}, "runtime", False, [], False,
                      {}, J, net=v6)


# ---------------------------------------------------------------------- the module, on a fake node

def run_nic(node, check=False, **params):
    return nic_tuning.run(FakeModule(nic_tuning.ARGUMENT_SPEC, params, check_mode=check), node.host())


def test_module_refuses_when_the_connection_path_is_unknown(node):
    node.add_nic(veth(addresses=[("10.77.0.1", 24)]))
    before = node.snapshot()
    for check in (True, False):
        with pytest.raises(Failed, match=r"cannot tell which interface carries the Ansible connection \(no "
                                         r"SSH_CONNECTION in the module's environment; no sshd among the module's "
                                         r"parent processes; management_address not given\), so changing mtu of data0"):
            run_nic(node, check=check, interfaces=[{"name": "data0", "mtu": 9000}])
    assert node.snapshot() == before
    out = run_nic(node, interfaces=[{"name": "data0", "mtu": 9000}], management_connection="none")
    assert out["changed"] and node.nics["data0"].mtu == 9000
    assert out["management"] == {"interfaces": {}, "determined": False, "notes": [
        "no SSH_CONNECTION in the module's environment", "no sshd among the module's parent processes",
        "management_address not given"]}


def test_module_protects_what_management_address_names(node):
    node.add_nic(veth(addresses=[("10.77.0.1", 24)]))
    node.add_nic(mlx5(addresses=[("10.10.0.5", 16)]))
    before = node.snapshot()
    with pytest.raises(Failed, match="data0 carries the Ansible connection; changing mtu could cut it off"):
        run_nic(node, interfaces=[{"name": "data0", "mtu": 9000}], management_address="10.77.0.1")
    assert node.snapshot() == before
    out = run_nic(node, interfaces=[{"name": "ens1f0np0", "mtu": 9000}], management_address="10.77.0.1")
    assert out["changed"] and node.nics["ens1f0np0"].mtu == 9000 and node.nics["data0"].mtu == 1500


def test_module_warns_about_an_earlier_link_file(node):
    node.add_nic(veth(addresses=[("10.77.0.1", 24)]))
    node.write("/etc/systemd/network/00-site.link", "[Match]\nOriginalName=data*\n\n[Link]\nMTUBytes=1500\n")
    m = FakeModule(nic_tuning.ARGUMENT_SPEC, {"interfaces": [{"name": "data0", "mtu": 9000}], "mode": "persist"})
    nic_tuning.run(m, node.host())
    assert len(m.warnings) == 1 and m.warnings[0].startswith(
        "/etc/systemd/network/00-site.link sorts before 10-hpcnet-rdma-data0.link and matches data0 (OriginalName=data*)")
    assert "[Match]\nOriginalName=data0\n" in node.read("/etc/systemd/network/10-hpcnet-rdma-data0.link")


def test_a_device_given_its_own_mtu_is_not_dragged_nor_what_sits_on_it():
    """NIC 9000 -> 4000, macvlan on it 9000 -> 2000 (its own), VLAN on the macvlan 9000: the VLAN
    follows the macvlan (2000), planned once, topmost first."""
    net = {
        "eth1": dict(VLANS["ens1f0np0"], name="eth1", mtu=9000),
        "mv1": dict(VLANS["ens1f0np0.100"], name="mv1", kind="macvlan", link="eth1", mtu=9000),
        "mv1.7": dict(VLANS["ens1f0np0.100"], name="mv1.7", kind="vlan", link="mv1", mtu=9000),
    }
    chosen = {"eth1": {"mtu": 4000}, "mv1": {"mtu": 2000}}
    observed = dict((n, _obs(n, net)) for n in chosen)
    out = _planner.plan(chosen, observed, "runtime", False, [], False, {}, J, net=net)
    assert [(c.key, c.after) for c in out["plan"]] == [
        ("nic:mv1.7:mtu", 2000), ("nic:mv1:mtu", 2000), ("nic:eth1:mtu", 4000)]
    assert out["dragged"] == {"mv1": ["mv1.7"]}
