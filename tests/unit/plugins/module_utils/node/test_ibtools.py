# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/node/_ibtools.py: the ibv_devinfo, ibstat and ``rdma -j link`` parsers against
recorded outputs (tests/unit/fixtures/README.md), and their argv tables through the runner."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _ibtools
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import ParseError

from ....conftest import fixture, mlx5
from ....fake_qos import FakeRdma, QosNode


# --------------------------------------------------------------------------- ibv_devinfo
def test_ibv_devinfo_rxe():
    parsed = _ibtools.parse_ibv_devinfo(fixture("ibv_devinfo.rxe.txt"))
    assert parsed["rxe0"]["ports"] == {1: {"state": "PORT_ACTIVE", "max_mtu": 4096, "active_mtu": 1024,
                                           "link_layer": "Ethernet"}}
    assert parsed["rxe0"]["transport"] == "InfiniBand (0)"


def test_ibv_devinfo_two_devices():
    parsed = _ibtools.parse_ibv_devinfo(fixture("ibv_devinfo.mlx5_core.txt"))
    assert sorted(parsed) == ["mlx5_0", "mlx5_1"]
    assert parsed["mlx5_0"]["ports"][1]["active_mtu"] == 4096
    assert parsed["mlx5_1"]["ports"][1] == {"state": "PORT_DOWN", "max_mtu": 4096, "active_mtu": 1024,
                                            "link_layer": "Ethernet"}
    assert parsed["mlx5_0"]["fw_ver"] == "22.39.1002"


@pytest.mark.parametrize("text, detail", [
    ("No IB devices found\n", "no 'hca_id:' line"),
    ("hca_id:\tx\n\t\tport:\t1\n\t\t\tactive_mtu:\t\t4096 (3)\n", "must read like '4096 \\(5\\)'"),
    ("hca_id:\tx\n\t\tport:\tone\n", "bad port number"),
])
def test_ibv_devinfo_errors(text, detail):
    with pytest.raises(ParseError, match="ibv_devinfo: .*" + detail):
        _ibtools.parse_ibv_devinfo(text)


def test_ib_mtu_enum():
    assert _ibtools.IB_MTU_BYTES == {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}


def test_ibv_devinfo_verbose_rxe():
    dev = _ibtools.parse_ibv_devinfo_verbose(fixture("ibv_devinfo-v.rxe.txt"))["rxe0"]
    assert dev["transport"] == "InfiniBand" and dev["phys_port_cnt"] == 1 and dev["fw_ver"] == "0.0.0"
    port = dev["ports"][1]
    assert port["state"] == "PORT_ACTIVE" and port["phys_state"] == "LINK_UP"
    assert (port["max_mtu"], port["active_mtu"], port["link_layer"]) == (4096, 4096, "Ethernet")
    assert port["gids"] == [{"index": 0, "gid": "fe80::5054:ff:fe12:3401", "type": "RoCE v2"},
                            {"index": 1, "gid": "::ffff:10.77.0.1", "type": "RoCE v2"}]


def test_ibv_devinfo_verbose_rxe_captured_in_the_vm_lab():
    dev = _ibtools.parse_ibv_devinfo_verbose(fixture("ibv_devinfo-v.rxe.vm.captured.txt"))["rxe0"]
    port = dev["ports"][1]
    assert (dev["transport"], dev["fw_ver"], port["state"], port["phys_state"]) == (
        "InfiniBand", "0.0.0", "PORT_ACTIVE", "LINK_UP")
    assert (port["max_mtu"], port["active_mtu"], port["link_layer"]) == (4096, 1024, "Ethernet")
    assert port["gids"] == [{"index": 0, "gid": "fe80::5054:ff:fea1:2", "type": "RoCE v2"},
                            {"index": 1, "gid": "::ffff:10.77.0.2", "type": "RoCE v2"}]
    assert _ibtools.parse_rdma_link_json(fixture("rdma-link.rxe.vm.captured.json")) == [
        {"device": "rxe0", "port": 1, "state": "ACTIVE", "physical_state": "LINK_UP", "netdev": "data0",
         "netdev_index": 3}]


def test_ibv_devinfo_verbose_mlx5_two_devices():
    devs = _ibtools.parse_ibv_devinfo_verbose(fixture("ibv_devinfo-v.mlx5_core.txt"))
    assert sorted(devs) == ["mlx5_0", "mlx5_1"]
    up, down = devs["mlx5_0"]["ports"][1], devs["mlx5_1"]["ports"][1]
    assert devs["mlx5_0"]["board_id"] == "MT_0000000359" and devs["mlx5_0"]["vendor_part_id"] == "4125"
    assert (up["active_width"], up["active_speed"], up["active_mtu"]) == ("4X", "25.0 Gbps", 4096)
    assert [g["type"] for g in up["gids"]] == ["RoCE v1", "RoCE v2", "RoCE v1", "RoCE v2"]
    assert up["gids"][3]["gid"] == "::ffff:10.10.0.11"
    assert (down["state"], down["phys_state"], down["active_mtu"], down["gids"]) == ("PORT_DOWN", "DISABLED", 1024, [])


