# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/node/_dcb.py and _dcb_parse.py: the ``dcb -j`` parsers against recorded outputs
(tests/unit/fixtures/README.md says which are captured and which reconstructed from the tools'
documented formats), and the argv table and its checks through the runner against
tests/unit/fake_qos.py (a simulation)."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _dcb
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _dcb_parse
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError, NotSupported
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import ParseError, is_not_supported

from ....conftest import fixture, mlx5, veth
from ....fake_qos import FakeQos, QosNode


# --------------------------------------------------------------------------- dcb -j pfc show
@pytest.mark.parametrize("name, expected", [
    ("dcb-pfc.mlx5_core.json", {"pfc_cap": 8, "macsec_bypass": False, "delay": 7, "enabled": [3]}),
    ("dcb-pfc.ice.json", {"pfc_cap": 8, "macsec_bypass": False, "delay": 0, "enabled": []}),
])
def test_dcb_pfc_fixtures(name, expected):
    assert _dcb_parse.parse_dcb_pfc_json(fixture(name)) == expected


def test_dcb_pfc_accepts_on_off_strings_and_missing_scalars():
    text = '{"prio_pfc":["off","off","off","on","on","off","off","off"]}'
    assert _dcb_parse.parse_dcb_pfc_json(text) == {"pfc_cap": None, "macsec_bypass": None, "delay": None, "enabled": [3, 4]}


@pytest.mark.parametrize("text, detail", [
    ("", "empty output"),
    ("\n", "empty output"),                          # what dcb -j prints on stdout when it fails
    ("[]", "expected a JSON object"),
    ('{"pfc_cap":8}', "'prio_pfc' is missing"),
    ('{"prio_pfc":[true,false]}', "not a list of 8 values"),
    ('{"prio_pfc":[1,0,0,0,0,0,0,0]}', r"prio_pfc\[0\] holds 1"),
    ('{"pfc_cap":-1,"prio_pfc":[false,false,false,false,false,false,false,false]}', "pfc_cap holds -1"),
])
def test_dcb_pfc_errors(text, detail):
    with pytest.raises(ParseError, match="dcb pfc show: .*" + detail):
        _dcb_parse.parse_dcb_pfc_json(text)


# --------------------------------------------------------------------------- dcb -j app show
def test_dcb_app_mlx5_trust_dscp_holds_all_64_firmware_defaults():
    parsed = _dcb_parse.parse_dcb_app_json(fixture("dcb-app.mlx5_core.dscp.json"))
    assert parsed["dscp_prio"] == dict((d, [d >> 3]) for d in range(64))
    assert parsed["default_prio"] == []


def test_dcb_app_empty_table():
    assert _dcb_parse.parse_dcb_app_json(fixture("dcb-app.mlx5_core.empty.json")) == {
        "dscp_prio": {}, "default_prio": [], "ethtype_prio": {}, "stream_port_prio": {},
        "dgram_port_prio": {}, "port_prio": {}, "pcp_prio": {}}


def test_dcb_app_sparse_table_keeps_several_priorities_per_dscp():
    parsed = _dcb_parse.parse_dcb_app_json(fixture("dcb-app.ice.json"))
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
    with pytest.raises(ParseError, match="dcb app show: .*" + detail):
        _dcb_parse.parse_dcb_app_json(text)


def test_dcb_apptrust():
    assert _dcb_parse.parse_dcb_apptrust_json(fixture("dcb-apptrust.sparx5.json")) == ["dscp", "pcp"]
    assert _dcb_parse.parse_dcb_apptrust_json('{"order":[]}') == []
    with pytest.raises(ParseError, match="'order' is not a list"):
        _dcb_parse.parse_dcb_apptrust_json('{"order":"dscp"}')


# --------------------------------------------------------------------------- dcb errors (captured)
@pytest.mark.parametrize("name, not_supported", [
    ("dcb-pfc.veth.captured.stderr.txt", True),          # Attribute read: Operation not supported
    ("dcb-app-add.veth.captured.stderr.txt", True),      # Attribute write: Operation not supported
    ("dcb-pfc.nodev.captured.stderr.txt", False),        # No such device
    ("dcb-apptrust.iproute2-6.1.captured.stderr.txt", False),
])
def test_dcb_captured_errors(name, not_supported):
    assert is_not_supported(fixture(name)) is not_supported


