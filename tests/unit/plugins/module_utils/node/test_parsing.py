# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests for plugins/module_utils/node/_parsing.py, what every tool parser shares."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _dcb_parse
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _ibtools
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _iproute
from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _plan as _irqplan
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _parsing
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host

from ....conftest import fixture


# --------------------------------------------------------------------------- is_not_supported

@pytest.mark.parametrize("stderr, expected", [
    (fixture("ethtool-g.veth.captured.stderr.txt"), True),
    (fixture("ethtool-c.veth.captured.stderr.txt"), True),
    (fixture("ethtool-l.lo.captured.stderr.txt"), True),
    (fixture("ethtool-g.veth.ioctl.stderr.txt"), True),
    (fixture("ethtool-c.virtio_net.ioctl.stderr.txt"), True),
    ("netlink error: Operation not supported", True),
    ("Cannot get device ring settings: Operation not supported", True),
    ("Cannot get device coalesce settings: Operation not supported", True),
    ("Operation not supported", True),
    ("netlink error: Unknown error 524", True),
    ("netlink error: no device matches name (offset 24)\nnetlink error: No such device", False),
    ("Cannot get device ring settings: Operation not permitted", False),
    ("netlink error: Invalid argument", False),
    ("", False),
])
def test_is_not_supported(stderr, expected):
    assert _parsing.is_not_supported(stderr) is expected


# --------------------------------------------------------------------------- helpers

def test_parse_error_is_a_value_error():
    assert issubclass(_parsing.ParseError, ValueError)


@pytest.mark.parametrize("value, expected", [("8192", 8192), (" 0 ", 0), ("n/a", None), ("N/A", None)])
def test_int_or_none(value, expected):
    assert _parsing.int_or_none(value, "tool", "line") == expected


def test_int_or_none_names_tool_and_line():
    with pytest.raises(_parsing.ParseError, match=r"^tool -x: expected an integer or 'n/a' in line 'RX: lots'$"):
        _parsing.int_or_none("lots", "tool -x", "RX: lots")


@pytest.mark.parametrize("line, expected", [
    ("RX Mini:\tn/a", ("rx mini", "n/a")),
    ("hca_id:\tmlx5_0", ("hca_id", "mlx5_0")),
    ("GID[  0]:  fe80::1", ("gid[ 0]", "fe80::1")),
    ("no colon here", None),
    (": value without label", None),
])
def test_split_field(line, expected):
    assert _parsing.split_field(line) == expected


@pytest.mark.parametrize("label, expected", [("RX Buf Len", "rx_buf_len"), ("rx-frames-irq", "rx_frames_irq"),
                                             ("  CQE mode ", "cqe_mode")])
def test_snake(label, expected):
    assert _parsing.snake(label) == expected


@pytest.mark.parametrize("text, detail", [(None, "expected text output, got NoneType"), (" \n\n", "empty output")])
def test_split_lines_errors(text, detail):
    with pytest.raises(_parsing.ParseError, match="^tool: " + detail):
        _parsing.split_lines(text, "tool")


@pytest.mark.parametrize("func, text, detail", [
    (lambda t: _parsing.load_json_list(t, "tool", "links"), "{", "malformed JSON"),
    (lambda t: _parsing.load_json_list(t, "tool", "links"), "{}", "expected a JSON list of links, got dict"),
    (lambda t: _parsing.load_json_list(t, "tool", "links"), "[1]", "entry 0 is int, not an object"),
    (lambda t: _parsing.load_json_list(t, "tool", "links"), None, "expected JSON text, got NoneType"),
    (lambda t: _parsing.load_json_object(t, "tool"), "[]",
     "expected a JSON object, got list"),
])
def test_json_loading_errors(func, text, detail):
    with pytest.raises(_parsing.ParseError, match="^tool: " + detail):
        func(text)


def test_json_loading():
    assert _parsing.load_json_list('[{"a": 1}]', "tool", "links") == [{"a": 1}]
    assert _parsing.load_json_object('{"a": [1]}', "tool") == {"a": [1]}


# --------------------------------------------------------------------------- JSON nested too deeply
# json.loads raises RecursionError (not ValueError) for input nested deeper than the interpreter's
# recursion limit: a truncated or garbled tool output of '[' or '{"a":' repeated.  Every JSON reader of
# tool output says which tool printed it, like for any other malformed JSON.
DEEP = ["[" * 100000, '{"a": ' * 100000, "[" * 100000 + "]" * 100000]


JSON_READERS = [
    ("tool", lambda t: _parsing.load_json(t, "tool")),
    ("tool", lambda t: _parsing.load_json_list(t, "tool", "links")),
    ("tool", lambda t: _parsing.load_json_object(t, "tool")),
    ("rdma -j link", _ibtools.parse_rdma_link_json),
    ("rdma -j link", _ibtools.parse_rdma_link),
    ("rdma -j dev", _ibtools.parse_rdma_dev),
    ("ip -j link", _iproute.parse_ip_link_json),
    ("ip -j addr", _iproute.parse_ip_addr_json),
    ("ip -j route get", _iproute.parse_ip_route_get_json),
    ("dcb pfc show", _dcb_parse.parse_dcb_pfc),
    ("dcb app show", _dcb_parse.parse_dcb_app_json),
    ("dcb apptrust show", _dcb_parse.parse_dcb_apptrust_json),
    ("dcb ets show", _dcb_parse.parse_dcb_ets),
    ("dcb buffer show", _dcb_parse.parse_dcb_buffer),
    ("dcb maxrate show", _dcb_parse.parse_dcb_maxrate),
]


@pytest.mark.parametrize("tool, read", JSON_READERS)
@pytest.mark.parametrize("text", DEEP, ids=["array", "object", "closed-array"])
def test_json_nested_too_deeply_is_a_parse_error_naming_the_tool(tool, read, text):
    with pytest.raises(_parsing.ParseError, match="nested too deeply") as e:
        read(text)
    assert str(e.value).startswith(tool + ":") and len(str(e.value)) < 200


def test_json_files_nested_too_deeply_are_the_readers_own_errors(tmp_path):
    """Files the collection reads as JSON (the profile record) fail as an unreadable file, not a crash."""
    (tmp_path / "profile.json").write_text("[" * 100000)
    with pytest.raises(HostError, match="nested too deeply"):
        Host(root=str(tmp_path)).read_json("/profile.json")
    # the boot applier's policy file written by an earlier call: unreadable counts as no earlier entries
    entry = {"interface": "data0", "policy": "local"}
    assert _irqplan.merged_policy({"content": b"[" * 100000}, [entry]) == [entry]
