# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``ibstat``, ``ibv_devinfo`` and ``rdma link``/``rdma dev`` read right on real captures
(tests/unit/fixtures/real/<tool>/, each opening with its source): the values a person reads off
each capture, one table row per capture."""
from __future__ import annotations

import os

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _ibtools
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import ParseError

from ....fixtures.real.loader import real_capture as real

REAL = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "real")


def header(path: str) -> str:
    with open(os.path.join(REAL, path), encoding="utf-8") as f:
        return "".join(line for line in f if line.startswith("#"))


# ------------------------------------------------------------------------------------------ ibstat
# (capture, CA, ca_type, firmware, node GUID, port, state, physical state, rate, link layer, port GUID)
IBSTAT = [
    ("ibstat/rxe.linux-rdma-2022-01.rate-2.5.txt", "rxe0", "", "", "0x4a51c5fffef6e159", 1, "Active", "LinkUp", 2.5,
     "Ethernet", "0x4a51c5fffef6e159"),
    ("ibstat/rxe.k8s-62.rate-fdr10.txt", "rxe0", "", "", "0x025056fffea77d03", 1, "Active", "LinkUp", 10,
     "Ethernet", "0x025056fffea77d03"),
    ("ibstat/mlx5.cx6dx.lshca-79.rate-2.5.txt", "mlx5_2", "MT4125", "22.29.2002", "0xb8cef6030071f6fc", 1, "Active",
     "LinkUp", 2.5, None, "0xbacef6fffe71f6fc"),
    ("ibstat/mlx5.cx6dx.l2fwd-nv-6.eth-100.txt", "mlx5_1", "MT4125", "22.32.2004", "0x0c42a103001dd12b", 1, "Active",
     "LinkUp", 100, "Ethernet", "0x0e42a1fffe1dd12b"),
    ("ibstat/mlx4.cx3.rdma-core-847.debug.txt", "mlx4_0", "MT4099", "2.42.5000", "0xf4521403007be0e0", 1, "Down",
     "Disabled", 10, "InfiniBand", "0xf4521403007be0e1"),
    ("ibstat/mlx4.cx3.ofed-5.0.ubuntu20.txt", "mlx4_0", "MT4099", "2.42.5000", "0x98039b0300dccab0", 1, "Active",
     "LinkUp", 56, "InfiniBand", "0x98039b0300dccab1"),
    ("ibstat/mlx5.cx4.talos.no-ca-type.initializing.txt", "mlx5_0", None, "12.20.1010", "0x248a07030049aee0", 1,
     "Initializing", "LinkUp", 100, "InfiniBand", "0x248a07030049aee0"),
]


@pytest.mark.parametrize("path, ca, ca_type, fw, guid, port, state, phys, rate, layer, port_guid", IBSTAT,
                         ids=[row[0] for row in IBSTAT])
def test_ibstat_real(path, ca, ca_type, fw, guid, port, state, phys, rate, layer, port_guid):
    cas = _ibtools.parse_ibstat(real(path))
    info = cas[ca]
    assert "unreadable" not in info
    assert (info.get("ca_type"), info["firmware_version"], info["node_guid"]) == (ca_type, fw, guid)
    p = info["ports"][port]
    assert (p["state"], p["physical_state"], p["rate"], p.get("link_layer"), p["port_guid"]) == (
        state, phys, rate, layer, port_guid)
    assert all("unreadable" not in c for c in cas.values())


def test_ibstat_fractional_and_named_rates():
    assert _ibtools.parse_ibstat(real("ibstat/rxe.linux-rdma-2022-01.rate-2.5.txt"))["rxe0"]["ports"][1]["rate"] == 2.5
    port = _ibtools.parse_ibstat(real("ibstat/rxe.k8s-62.rate-fdr10.txt"))["rxe0"]["ports"][1]
    assert (port["rate"], port["rate_name"]) == (10, "FDR10")
    assert _ibtools.ib_rate("14.0625", "ibstat", "Rate: 14.0625") == (14.0625, None)


def test_ibstat_two_port_mlx4_with_debug_lines_and_a_truncated_port():
    ca = _ibtools.parse_ibstat(real("ibstat/mlx4.cx3.rdma-core-847.debug.txt"))["mlx4_0"]
    assert ca["number_of_ports"] == 2 and sorted(ca["ports"]) == [1, 2]
    assert (ca["ports"][1]["base_lid"], ca["ports"][1]["sm_lid"]) == (38, 13)
    assert ca["ports"][2] == {"state": "Active", "physical_state": "LinkUp", "rate": 56, "base_lid": None}


def test_ibstat_one_garbled_ca_keeps_the_others():
    text = real("ibstat/mlx5.cx6dx.l2fwd-nv-6.eth-100.txt").replace("Rate: 100\n", "Rate: fast\n", 1)
    cas = _ibtools.parse_ibstat(text)
    assert "ibstat" in cas["mlx5_0"]["unreadable"] and "Rate: fast" in cas["mlx5_0"]["unreadable"]
    assert cas["mlx5_1"]["ports"][1]["rate"] == 100 and cas["mlx5_1"]["firmware_version"] == "22.32.2004"
    with pytest.raises(ParseError, match="ibstat: .*Rate: fast"):
        _ibtools.parse_ibstat(text.replace("Rate: 100\n", "Rate: fast\n"))


# ------------------------------------------------------------------------------------- ibv_devinfo
# (capture, hca_id, fw_ver, node_guid, board_id, port, state, phys_state, active_mtu, max_mtu, link_layer, gids)
IBV = [
    ("ibv_devinfo/rxe.k8s-62.verbose.txt", "rxe0", "0.0.0", "0250:56ff:fea7:7d03", None, 1, "PORT_ACTIVE", "LINK_UP",
     1024, 4096, "Ethernet", [(0, "fe80::250:56ff:fea7:7d03", "RoCE v2"), (1, "::ffff:10.1.16.62", "RoCE v2")]),
    ("ibv_devinfo/rxe.k8s-62.plain.txt", "rxe0", "0.0.0", "0250:56ff:fea7:7d03", None, 1, "PORT_ACTIVE", None,
     1024, 4096, "Ethernet", []),
    ("ibv_devinfo/rxe.rxe-dev-46.2016.no-link-layer.txt", "rxe0", "0.0.0", "428d:5cff:fe35:bb12", None, 1,
     "PORT_ACTIVE", None, 1024, 4096, None, []),
    ("ibv_devinfo/mlx5.azure-hbv2.azhpc-images-44.txt", "rdmaP23800p0s2", "14.25.8102", "000d:3aff:feac:5a53",
     "MSF0010110035", 1, "PORT_ACTIVE", None, 1024, 4096, "Ethernet", []),
    ("ibv_devinfo/mlx5.cx6dx-cx7.deepep-60.port-down.txt", "mlx5_12", "22.38.1900", "a088:c203:0030:9a0d",
     "MT_0000000436", 1, "PORT_DOWN", None, 1024, 4096, "Ethernet", []),
]


@pytest.mark.parametrize("path, hca, fw, guid, board, port, state, phys, active, maximum, layer, gids", IBV,
                         ids=[row[0] for row in IBV])
def test_ibv_devinfo_real(path, hca, fw, guid, board, port, state, phys, active, maximum, layer, gids):
    devs = _ibtools.parse_ibv_devinfo_verbose(real(path))
    dev = devs[hca]
    assert (dev["fw_ver"], dev["node_guid"], dev["board_id"], dev["transport"]) == (fw, guid, board, "InfiniBand")
    p = dev["ports"][port]
    assert (p["state"], p["phys_state"], p["active_mtu"], p["max_mtu"], p["link_layer"]) == (
        state, phys, active, maximum, layer)
    assert [(g["index"], g["gid"], g["type"]) for g in p["gids"]] == gids
    plain = _ibtools.parse_ibv_devinfo(real(path))[hca]
    assert (plain["fw_ver"], plain["ports"][port]["active_mtu"]) == (fw, active)


def test_ibv_devinfo_verbose_rxe_speed_and_width():
    port = _ibtools.parse_ibv_devinfo_verbose(real("ibv_devinfo/rxe.k8s-62.verbose.txt"))["rxe0"]["ports"][1]
    assert (port["active_width"], port["active_speed"], port["sm_lid"], port["port_lid"]) == ("1X", "10.0 Gbps", 0, 0)


def test_ibv_devinfo_devices_cut_short_are_kept_with_what_they_print():
    devs = _ibtools.parse_ibv_devinfo_verbose(real("ibv_devinfo/mlx5.azure-hbv2.azhpc-images-44.txt"))
    assert devs["ibP57247p0s2"]["fw_ver"] == "16.26.0206" and devs["ibP57247p0s2"]["ports"] == {}
    devs = _ibtools.parse_ibv_devinfo_verbose(real("ibv_devinfo/mlx5.cx6dx-cx7.deepep-60.port-down.txt"))
    assert (devs["mlx5_13"]["vendor_part_id"], devs["mlx5_13"]["phys_port_cnt"]) == ("4129", 1)


def test_ibv_devinfo_flattened_paste_reads_the_device_fields():
    dev = _ibtools.parse_ibv_devinfo_verbose(real("ibv_devinfo/mlx5.cx4.ompi-9087.verbose.flattened.txt"))["mlx5_0"]
    assert (dev["fw_ver"], dev["board_id"], dev["vendor_part_id"], dev["phys_port_cnt"]) == (
        "12.18.1000", "FJT2180110032", "4115", 1)


def test_ibv_devinfo_one_garbled_device_keeps_the_others():
    text = real("ibv_devinfo/mlx5.cx6dx-cx7.deepep-60.port-down.txt")
    text = text.replace("active_mtu:             1024 (3)", "active_mtu:             1024 (5)")
    devs = _ibtools.parse_ibv_devinfo_verbose(text)
    assert "must read like '4096 (5)'" in devs["mlx5_12"]["unreadable"]
    assert devs["mlx5_13"]["fw_ver"] == "28.39.2048"
    assert "unreadable" in _ibtools.parse_ibv_devinfo(text)["mlx5_12"]


# -------------------------------------------------------------------------------------- rdma link
# (capture, [(device, port, state, physical_state, netdev)])
LINKS = [
    ("rdma/link.rxe.k8s-62.txt", [("rxe0", 1, "ACTIVE", "LINK_UP", "ens160")]),
    ("rdma/link.rxe.3fs-263.txt", [("rxe_0", 1, "ACTIVE", "LINK_UP", "p1p1")]),
    ("rdma/link.mlx5.cx6dx.3fs-283.txt", [("mlx5_0", 1, "ACTIVE", "LINK_UP", "p1p1"),
                                          ("mlx5_1", 1, "ACTIVE", "LINK_UP", "p1p2")]),
    ("rdma/link.mlx5-sf.kernel-doc.txt", [("mlx5_0", 1, "ACTIVE", "LINK_UP", "p0sf88")]),
    ("rdma/link-json.mlx5.reconstructed.json", [("mlx5_0", 1, "ACTIVE", "LINK_UP", "p1p1"),
                                                ("mlx5_1", 1, "ACTIVE", "LINK_UP", "p1p2")]),
    ("rdma/link-json.ib.reconstructed.json", [("mlx4_0", 1, "DOWN", "DISABLED", None),
                                              ("mlx4_0", 2, "ACTIVE", "LINK_UP", None)]),
]


@pytest.mark.parametrize("path, expected", LINKS, ids=[row[0] for row in LINKS])
def test_rdma_link_real(path, expected):
    links = _ibtools.parse_rdma_link(real(path))
    assert [(x["device"], x["port"], x["state"], x["physical_state"], x["netdev"]) for x in links] == expected
    assert _ibtools.RDMA.parsers["links"](real(path)) == links


def test_rdma_link_one_garbled_line_keeps_the_others():
    text = real("rdma/link.mlx5.cx6dx.3fs-283.txt") + "link mlx5_2/1 state\n"
    links = _ibtools.parse_rdma_link(text)
    assert [x["netdev"] for x in links[:2]] == ["p1p1", "p1p2"]
    assert links[2]["device"] == "mlx5_2" and "has no value" in links[2]["unreadable"]


# --------------------------------------------------------------------------------------- rdma dev
# (capture, device, index, node_type, fw, node_guid, sys_image_guid, has caps)
DEVS = [
    ("rdma/dev.rxe.k8s-62.txt", "rxe0", 0, "ca", None, "0250:56ff:fea7:7d03", "0250:56ff:fea7:7d03", False),
    ("rdma/dev.mlx5-sf.kernel-doc.txt", "rdmap6s0f0", 43, "ca", "16.29.0550", "248a:0703:00b3:d112",
     "248a:0703:00b3:d112", False),
    ("rdma/dev.mlx5-sf.kernel-doc.txt", "mlx5_0", 44, "ca", "16.29.0550", "0000:00ff:fe00:8888",
     "248a:0703:00b3:d112", False),
    ("rdma/dev-json.mlx5.reconstructed.json", "rdmap6s0f0", 43, "ca", "16.29.0550", "248a:0703:00b3:d112",
     "248a:0703:00b3:d112", True),
    ("rdma/dev-json.rxe.reconstructed.json", "rxe0", 0, "ca", None, "0250:56ff:fea7:7d03", "0250:56ff:fea7:7d03",
     False),
]


@pytest.mark.parametrize("path, dev, index, node_type, fw, guid, sys_guid, caps", DEVS, ids=[r[0] + ":" + r[1] for r in DEVS])
def test_rdma_dev_real(path, dev, index, node_type, fw, guid, sys_guid, caps):
    info = _ibtools.parse_rdma_dev(real(path))[dev]
    assert (info["index"], info["node_type"], info["fw"], info["node_guid"], info["sys_image_guid"]) == (
        index, node_type, fw, guid, sys_guid)
    assert (info["caps"] is not None) is caps
    if caps:
        assert "MEM_MGT_EXTENSIONS" in info["caps"]


def test_rdma_dev_text_with_caps_and_a_garbled_line():
    text = ("0: mlx5_0: node_type ca fw 16.26.0055 node_guid 248a:0703:00a5:29d0 sys_image_guid 248a:0703:00a5:29d0 "
            "caps: <BAD_PKEY_CNTR, BAD_QKEY_CNTR, XRC>\n1: mlx5_1: node_type\n")
    devs = _ibtools.parse_rdma_dev(text)
    assert devs["mlx5_0"]["caps"] == ["BAD_PKEY_CNTR", "BAD_QKEY_CNTR", "XRC"] and devs["mlx5_0"]["fw"] == "16.26.0055"
    assert "rdma dev: attribute 'node_type' has no value" in devs["mlx5_1"]["unreadable"]
    assert _ibtools.RDMA.argv("devices") == ["rdma", "-j", "dev", "show"]


@pytest.mark.parametrize("directory", ["ibstat", "ibv_devinfo", "rdma"])
def test_every_capture_names_its_source_and_driver(directory):
    for name in sorted(os.listdir(os.path.join(REAL, directory))):
        text = header(os.path.join(directory, name))
        assert "# source: " in text and "# driver: " in text, name
        assert ("RECONSTRUCTED" in text) == (".reconstructed." in name), name