# --------------------------------------------------------------------------- the tool, through the runner
@pytest.mark.parametrize("action, values, argv", [
    ("pfc", {"ifname": "eth0"}, ["dcb", "-j", "pfc", "show", "dev", "eth0"]),
    ("app", {"ifname": "eth0"}, ["dcb", "-j", "app", "show", "dev", "eth0"]),
    ("apptrust", {"ifname": "eth0"}, ["dcb", "-j", "apptrust", "show", "dev", "eth0"]),
    ("set_pfc", {"ifname": "eth0", "prios": ["0:off", "3:on"]},
     ["dcb", "pfc", "set", "dev", "eth0", "prio-pfc", "0:off", "3:on"]),
    ("set_apptrust", {"ifname": "eth0", "order": ["dscp", "pcp"]},
     ["dcb", "apptrust", "set", "dev", "eth0", "order", "dscp", "pcp"]),
    ("add_app", {"ifname": "eth0", "pairs": ["26:3"]}, ["dcb", "app", "add", "dev", "eth0", "dscp-prio", "26:3"]),
    ("del_app", {"ifname": "eth0", "pairs": ["26:3", "26:4"]},
     ["dcb", "app", "del", "dev", "eth0", "dscp-prio", "26:3", "26:4"]),
    ("replace_app", {"ifname": "eth0", "pairs": ["26:3"]},
     ["dcb", "app", "replace", "dev", "eth0", "dscp-prio", "26:3"]),
])
def test_argv_table(action, values, argv):
    assert _dcb.DCB.argv(action, **values) == argv


@pytest.fixture
def qnode(tmp_path):
    n = QosNode(str(tmp_path / "root"))
    n.add_nic(mlx5())
    n.add_nic(veth())
    n.add_qos("ens1f0np0", FakeQos(pfc=(3,)))
    return n


def test_show_and_set_through_the_runner(qnode):
    host = qnode.host()
    assert _dcb.show(host, "pfc", "ens1f0np0")["enabled"] == [3]
    _dcb.DCB.call(host, "add_app", ifname="ens1f0np0", pairs=["26:3"])
    assert _dcb.show(host, "app", "ens1f0np0")["dscp_prio"] == {26: [3]}
    assert qnode.calls[1] == ["dcb", "app", "add", "dev", "ens1f0np0", "dscp-prio", "26:3"]


@pytest.mark.parametrize("call, error, message", [
    (lambda h: _dcb.show(h, "pfc", "data0"), NotSupported,
     "dcb -j pfc show dev data0: Attribute read: Operation not supported"),
    (lambda h: _dcb.show(h, "apptrust", "ens1f0np0"), NotSupported,       # iproute2 < 6.3
     'dcb -j apptrust show dev ens1f0np0: Object "apptrust" is unknown'),
    (lambda h: _dcb.show(h, "pfc", "nosuch0"), HostError,
     "dcb -j pfc show dev nosuch0 failed (rc=1): Attribute read: No such device"),
    (lambda h: _dcb.DCB.call(h, "del_app", ifname="ens1f0np0", pairs=["26:3"]), HostError,
     "dcb app del dev ens1f0np0 dscp-prio 26:3 failed (rc=1): Attribute write: No such file or directory"),
    (lambda h: _dcb.DCB.call(h, "add_app", ifname="data0", pairs=["26:3"]), NotSupported,
     "dcb app add dev data0 dscp-prio 26:3: Attribute write: Operation not supported"),
])
def test_failures_name_argv(qnode, call, error, message):
    with pytest.raises(error) as excinfo:
        call(qnode.host())
    assert str(excinfo.value) == message
    assert isinstance(excinfo.value, NotSupported) == (error is NotSupported)


@pytest.mark.parametrize("rc, out, err, failed, unsupported", [
    (0, "", "", False, False),
    (0, "", "Error: some replace failed\n", True, False),     # dcb app replace: stderr with exit 0
    (0, "", "  \n", False, False),
    (1, "out text\n", "", True, False),
    (0, "", "Attribute write: Operation not supported\n", True, True),
])
def test_set_check_counts_stderr_as_failure(rc, out, err, failed, unsupported):
    failure = _dcb.DCB.checks["set_pfc"](rc, out, err)
    assert (failure is not None) == failed
    if failed:
        assert failure.unsupported == unsupported and failure.message
