# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/node/_mlnx_qos.py: the report parser against reconstructed outputs
(tests/unit/fixtures/README.md), and the argv table and its check through the runner against
tests/unit/fake_qos.py (a simulation)."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _mlnx_qos
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError, NotSupported
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import ParseError

from ....conftest import fixture, mlx5, veth
from ....fake_qos import FakeQos, QosNode


# --------------------------------------------------------------------------- mlnx_qos
def test_mlnx_qos_trust_dscp_report():
    parsed = _mlnx_qos.parse_mlnx_qos(fixture("mlnx_qos.mlx5_core.dscp.txt"))
    assert parsed["dcbx_mode"] == "os"
    assert parsed["trust"] == "dscp"
    assert parsed["pfc"] == [3]
    assert parsed["pfc_buffer"] == [0, 0, 0, 1, 0, 0, 0, 0]
    assert parsed["cable_len"] == 7
    assert parsed["receive_buffer_size"] == [130944, 130944, 0, 0, 0, 0, 0, 0]
    expected = dict((d, d >> 3) for d in range(64))
    expected.update({8: 0, 9: 0})      # remapped; prio:0 wraps onto a second line
    assert parsed["dscp2prio"] == expected
    assert parsed["tc"][1] == {"ratelimit": "unlimited", "tsa": "vendor", "bw": None, "priorities": [0]}
    assert sorted(parsed["tc"]) == list(range(8))
    assert parsed["notes"] == []


def test_mlnx_qos_trust_pcp_report_has_no_dscp_table():
    parsed = _mlnx_qos.parse_mlnx_qos(fixture("mlnx_qos.mlx5_core.pcp.txt"))
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
    with pytest.raises(ParseError, match="mlnx_qos: .*" + detail):
        _mlnx_qos.parse_mlnx_qos(text)


# --------------------------------------------------------------------------- the tool, through the runner
@pytest.mark.parametrize("action, values, argv", [
    ("show", {"ifname": "eth0"}, ["mlnx_qos", "-i", "eth0"]),
    ("set_pfc", {"ifname": "eth0", "pfc": "0,0,0,1,0,0,0,0"}, ["mlnx_qos", "-i", "eth0", "--pfc", "0,0,0,1,0,0,0,0"]),
    ("set_trust", {"ifname": "eth0", "trust": "dscp"}, ["mlnx_qos", "-i", "eth0", "--trust", "dscp"]),
    ("set_dscp2prio", {"ifname": "eth0", "op": "set", "dscp": 26, "prio": 3},
     ["mlnx_qos", "-i", "eth0", "--dscp2prio", "set,26,3"]),
    ("set_dscp2prio", {"ifname": "eth0", "op": "del", "dscp": 26, "prio": 3},
     ["mlnx_qos", "-i", "eth0", "--dscp2prio", "del,26,3"]),
])
def test_argv_table(action, values, argv):
    assert _mlnx_qos.MLNX_QOS.argv(action, **values) == argv


@pytest.fixture
def qnode(tmp_path):
    n = QosNode(str(tmp_path / "root"))
    n.add_nic(mlx5())
    n.add_nic(veth())
    n.add_qos("ens1f0np0", FakeQos(pfc=(3,)))
    return n


def test_every_call_returns_the_parsed_report(qnode):
    host = qnode.host()
    assert _mlnx_qos.report(host, "ens1f0np0")["pfc"] == [3]
    state = _mlnx_qos.MLNX_QOS.call(host, "set_trust", ifname="ens1f0np0", trust="dscp")
    assert state["trust"] == "dscp" and state["dscp2prio"][26] == 3
    state = _mlnx_qos.MLNX_QOS.call(host, "set_dscp2prio", ifname="ens1f0np0", op="set", dscp=26, prio=5)
    assert state["dscp2prio"][26] == 5
    assert qnode.calls[-1] == ["mlnx_qos", "-i", "ens1f0np0", "--dscp2prio", "set,26,5"]


def test_unsupported_driver_is_not_supported(qnode):
    with pytest.raises(NotSupported) as excinfo:
        _mlnx_qos.report(qnode.host(), "data0")
    assert str(excinfo.value) == ("mlnx_qos -i data0: Traceback (most recent call last): OSError: [Errno 95] "
                                  "Operation not supported (simulated)")


def test_refusal_printed_on_stdout_is_a_host_error(qnode):
    qnode.fail_on = "--pfc"
    with pytest.raises(HostError) as excinfo:
        _mlnx_qos.MLNX_QOS.call(qnode.host(), "set_pfc", ifname="ens1f0np0", pfc="1,1")
    assert not isinstance(excinfo.value, NotSupported)
    assert str(excinfo.value).startswith("mlnx_qos -i ens1f0np0 --pfc 1,1 failed (rc=1): ")


@pytest.mark.parametrize("rc, out, err, failed, message", [
    (0, fixture("mlnx_qos.mlx5_core.pcp.txt"), "", False, None),
    (0, "trust and dscp2prio commands cannot be used at the same time.\n", "", True,
     "trust and dscp2prio commands cannot be used at the same time."),      # exit 0, no report
    (1, "x " * 400, "", True, " x" * 150),                                   # the last 300 characters
])
def test_report_check(rc, out, err, failed, message):
    failure = _mlnx_qos.MLNX_QOS.checks["show"](rc, out, err)
    assert (failure is not None) == failed
    if failed:
        assert failure.message == message and not failure.unsupported
