# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The DCB / RoCE parsers against recorded outputs (tests/unit/fixtures/README.md says which are
captured and which reconstructed from the tools' documented formats)."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils import _parse

from .conftest import fixture


# --------------------------------------------------------------------------- mlnx_qos
def test_mlnx_qos_trust_dscp_report():
    parsed = _parse.parse_mlnx_qos(fixture("mlnx_qos.mlx5_core.dscp.txt"))
    assert parsed["dcbx_mode"] == "os"
    assert parsed["trust"] == "dscp"
    assert parsed["pfc"] == [3]
    assert parsed["pfc_buffer"] == [0, 0, 0, 1, 0, 0, 0, 0]
    assert parsed["cable_len"] == 7
    assert parsed["receive_buffer_size"] == [130944, 130944, 0, 0, 0, 0, 0, 0]
    expected = dict((d, d >> 3) for d in range(64))
    expected.update({8: 0, 9: 0})      # remapped; prio:0 wraps onto a second line
    assert parsed["dscp2prio"] == expected
    assert parsed["tc"][1] == {"ratelimit": "unlimited", "tsa": "vendor", "priorities": [0]}
    assert sorted(parsed["tc"]) == list(range(8))
    assert parsed["notes"] == []


def test_mlnx_qos_trust_pcp_report_has_no_dscp_table():
    parsed = _parse.parse_mlnx_qos(fixture("mlnx_qos.mlx5_core.pcp.txt"))
    assert (parsed["trust"], parsed["dscp2prio"], parsed["pfc"]) == ("pcp", {}, [])
    assert parsed["receive_buffer_size"] is None and parsed["pfc_buffer"] is None
    assert parsed["notes"] == ["WARNING: lldpad service is running and may overwrite your settings",
                               "Buffers commands are not supported on your system"]


@pytest.mark.parametrize("text, detail", [
    ("DCBX mode: OS controlled\nPriority trust state: dscp\n", "no 'PFC configuration'"),
    ("PFC configuration:\n\tpriority 0 1 2 3 4 5 6 7\n\tenabled 0 0 0 1\n", "must hold 8 values"),
    ("PFC configuration:\n\tenabled 0 0 0 2 0 0 0 0\n", "must hold 8 values 0/1"),
    ("PFC configuration:\n\tenabled 0 0 0 x 0 0 0 0\n", "expected integers after 'enabled'"),
    ("Priority trust state: dscp\ndscp2prio mapping:\n\tprio:9 dscp:01,\n", "out of range"),
])
def test_mlnx_qos_errors(text, detail):
    with pytest.raises(_parse.ParseError, match="mlnx_qos: .*" + detail):
        _parse.parse_mlnx_qos(text)


# --------------------------------------------------------------------------- ibv_devinfo
def test_ibv_devinfo_rxe():
    parsed = _parse.parse_ibv_devinfo(fixture("ibv_devinfo.rxe.txt"))
    assert parsed["rxe0"]["ports"] == {1: {"state": "PORT_ACTIVE", "max_mtu": 4096, "active_mtu": 1024,
                                           "link_layer": "Ethernet"}}
    assert parsed["rxe0"]["transport"] == "InfiniBand (0)"


def test_ibv_devinfo_two_devices():
    parsed = _parse.parse_ibv_devinfo(fixture("ibv_devinfo.mlx5_core.txt"))
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
    with pytest.raises(_parse.ParseError, match="ibv_devinfo: .*" + detail):
        _parse.parse_ibv_devinfo(text)


def test_ib_mtu_enum():
    assert _parse.IB_MTU_BYTES == {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}
