# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Slurm's ``scontrol`` for the node health check: read a node's state and reason, drain, resume.

:func:`parse_node` reads one line of ``scontrol show node -o NAME`` (``Key=Value`` fields separated
by spaces; a value may hold spaces - ``OS=Linux 6.1.0-28-amd64 #1 SMP ...`` - and ``Reason=`` is free
text that ends with ``[user@time]``).  :func:`decide` is the whole drain/resume rule, pure: drain a
node the check failed with ``Reason=hpcnet-rdma:<code> <summary>``; resume it once the check passes
*only* when the reason it is drained with is ours; never touch a node someone else drained.
"""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import lazy_re, ParseError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._runner import Tool

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, Optional

OURS = "hpcnet-rdma:"
_FIELD = lazy_re(r"(?:^|\s)([A-Za-z][A-Za-z0-9_/:.-]*)=")
# slurmctld ends every reason with [user@time]: the reason is everything up to that (spaces and '=' too);
# one without it (never seen, kept for safety) ends at the next field
_REASON = lazy_re(r"(?:^|\s)Reason=(.*?) \[([^\]@\s]*)@([^\]\s]*)\](?=\s|$)")
_REASON_BARE = lazy_re(r"(?:^|\s)Reason=(.*?)(?=\s+[A-Za-z][A-Za-z0-9_]*=|\s*$)")


def parse_node(text: str) -> Dict[str, Any]:
    """One node of ``scontrol show node -o``: every field as text, plus ``flags`` (the parts of
    State: ``IDLE+DRAIN`` -> [IDLE, DRAIN], a trailing ``*`` - not responding - kept apart as
    ``not_responding``) and ``reason``/``reason_user``/``reason_time`` (None when there is none)."""
    lines = [ln for ln in (text or "").splitlines() if ln.strip()]
    if len(lines) != 1 or not lines[0].lstrip().startswith("NodeName="):
        raise ParseError("scontrol show node -o: expected one line starting with NodeName=, got %r" % (text or "")[:200])
    line = lines[0].strip()
    reason = None
    m = _REASON.search(line)
    if m:
        reason = {"text": m.group(1).strip(), "user": m.group(2), "time": m.group(3)}
    else:
        m = _REASON_BARE.search(line)
        if m:
            reason = {"text": m.group(1).strip(), "user": None, "time": None}
    if m:
        line = (line[:m.start()] + " " + line[m.end():]).strip()
    fields: Dict[str, Any] = {}
    starts = list(_FIELD.finditer(line))
    for i, f in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(line)
        fields[f.group(1)] = line[f.end():end].strip()
    if "State" not in fields:
        raise ParseError("scontrol show node -o: no State= in %r" % line[:200])
    state = fields["State"]
    fields["not_responding"] = "*" in state
    fields["flags"] = [s.rstrip("*") for s in state.split("+") if s]
    fields["reason"] = reason["text"] if reason else None
    fields["reason_user"] = reason["user"] if reason else None
    fields["reason_time"] = reason["time"] if reason else None
    return fields


SCONTROL = Tool("scontrol", {
    "show_node": ["show", "node", "-o", "{node}"],
    "drain": ["update", "NodeName={node}", "State=DRAIN", "Reason={reason}"],
    "resume": ["update", "NodeName={node}", "State=RESUME"],
}, parsers={"show_node": parse_node})


def is_ours(reason: Optional[str]) -> bool:
    return bool(reason) and reason.startswith(OURS)


def decide(node: Dict[str, Any], reason: Optional[str]) -> Dict[str, Any]:
    """What to do with ``node`` (:func:`parse_node`) given the check's drain ``reason`` (None: passed).

    {action: none|drain|resume, reason, why}.  Drained (DRAIN among the flags) by someone else - any
    reason not starting ``hpcnet-rdma:`` - is left alone whatever the check says."""
    drained = "DRAIN" in node.get("flags", [])
    current = node.get("reason")
    name = node.get("NodeName")
    if reason is not None:
        if drained and not is_ours(current):
            return {"action": "none", "reason": None,
                    "why": "%s is drained by someone else (%r): left drained, reason kept" % (name, current)}
        if drained and current == reason:
            return {"action": "none", "reason": None, "why": "%s is drained already with this reason" % name}
        return {"action": "drain", "reason": reason, "why": "%s fails the check" % name}
    if drained and is_ours(current):
        return {"action": "resume", "reason": None, "why": "%s passes the check; it was drained by it (%r)" % (name, current)}
    if drained:
        return {"action": "none", "reason": None,
                "why": "%s passes the check but was drained by someone else (%r): left drained" % (name, current)}
    return {"action": "none", "reason": None, "why": "%s passes the check and is not drained" % name}
