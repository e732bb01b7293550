# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fail small: the QoS readers fed empty, truncated, garbled or unknown output raise only ParseError
naming the tool; an unreadable output reaches roce_qos/roce_qos_info as an unreadable part, not a crash."""
from __future__ import annotations

import os
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _dcb_parse
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _mlnx_qos
from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _observe as _qosobserve
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import ParseError

REAL = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "real")

PARSERS = [
    ("dcb pfc show", _dcb_parse.parse_dcb_pfc_json), ("dcb pfc show", _dcb_parse.parse_dcb_pfc),
    ("dcb app show", _dcb_parse.parse_dcb_app_json), ("dcb apptrust show", _dcb_parse.parse_dcb_apptrust_json),
    ("dcb ets show", _dcb_parse.parse_dcb_ets), ("dcb buffer show", _dcb_parse.parse_dcb_buffer),
    ("dcb maxrate show", _dcb_parse.parse_dcb_maxrate), ("mlnx_qos", _mlnx_qos.parse_mlnx_qos),
]


def _bodies():
    out = []
    for sub in ("dcb", "mlnx_qos"):
        for name in sorted(os.listdir(os.path.join(REAL, sub))):
            with open(os.path.join(REAL, sub, name)) as f:
                out.append("".join(line for line in f if not line.startswith("# ")))
    return out


BODIES = _bodies()
# hypothesis keeps its cache in ./.hypothesis by default: inside the collection tree it would end up in the
# built tarball (test_collection_build), so it goes to a temporary directory
set_hypothesis_home_dir(tempfile.mkdtemp(prefix="hypothesis-qos-"))
SETTINGS = settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


def _fails_small(tool, parser, text):
    try:
        parser(text)
    except ParseError as e:
        assert str(e).startswith(tool), (tool, str(e))


@pytest.mark.parametrize("tool, parser", PARSERS)
@pytest.mark.parametrize("text", ["", "\n", "   \n\t\n", "{}", "[]", "null", "{", "garbage", "prio-pfc", "tc: 0"])
def test_fixed_bad_inputs(tool, parser, text):
    _fails_small(tool, parser, text)


@pytest.mark.parametrize("tool, parser", PARSERS)
@SETTINGS
@given(text=st.text(max_size=300))
def test_any_text(tool, parser, text):
    _fails_small(tool, parser, text)


@pytest.mark.parametrize("tool, parser", PARSERS)
@SETTINGS
@given(data=st.data())
def test_truncated_and_garbled_captures(tool, parser, data):
    body = data.draw(st.sampled_from(BODIES))
    cut = data.draw(st.integers(min_value=0, max_value=len(body)))
    text = body[:cut]
    if data.draw(st.booleans()) and text:
        at = data.draw(st.integers(min_value=0, max_value=len(text) - 1))
        text = text[:at] + data.draw(st.text(min_size=1, max_size=5)) + text[at + 1:]
    _fails_small(tool, parser, text)


JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 300) | st.text(max_size=4),
                    lambda inner: st.lists(inner, max_size=9) | st.dictionaries(
                        st.sampled_from(["prio_pfc", "pfc_cap", "dscp_prio", "default_prio", "pcp_prio", "order",
                                         "tc_tsa", "tc_bw", "prio_tc", "prio_buffer", "buffer_size", "total_size",
                                         "tc_maxrate", "willing", "ets_cap"]), inner, max_size=5), max_leaves=30)


@pytest.mark.parametrize("tool, parser", PARSERS[:-1])
@SETTINGS
@given(value=JSON)
def test_unknown_json_shapes(tool, parser, value):
    import json
    _fails_small(tool, parser, json.dumps(value))


# ---------------------------------------------------------------- an unreadable part is reported, not a crash
class _Host(object):
    """Answers every command with ``out``; dcb and mlnx_qos are installed."""

    def __init__(self, out):
        self.out = out
        self.calls = []

    def which(self, name):
        return "/usr/bin/" + name

    def bin(self, name):
        return "/usr/bin/" + name

    def run(self, argv, *args, **kwargs):
        self.calls.append(argv)
        return 0, self.out, ""


@pytest.mark.parametrize("backend, out", [
    ("dcb", '{"prio_pfc":[true]}'),                            # a PFC report of another shape
    ("mlnx_qos", "DCBX mode: OS controlled\nPFC configuration:\n\tenabled 0 0 0 1\n"),
])
def test_observe_nic_reports_unreadable_output(backend, out):
    obs = _qosobserve.observe_nic(_Host(out), "eth0", backend)
    assert obs["supported"] is False
    assert obs["reason"].startswith("unreadable: ")


def test_observe_nic_keeps_pfc_and_app_when_ets_is_unreadable():
    class Host(_Host):
        def run(self, argv, *args, **kwargs):
            obj = argv[2]
            answers = {"pfc": '{"prio_pfc":[false,false,false,true,false,false,false,false]}',
                       "app": '{"dscp_prio":[[26,3," "]]}', "apptrust": '{"order":["dscp"]}',
                       "ets": "tc-tsa 0:strict", "buffer": '{"prio_buffer":[0,0,0,1,0,0,0,0],'
                       '"buffer_size":[1,2,0,0,0,0,0,0],"total_size":9}'}
            return 0, answers[obj], ""
    obs = _qosobserve.observe_nic(Host(""), "eth0", "dcb")
    assert obs["supported"] is True and obs["pfc"] == [3] and obs["dscp"] == {26: [3]}
    assert obs["ets"]["readable"] is False and "dcb ets show" in obs["ets"]["reason"]
    assert obs["buffer"] == {"prio_buffer": [0, 0, 0, 1, 0, 0, 0, 0], "buffer_size": [1, 2, 0, 0, 0, 0, 0, 0],
                             "total_size": 9}
