# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``scontrol show node -o`` read from real captures (tests/unit/fixtures/real/slurm/, each with its
source), and the drain/resume rule as a table: drain with our reason, resume only what we drained,
never touch a node someone else drained."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.health import _slurm
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import ParseError

from ....fixtures.real.loader import real_capture, real_files


def capture(name):
    return real_capture("slurm/" + name)


CAPTURES = [p.split("/", 1)[1] for p in real_files("slurm")]


@pytest.mark.parametrize("name", CAPTURES)
def test_real_captures_parse(name):
    node = _slurm.parse_node(capture(name))
    assert node["NodeName"] and node["State"]
    assert node["flags"][0] in ("IDLE", "ALLOCATED", "MIXED", "DOWN", "UNKNOWN", "COMPLETING")
    if "DRAIN" in node["flags"]:
        assert node["reason"] and node["reason_user"] and node["reason_time"]
    assert "Reason" not in node            # read apart: it may hold spaces and '='


def test_a_drained_node_of_the_lab():
    node = _slurm.parse_node(capture("scontrol_show_node_o.drained_ours.txt"))
    assert node["flags"] == ["IDLE", "DRAIN"]
    assert node["reason"].startswith("hpcnet-rdma:")
    assert node["reason_user"] == "root"


def test_someone_elses_reason_keeps_its_spaces_and_equals():
    node = _slurm.parse_node(capture("scontrol_show_node_o.drained_other.txt"))
    assert node["reason"] == "disk replacement ticket=42"
    assert node["OS"] == "Linux 6.18.44-fc-v1300 #1 SMP PREEMPT_DYNAMIC @0"
    assert node["ExtSensorsTemp"] == "n/s" and node["AllocTRES"] == ""
    assert _slurm.decide(node, None)["action"] == "none"


def test_an_idle_node_has_no_reason():
    node = _slurm.parse_node(capture("scontrol_show_node_o.idle.txt"))
    assert (node["flags"], node["reason"], node["NodeName"]) == (["IDLE"], None, "health-n1")


@pytest.mark.parametrize("line, flags, reason, user", [
    # reconstructed from the field syntax of the real captures above
    ("NodeName=n1 Arch=x86_64 State=IDLE+DRAIN Partitions=lab Reason=NHC: check failed opt=value [root@2026-12-06T20:00:00]",
     ["IDLE", "DRAIN"], "NHC: check failed opt=value", "root"),
    ("NodeName=n1 State=DOWN*+DRAIN Reason=Not responding [slurm@2026-12-06T20:00:00] Comment=(null)",
     ["DOWN", "DRAIN"], "Not responding", "slurm"),
    ("NodeName=n1 OS=Linux 6.1.0-28-amd64 #1 SMP PREEMPT_DYNAMIC Debian State=IDLE", ["IDLE"], None, None),
])
def test_fields_with_spaces_and_equals(line, flags, reason, user):
    node = _slurm.parse_node(line)
    assert (node["flags"], node["reason"], node["reason_user"]) == (flags, reason, user)


@pytest.mark.parametrize("text", ["", "Node n1 not found\n", "NodeName=a State=IDLE\nNodeName=b State=IDLE\n", "NodeName=a Arch=x"])
def test_not_one_node_is_a_parse_error(text):
    with pytest.raises(ParseError, match="scontrol show node -o"):
        _slurm.parse_node(text)


OURS = "hpcnet-rdma:port.mtu rxe0 port 1 active MTU 1024 is above data0's MTU 512"


def node(state, reason=None):
    return {"NodeName": "n1", "flags": state.split("+"), "reason": reason}


@pytest.mark.parametrize("current, verdict, action", [
    (node("IDLE"), None, "none"),
    (node("IDLE"), OURS, "drain"),
    (node("ALLOCATED"), OURS, "drain"),                                       # running jobs finish, no new ones
    (node("IDLE+DRAIN", OURS), OURS, "none"),                                 # already, same reason
    (node("IDLE+DRAIN", "hpcnet-rdma:link.down data0 operstate is down"), OURS, "drain"),   # ours, new reason
    (node("IDLE+DRAIN", OURS), None, "resume"),                               # ours and fixed
    (node("IDLE+DRAIN", "disk replacement"), None, "none"),                   # someone else's: stays drained
    (node("IDLE+DRAIN", "disk replacement"), OURS, "none"),                   # ... and keeps its reason
    (node("DOWN+DRAIN", "Kill task failed"), None, "none"),
    (node("IDLE+DRAIN", "xhpcnet-rdma:port.down"), None, "none"),             # only a reason *starting* with ours
])
def test_decide(current, verdict, action):
    d = _slurm.decide(current, verdict)
    assert d["action"] == action, d["why"]
    assert d["reason"] == (verdict if action == "drain" else None)


def test_argv_tables():
    assert _slurm.SCONTROL.argv("drain", node="n1", reason=OURS) == [
        "scontrol", "update", "NodeName=n1", "State=DRAIN", "Reason=" + OURS]
    assert _slurm.SCONTROL.argv("resume", node="n1") == ["scontrol", "update", "NodeName=n1", "State=RESUME"]
    assert _slurm.SCONTROL.argv("show_node", node="n1") == ["scontrol", "show", "node", "-o", "n1"]