def test_ibv_devinfo_plain_output_parses_too():
    port = _ibtools.parse_ibv_devinfo_verbose(fixture("ibv_devinfo.rxe.txt"))["rxe0"]["ports"][1]
    assert port["active_mtu"] == 1024 and port["gids"] == []


@pytest.mark.parametrize("text, message", [
    ("", "empty output"),
    ("no devices were found\n", "no 'hca_id:' line"),
    ("hca_id:\tx\n\t\tport:\t1\n\t\t\tactive_mtu:\t4096 (3)\n", "must read like '4096 \\(5\\)'"),
    ("hca_id:\tx\n\t\tport:\tone\n", "bad port number"),
])
def test_ibv_devinfo_malformed(text, message):
    with pytest.raises(ParseError, match=message):
        _ibtools.parse_ibv_devinfo_verbose(text)


def test_ibstat():
    cas = _ibtools.parse_ibstat(fixture("ibstat.mlx5_core.ib.txt"))
    assert sorted(cas) == ["mlx5_0", "mlx5_1"]
    assert cas["mlx5_0"]["firmware_version"] == "20.31.1014" and cas["mlx5_0"]["number_of_ports"] == 1
    assert cas["mlx5_0"]["ports"][1] == {"state": "Active", "physical_state": "LinkUp", "rate": 200, "base_lid": 12,
                                         "lmc": 0, "sm_lid": 1, "capability_mask": "0xa651e848",
                                         "port_guid": "0xb8cef60300a1b2c0", "link_layer": "InfiniBand"}
    assert cas["mlx5_1"]["ports"][1]["state"] == "Down"
    with pytest.raises(ParseError, match="no \"CA"):
        _ibtools.parse_ibstat("ibpanic: [1234] main: stat of IB device 'mlx5_0' failed\n")


@pytest.mark.parametrize("name, expected", [
    ("rdma-link.rxe.json", [{"device": "rxe0", "port": 1, "state": "ACTIVE", "physical_state": "LINK_UP",
                             "netdev": "data0", "netdev_index": 3}]),
    ("rdma-link.mlx5_core.json", None),
])
def test_rdma_link_json(name, expected):
    links = _ibtools.parse_rdma_link_json(fixture(name))
    if expected is not None:
        assert links == expected
    else:
        assert [(link["device"], link["state"], link["netdev"]) for link in links] == [
            ("mlx5_0", "ACTIVE", "ens1f0np0"), ("mlx5_1", "DOWN", "ens1f1np1"), ("mlx5_2", "ACTIVE", None)]


@pytest.mark.parametrize("text, message", [("{", "malformed JSON"), ("{}", "expected a JSON list"),
                                           ('[{"port": 1}]', "no 'ifname'")])
def test_rdma_link_malformed(text, message):
    with pytest.raises(ParseError, match=message):
        _ibtools.parse_rdma_link_json(text)


# --------------------------------------------------------------------------- the tools, through the runner
@pytest.mark.parametrize("tool, action, values, argv", [
    (_ibtools.IBV_DEVINFO, "device", {"device": "rxe0"}, ["ibv_devinfo", "-d", "rxe0"]),
    (_ibtools.IBV_DEVINFO, "verbose", {}, ["ibv_devinfo", "-v"]),
    (_ibtools.IBSTAT, "show", {}, ["ibstat"]),
    (_ibtools.RDMA, "links", {}, ["rdma", "-j", "link", "show"]),
    (_ibtools.RDMA, "add_rxe", {"name": "rxe0", "netdev": "data0"},
     ["rdma", "link", "add", "rxe0", "type", "rxe", "netdev", "data0"]),
    (_ibtools.RDMA, "delete_link", {"name": "rxe0"}, ["rdma", "link", "delete", "rxe0"]),
    (_ibtools.RDMA, "set_netns", {"mode": "exclusive"}, ["rdma", "system", "set", "netns", "exclusive"]),
])
def test_argv_tables(tool, action, values, argv):
    assert tool.argv(action, **values) == argv


@pytest.fixture
def qnode(tmp_path):
    n = QosNode(str(tmp_path / "root"))
    n.add_nic(mlx5())
    n.add_rdma(FakeRdma("mlx5_0", "ens1f0np0", active_mtu=2048))
    return n


def test_devinfo_of_one_device(qnode):
    host = qnode.host()
    assert _ibtools.devinfo(host, "mlx5_0")["ports"] == {1: {"state": "PORT_ACTIVE", "max_mtu": 4096,
                                                             "active_mtu": 2048, "link_layer": "Ethernet"}}
    assert qnode.calls == [["ibv_devinfo", "-d", "mlx5_0"]]


def test_devinfo_without_the_tool_is_none_and_runs_nothing(qnode):
    qnode.missing.add("ibv_devinfo")
    assert _ibtools.devinfo(qnode.host(), "mlx5_0") is None
    assert qnode.calls == []


def test_devinfo_failure_names_argv(qnode):
    with pytest.raises(HostError) as excinfo:
        _ibtools.devinfo(qnode.host(), "nosuch0")
    assert str(excinfo.value) == ("ibv_devinfo -d nosuch0 failed (rc=255): "
                                  "Failed to get IB devices list: Unknown error -38 (simulated)")
