# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parsers of the RDMA stack and fabric facts against recorded outputs (fixtures/README.md)."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils import _parse, _pkg, _rdma

from .conftest import fixture


def test_ibv_devinfo_verbose_rxe():
    dev = _parse.parse_ibv_devinfo_verbose(fixture("ibv_devinfo-v.rxe.txt"))["rxe0"]
    assert dev["transport"] == "InfiniBand" and dev["phys_port_cnt"] == 1 and dev["fw_ver"] == "0.0.0"
    port = dev["ports"][1]
    assert port["state"] == "PORT_ACTIVE" and port["phys_state"] == "LINK_UP"
    assert (port["max_mtu"], port["active_mtu"], port["link_layer"]) == (4096, 4096, "Ethernet")
    assert port["gids"] == [{"index": 0, "gid": "fe80::5054:ff:fe12:3401", "type": "RoCE v2"},
                            {"index": 1, "gid": "::ffff:10.77.0.1", "type": "RoCE v2"}]


def test_ibv_devinfo_verbose_rxe_captured_in_the_vm_lab():
    dev = _parse.parse_ibv_devinfo_verbose(fixture("ibv_devinfo-v.rxe.vm.captured.txt"))["rxe0"]
    port = dev["ports"][1]
    assert (dev["transport"], dev["fw_ver"], port["state"], port["phys_state"]) == (
        "InfiniBand", "0.0.0", "PORT_ACTIVE", "LINK_UP")
    assert (port["max_mtu"], port["active_mtu"], port["link_layer"]) == (4096, 1024, "Ethernet")
    assert port["gids"] == [{"index": 0, "gid": "fe80::5054:ff:fea1:2", "type": "RoCE v2"},
                            {"index": 1, "gid": "::ffff:10.77.0.2", "type": "RoCE v2"}]
    assert _parse.parse_rdma_link_json(fixture("rdma-link.rxe.vm.captured.json")) == [
        {"device": "rxe0", "port": 1, "state": "ACTIVE", "physical_state": "LINK_UP", "netdev": "data0",
         "netdev_index": 3}]


def test_ibv_devinfo_verbose_mlx5_two_devices():
    devs = _parse.parse_ibv_devinfo_verbose(fixture("ibv_devinfo-v.mlx5_core.txt"))
    assert sorted(devs) == ["mlx5_0", "mlx5_1"]
    up, down = devs["mlx5_0"]["ports"][1], devs["mlx5_1"]["ports"][1]
    assert devs["mlx5_0"]["board_id"] == "MT_0000000359" and devs["mlx5_0"]["vendor_part_id"] == "4125"
    assert (up["active_width"], up["active_speed"], up["active_mtu"]) == ("4X", "25.0 Gbps", 4096)
    assert [g["type"] for g in up["gids"]] == ["RoCE v1", "RoCE v2", "RoCE v1", "RoCE v2"]
    assert up["gids"][3]["gid"] == "::ffff:10.10.0.11"
    assert (down["state"], down["phys_state"], down["active_mtu"], down["gids"]) == ("PORT_DOWN", "DISABLED", 1024, [])


def test_ibv_devinfo_plain_output_parses_too():
    port = _parse.parse_ibv_devinfo_verbose(fixture("ibv_devinfo.rxe.txt"))["rxe0"]["ports"][1]
    assert port["active_mtu"] == 1024 and port["gids"] == []


@pytest.mark.parametrize("text, message", [
    ("", "empty output"),
    ("no devices were found\n", "no 'hca_id:' line"),
    ("hca_id:\tx\n\t\tport:\t1\n\t\t\tactive_mtu:\t4096 (3)\n", "must read like '4096 \\(5\\)'"),
    ("hca_id:\tx\n\t\tport:\tone\n", "bad port number"),
])
def test_ibv_devinfo_malformed(text, message):
    with pytest.raises(_parse.ParseError, match=message):
        _parse.parse_ibv_devinfo_verbose(text)


def test_ibstat():
    cas = _parse.parse_ibstat(fixture("ibstat.mlx5_core.ib.txt"))
    assert sorted(cas) == ["mlx5_0", "mlx5_1"]
    assert cas["mlx5_0"]["firmware_version"] == "20.31.1014" and cas["mlx5_0"]["number_of_ports"] == 1
    assert cas["mlx5_0"]["ports"][1] == {"state": "Active", "physical_state": "LinkUp", "rate": 200, "base_lid": 12,
                                         "lmc": 0, "sm_lid": 1, "capability_mask": "0xa651e848",
                                         "port_guid": "0xb8cef60300a1b2c0", "link_layer": "InfiniBand"}
    assert cas["mlx5_1"]["ports"][1]["state"] == "Down"
    with pytest.raises(_parse.ParseError, match="no \"CA"):
        _parse.parse_ibstat("ibpanic: [1234] main: stat of IB device 'mlx5_0' failed\n")


