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


# --------------------------------------------------------------------------- dcb -j pfc show
@pytest.mark.parametrize("name, expected", [
    ("dcb-pfc.mlx5_core.json", {"pfc_cap": 8, "macsec_bypass": False, "delay": 7, "enabled": [3]}),
    ("dcb-pfc.ice.json", {"pfc_cap": 8, "macsec_bypass": False, "delay": 0, "enabled": []}),
])
def test_dcb_pfc_fixtures(name, expected):
    assert _parse.parse_dcb_pfc_json(fixture(name)) == expected


def test_dcb_pfc_accepts_on_off_strings_and_missing_scalars():
    text = '{"prio_pfc":["off","off","off","on","on","off","off","off"]}'
    assert _parse.parse_dcb_pfc_json(text) == {"pfc_cap": None, "macsec_bypass": None, "delay": None, "enabled": [3, 4]}


@pytest.mark.parametrize("text, detail", [
    ("", "malformed JSON"),
    ("\n", "malformed JSON"),                        # what dcb -j prints on stdout when it fails
    ("[]", "expected a JSON object"),
    ('{"pfc_cap":8}', "'prio_pfc' is missing"),
    ('{"prio_pfc":[true,false]}', "not a list of 8 values"),
    ('{"prio_pfc":[1,0,0,0,0,0,0,0]}', r"prio_pfc\[0\] holds 1"),
    ('{"pfc_cap":-1,"prio_pfc":[false,false,false,false,false,false,false,false]}', "pfc_cap holds -1"),
])
def test_dcb_pfc_errors(text, detail):
    with pytest.raises(_parse.ParseError, match="dcb pfc show: .*" + detail):
        _parse.parse_dcb_pfc_json(text)


# --------------------------------------------------------------------------- dcb -j app show
def test_dcb_app_mlx5_trust_dscp_holds_all_64_firmware_defaults():
    parsed = _parse.parse_dcb_app_json(fixture("dcb-app.mlx5_core.dscp.json"))
    assert parsed["dscp_prio"] == dict((d, [d >> 3]) for d in range(64))
    assert parsed["default_prio"] == []


def test_dcb_app_empty_table():
    assert _parse.parse_dcb_app_json(fixture("dcb-app.mlx5_core.empty.json")) == {
        "dscp_prio": {}, "default_prio": [], "ethtype_prio": {}, "stream_port_prio": {},
        "dgram_port_prio": {}, "port_prio": {}}


def test_dcb_app_sparse_table_keeps_several_priorities_per_dscp():
    parsed = _parse.parse_dcb_app_json(fixture("dcb-app.ice.json"))
    assert parsed["dscp_prio"] == {26: [3], 46: [5, 6], 48: [6]}
    assert parsed["default_prio"] == [0]


@pytest.mark.parametrize("text, detail", [
    ('{"dscp_prio":[[64,3]]}', "out of range"),
    ('{"dscp_prio":[[26,8]]}', "out of range"),
    ('{"dscp_prio":[[26]]}', "not a \\[key, priority\\] pair"),
    ('{"dscp_prio":{"26":3}}', "'dscp_prio' is not a list"),
    ('{"default_prio":3}', "'default_prio' is not a list"),
])
def test_dcb_app_errors(text, detail):
    with pytest.raises(_parse.ParseError, match="dcb app show: .*" + detail):
        _parse.parse_dcb_app_json(text)


def test_dcb_apptrust():
    assert _parse.parse_dcb_apptrust_json(fixture("dcb-apptrust.sparx5.json")) == ["dscp", "pcp"]
    assert _parse.parse_dcb_apptrust_json('{"order":[]}') == []
    with pytest.raises(_parse.ParseError, match="'order' is not a list"):
        _parse.parse_dcb_apptrust_json('{"order":"dscp"}')


# --------------------------------------------------------------------------- dcb errors (captured)
@pytest.mark.parametrize("name, not_supported", [
    ("dcb-pfc.veth.captured.stderr.txt", True),          # Attribute read: Operation not supported
    ("dcb-app-add.veth.captured.stderr.txt", True),      # Attribute write: Operation not supported
    ("dcb-pfc.nodev.captured.stderr.txt", False),        # No such device
    ("dcb-apptrust.iproute2-6.1.captured.stderr.txt", False),
])
def test_dcb_captured_errors(name, not_supported):
    assert _parse.is_not_supported(fixture(name)) is not_supported


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
