# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Change, Plan and diff rendering: pure data, no node I/O.

A key is ``domain:object`` — ``sysctl:net.ipv4.tcp_rmem``, ``nic:eth0:mtu``,
``file:/etc/sysctl.d/90-hpcnet-rdma.conf``.  Values are JSON-able; a file's value is its
:data:`FileState` (``{"content": ..., "mode": "0644"}``) or None for "absent".
"""
from __future__ import annotations

import base64
import json

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, Iterator, List, Optional


class Change(object):
    __slots__ = ("key", "before", "after")

    def __init__(self, key: str, before: Any, after: Any) -> None:
        self.key = key
        self.before = before
        self.after = after

    @property
    def domain(self) -> str:
        return self.key.split(":", 1)[0]

    @property
    def target(self) -> str:
        return self.key.split(":", 1)[1]

    def as_dict(self) -> Dict[str, Any]:
        return {"key": self.key, "before": self.before, "after": self.after}

    def reverse(self) -> "Change":
        return Change(self.key, self.after, self.before)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Change) and self.as_dict() == other.as_dict()

    def __repr__(self) -> str:
        return "Change(%r, %r, %r)" % (self.key, self.before, self.after)


class Plan(object):
    """An ordered list of changes; keys are unique."""

    def __init__(self, changes: Optional[List[Change]] = None) -> None:
        self.changes: List[Change] = []
        for c in changes or []:
            self.add(c.key, c.before, c.after)

    def add(self, key: str, before: Any, after: Any) -> bool:
        """Add a change when ``before`` differs from ``after``; True when added."""
        if any(c.key == key for c in self.changes):
            raise ValueError("key %s planned twice" % key)
        if before == after:
            return False
        self.changes.append(Change(key, before, after))
        return True

    def __bool__(self) -> bool:
        return bool(self.changes)

    def __iter__(self) -> Iterator[Change]:
        return iter(self.changes)

    def __len__(self) -> int:
        return len(self.changes)

    def keys(self) -> List[str]:
        return [c.key for c in self.changes]

    def as_list(self) -> List[Dict[str, Any]]:
        return [c.as_dict() for c in self.changes]


def render_value(value: Any) -> str:
    """How one runtime value reads in a diff."""
    if value is None:
        return "(absent)"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def _file_text(state: Any) -> str:
    if state is None:
        return ""
    if "link" in state:
        return "symlink -> %s\n" % state["link"]
    if state.get("encoding") == "base64":   # bytes that are not UTF-8 (see _filestate.FileState)
        return base64.b64decode(state.get("content", "")).decode("utf-8", "replace")
    return state.get("content", "")


def render_diff(plan: Plan, label: str = "runtime") -> List[Dict[str, str]]:
    """Ansible ``diff`` entries: one per file, one for all runtime values."""
    entries: List[Dict[str, str]] = []
    before_lines: List[str] = []
    after_lines: List[str] = []
    for c in plan:
        if c.domain == "file":
            path = c.target
            entries.append({
                "before_header": path if c.before is not None else "%s (absent)" % path,
                "after_header": path if c.after is not None else "%s (absent)" % path,
                "before": _file_text(c.before),
                "after": _file_text(c.after),
            })
        else:
            before_lines.append("%s = %s\n" % (c.target, render_value(c.before)))
            after_lines.append("%s = %s\n" % (c.target, render_value(c.after)))
    if before_lines:
        entries.insert(0, {
            "before_header": "%s (before)" % label,
            "after_header": "%s (after)" % label,
            "before": "".join(before_lines),
            "after": "".join(after_lines),
        })
    return entries