@pytest.mark.parametrize("name, expected", [
    ("rdma-link.rxe.json", [{"device": "rxe0", "port": 1, "state": "ACTIVE", "physical_state": "LINK_UP",
                             "netdev": "data0", "netdev_index": 3}]),
    ("rdma-link.mlx5_core.json", None),
])
def test_rdma_link_json(name, expected):
    links = _parse.parse_rdma_link_json(fixture(name))
    if expected is not None:
        assert links == expected
    else:
        assert [(link["device"], link["state"], link["netdev"]) for link in links] == [
            ("mlx5_0", "ACTIVE", "ens1f0np0"), ("mlx5_1", "DOWN", "ens1f1np1"), ("mlx5_2", "ACTIVE", None)]


@pytest.mark.parametrize("text, message", [("{", "malformed JSON"), ("{}", "expected a JSON list"),
                                           ('[{"port": 1}]', "no 'ifname'")])
def test_rdma_link_malformed(text, message):
    with pytest.raises(_parse.ParseError, match=message):
        _parse.parse_rdma_link_json(text)


def test_nvidia_smi_topo():
    topo = _parse.parse_nvidia_smi_topo(fixture("nvidia-smi-topo-m.2gpu.txt"))
    assert topo["devices"] == ["GPU0", "GPU1", "NIC0", "NIC1"]
    assert topo["matrix"]["GPU0"]["NIC0"] == "PXB" and topo["matrix"]["GPU0"]["NIC1"] == "SYS"
    assert topo["matrix"]["GPU1"]["GPU0"] == "NV12" and topo["matrix"]["NIC1"]["NIC1"] == "X"
    assert topo["cpu_affinity"] == {"GPU0": "0-31,64-95", "GPU1": "32-63,96-127"}
    assert topo["numa_affinity"] == {"GPU0": "0", "GPU1": "1"}
    assert topo["nics"] == {"NIC0": "mlx5_0", "NIC1": "mlx5_1"}
    with pytest.raises(_parse.ParseError, match="no tab-separated"):
        _parse.parse_nvidia_smi_topo("GPU0 GPU1\n")


def test_softnet_stat_captured_6x_layout():
    rows = _parse.parse_softnet_stat(fixture("softnet_stat.2cpu.captured.txt"))
    assert [r["cpu"] for r in rows] == [0, 1]
    assert rows[0]["processed"] == 0x6c6 and rows[1]["processed"] == 0x8252
    assert all(r["dropped"] == 0 and r["time_squeeze"] == 0 for r in rows)


def test_softnet_stat_old_layout_uses_row_numbers():
    text = "0000a000 00000002 00000011 0 0 0 0 0 0 00000005 00000001\n0000b000 00000000 00000003 0 0 0 0 0 0 0 0\n"
    rows = _parse.parse_softnet_stat(text)
    assert rows[0] == {"cpu": 0, "processed": 0xa000, "dropped": 2, "time_squeeze": 0x11, "received_rps": 5,
                       "flow_limit_count": 1}
    assert rows[1]["cpu"] == 1
    with pytest.raises(_parse.ParseError, match="non-hex"):
        _parse.parse_softnet_stat("zz 0 0\n")


def test_proc_net_snmp_captured():
    snmp = _parse.parse_proc_net_snmp(fixture("proc-net-snmp.captured.txt"))
    assert snmp["Tcp"]["RtoMin"] == 200 and snmp["Tcp"]["MaxConn"] == -1
    assert "RetransSegs" in snmp["Tcp"] and "InDatagrams" in snmp["Udp"]
    with pytest.raises(_parse.ParseError, match="do not pair up"):
        _parse.parse_proc_net_snmp("Tcp: A B\nTcp: 1\n")


# ---------------------------------------------------------------- package tools (captured on Debian 12)
def test_apt_cache_policy_captured():
    policy = _parse.parse_apt_cache_policy(fixture("apt-cache-policy.bookworm.captured.txt"))
    assert policy == {"rdma-core": {"installed": None, "candidate": "44.0-2"},
                      "libibverbs1": {"installed": "44.0-2", "candidate": "44.0-2"}}   # unknown name: no entry


