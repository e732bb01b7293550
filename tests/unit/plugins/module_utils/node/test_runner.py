# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Table-driven tests for plugins/module_utils/node/_runner.py: argv from the format table, the rc
check with an error naming the tool and argv, and the parser applied to stdout."""
from __future__ import annotations

from typing import Optional

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError, NotSupported
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._runner import Failure, Tool, rc_check

from ....conftest import host_answering


def _must_say_done(rc: int, out: str, err: str) -> Optional[Failure]:
    """A tool that exits 0 on errors: success only when stdout says 'done'."""
    return None if rc == 0 and "done" in out else Failure((err or out).strip(), False)


DEMO = Tool("demo", {
    "show": ["-j", "show", "dev", "{ifname}"],
    "set": ["-G", "{ifname}", "{*args}"],
    "pair": ["--map", "{dscp},{prio}"],
    "bare": [],
    "strict": ["apply", "{ifname}"],
}, parsers={"show": lambda out: {"parsed": out.strip()}}, checks={"strict": _must_say_done})


@pytest.mark.parametrize("action, values, argv", [
    ("show", {"ifname": "eth0"}, ["demo", "-j", "show", "dev", "eth0"]),
    ("set", {"ifname": "eth0", "args": ["rx", 4096, "tx", "512"]}, ["demo", "-G", "eth0", "rx", "4096", "tx", "512"]),
    ("set", {"ifname": "eth0", "args": []}, ["demo", "-G", "eth0"]),
    ("pair", {"dscp": 26, "prio": 3}, ["demo", "--map", "26,3"]),
    ("bare", {}, ["demo"]),
    ("show", {"ifname": "we{ird}"}, ["demo", "-j", "show", "dev", "we{ird}"]),   # values are not re-formatted
])
def test_argv_is_built_from_the_table(action, values, argv):
    assert DEMO.argv(action, **values) == argv


def test_unknown_action_is_named():
    with pytest.raises(ValueError, match="demo has no action 'nope'"):
        DEMO.argv("nope")


@pytest.mark.parametrize("action, values, answer, expected", [
    ("show", {"ifname": "eth0"}, (0, " x \n", ""), {"parsed": "x"}),        # parser applied
    ("set", {"ifname": "eth0", "args": ["rx", 1]}, (0, "raw\n", "ignored"), "raw\n"),  # no parser: stdout
    ("strict", {"ifname": "eth0"}, (0, "done\n", ""), "done\n"),
])
def test_call_runs_argv_and_parses(tmp_path, action, values, answer, expected):
    host, rec = host_answering(tmp_path, *answer)
    assert DEMO.call(host, action, **values) == expected
    assert rec.calls == [["/usr/sbin/demo"] + DEMO.argv(action, **values)[1:]]


@pytest.mark.parametrize("action, values, answer, error, message", [
    ("show", {"ifname": "eth0"}, (1, "", "netlink error: No such device\n"), HostError,
     "demo -j show dev eth0 failed (rc=1): netlink error: No such device"),
    ("set", {"ifname": "eth0", "args": ["rx", 9]}, (2, "out only\n", ""), HostError,
     "demo -G eth0 rx 9 failed (rc=2): out only"),
    ("show", {"ifname": "eth0"}, (1, "", "netlink error: Operation not supported\n"), NotSupported,
     "demo -j show dev eth0: netlink error: Operation not supported"),
    ("strict", {"ifname": "eth0"}, (0, "", "Error: bad\n"), HostError,
     "demo apply eth0 failed (rc=0): Error: bad"),                             # the action's own check
])
def test_failure_names_tool_and_argv(tmp_path, action, values, answer, error, message):
    host, _rec = host_answering(tmp_path, *answer)
    with pytest.raises(error) as excinfo:
        DEMO.call(host, action, **values)
    assert str(excinfo.value) == message
    if error is HostError:
        assert not isinstance(excinfo.value, NotSupported)


def test_parser_not_applied_on_failure(tmp_path):
    host, _rec = host_answering(tmp_path, 1, "half output", "boom")
    with pytest.raises(HostError, match="boom"):
        Tool("demo", {"x": []}, parsers={"x": lambda out: pytest.fail("parser ran on a failed run")}).call(host, "x")


def test_run_returns_the_raw_result(tmp_path):
    host, rec = host_answering(tmp_path, 3, "o", "e")
    assert DEMO.run(host, "show", ifname="eth1") == (3, "o", "e")
    assert rec.calls == [["/usr/sbin/demo", "-j", "show", "dev", "eth1"]]


@pytest.mark.parametrize("rc, out, err, expected", [
    (0, "", "warning on stderr", None),
    (1, "stdout text", "", Failure("stdout text", False)),
    (1, "stdout text", " stderr text \n", Failure("stderr text", False)),
    (1, "", "Unknown error 524", Failure("Unknown error 524", True)),
])
def test_rc_check(rc, out, err, expected):
    assert rc_check(rc, out, err) == expected