def test_apt_simulate_captured_and_topological_order():
    sim = _parse.parse_apt_simulate(fixture("apt-get-s.rdma.bookworm.captured.txt"))
    names = [i["name"] for i in sim["install"]]
    assert names[:2] == ["rdma-core", "ibverbs-utils"] and len(names) == 10
    assert sim["upgrade"] == [] and sim["remove"] == []
    deps = _parse.parse_apt_cache_depends(fixture("apt-cache-depends.rdma.bookworm.captured.txt"))
    assert deps["libibnetdisc5"] == ["libc6", "libibmad5", "libibumad3"]
    assert deps["rdma-core"][:2] == ["init-system-helpers", "lsb-base"]
    order = _pkg.topo_order(names, deps)
    assert sorted(order) == sorted(names)
    for n in order:   # every package after its dependencies in the set: rollback reverses this
        assert all(order.index(d) < order.index(n) for d in deps.get(n, []) if d in names)


def test_apt_simulate_upgrades_and_removals():
    text = ("Remv libfoo1 [1.0-1]\nInst libbar2 [2.0-1] (2.1-1 Debian:12/stable [amd64])\n"
            "Inst newpkg (3.0 Debian:12/stable [all]) []\nConf newpkg (3.0 Debian:12/stable [all])\n")
    assert _parse.parse_apt_simulate(text) == {
        "install": [{"name": "newpkg", "version": "3.0"}],
        "upgrade": [{"name": "libbar2", "from": "2.0-1", "version": "2.1-1"}],
        "remove": [{"name": "libfoo1", "version": "1.0-1"}]}


def test_dpkg_query_status():
    text = "iproute2\tinstalled\nlibfoo:amd64\tconfig-files\nbar\t\n"
    assert _parse.parse_dpkg_query_status(text) == {"iproute2": "installed", "libfoo": "config-files",
                                                    "bar": "not-installed"}


def test_dnf_transaction():
    sim = _parse.parse_dnf_transaction(fixture("dnf-install-assumeno.rdma.el9.txt"))
    assert sim["install"][:5] == ["infiniband-diags", "libibverbs-utils", "librdmacm-utils", "perftest", "rdma-core"]
    assert sim["install"][5:] == ["libibumad", "libibverbs", "librdmacm", "pciutils-libs", "perl-Getopt-Long"]
    assert sim["upgrade"] == [] and sim["remove"] == []
    assert _parse.parse_dnf_transaction("Dependencies resolved.\nNothing to do.\nComplete!\n")["install"] == []


# ---------------------------------------------------------------- kernel module metadata (captured, Debian 6.1)
def test_modules_dep_captured_and_closure():
    dep = _parse.parse_modules_dep(fixture("modules.dep.6.1.0-57-amd64.captured.txt"))
    assert dep["rdma_rxe"] == ["ib_uverbs", "ib_core", "ip6_udp_tunnel", "udp_tunnel"]
    assert dep["ib_core"] == []
    tree = {"dep": dep, "builtin": set(_parse.parse_modules_builtin(fixture("modules.builtin.6.1.0-57-amd64.captured-head.txt"))),
            "softdep": _parse.parse_modules_softdep(fixture("modules.softdep.6.1.0-57-amd64.captured.txt"))}
    assert "unix" in tree["builtin"] and "ib_core" not in tree["builtin"]
    order = _rdma.closure(tree, ["ib_umad", "rdma_ucm"])
    assert order[0] == "ib_core" and order[-1] == "rdma_ucm"
    assert set(order) == {"ib_core", "ib_umad", "configfs", "ib_cm", "iw_cm", "rdma_cm", "ib_uverbs", "rdma_ucm"}
    for name in order:
        assert all(order.index(d) < order.index(name) for d in dep[name])
    assert _rdma.unknown_modules(tree, ["ib_umad", "unix", "rdma_rxee"]) == ["rdma_rxee"]


def test_softdep_and_module_names():
    soft = _parse.parse_modules_softdep("# comment\nsoftdep mlx4_core post: mlx4_en\nsoftdep ext4 pre: crc32c-intel\n")
    assert soft == {"mlx4_core": {"pre": [], "post": ["mlx4_en"]}, "ext4": {"pre": ["crc32c_intel"], "post": []}}
    assert _parse.kmod_name("kernel/drivers/infiniband/core/ib_core.ko.zst") == "ib_core"
    assert _parse.kmod_name("ib-umad") == "ib_umad"
    tree = {"dep": {"mlx4_core": [], "mlx4_en": ["mlx4_core"], "mlx4_ib": ["mlx4_core"]}, "builtin": set(),
            "softdep": soft}
    assert _rdma.closure(tree, ["mlx4_ib"]) == ["mlx4_core", "mlx4_en", "mlx4_ib"]
