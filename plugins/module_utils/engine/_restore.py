# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Rollback's apply: :func:`restore_plan` writes every key best effort and never reverts; the files
edited by hand since the collection wrote them are found (:func:`edited_files`) and kept beside the
file before it is restored (:func:`keep_edits`).  The engine's rollback and a failed node_tuning
call's :class:`_transaction.Transaction` restore through it."""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _files
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._apply import Domains
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._domain import Refused
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._journal import Journal
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Change, Plan
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional, Tuple


if TYPE_CHECKING:
    Restored = Tuple[List[Change], List[Dict[str, str]], List[Dict[str, str]]]


def restore_plan(host: Host, plan: Plan, domains: Domains) -> Restored:
    """Rollback's apply: best effort per key, in order; nothing is ever reverted.

    Each key is written on its own, so one key that cannot be restored (its interface is gone, a
    package purge is refused, ...) neither stops the others nor undoes them; then every written key
    is read back (after all writes, as some keys settle only with a later one, e.g. the values in
    a configfs directory that is removed after them).  Returns the restored changes (``after`` as
    read back), the keys the node refused with nothing changed (``Refused``, and a directory the
    collection created that now holds someone else's files: left in place), and the keys that
    could not be restored, each ``{key, reason}``.
    """
    written: List[Change] = []
    restored: List[Change] = []
    refused: List[Dict[str, str]] = []
    failed: List[Dict[str, str]] = []
    for c in plan:
        try:
            domains.write_value(host, c.key, c.after)
            written.append(c)
        except Refused as e:
            refused.append({"key": c.key, "reason": str(e)})
        except Exception as e:  # noqa: BLE001 - one key's failure, whatever it is, must not stop rollback
            kept = _occupied_dir(host, c)
            if kept:
                refused.append({"key": c.key, "reason": kept})
            else:
                failed.append({"key": c.key, "reason": _reason(e)})
    for c in written:
        try:
            actual = domains.read_value(host, c.key)
        except Exception as e:  # noqa: BLE001
            failed.append({"key": c.key, "reason": "written, but reading it back failed: %s" % _reason(e)})
            continue
        if not domains.same(c.key, actual, c.after):
            failed.append({"key": c.key, "reason": "read back %r after writing %r" % (actual, c.after)})
            continue
        restored.append(Change(c.key, c.before, actual))
    return restored, refused, failed


def _reason(e: Exception) -> str:
    return str(e) if isinstance(e, (HostError, OSError)) else "%s: %s" % (type(e).__name__, e)


def _occupied_dir(host: Host, c: Change) -> Optional[str]:
    """The reason a directory the collection created is kept: it holds someone else's files."""
    if c.domain != "dir" or c.after or not host.isdir(c.target):
        return None
    names = host.listdir(c.target)
    if not names:
        return None
    shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
    return "directory %s was created by hpcnet.rdma but now holds files it did not write (%s); " \
           "left in place" % (c.target, shown)


def edited_files(host: Host, journal: Journal, plan: Plan) -> List[Dict[str, str]]:
    """Rollback: the files of ``plan`` edited by hand since the collection last wrote them (their
    bytes differ from the journal's newest ``after``), each with the copy that keeps the edit."""
    edits = []
    for c in plan:
        if c.domain != "file":
            continue
        found, written = journal.last_written(c.key)
        if found and _files.edited(c.before, written):
            edits.append({"key": c.key, "path": c.target, "copy": _files.edited_copy(host, c.target)})
    return edits


def keep_edits(host: Host, plan: Plan, out: Dict[str, Any]) -> Tuple[Plan, List[Dict[str, str]]]:
    """Write each hand-edited file's copy (``out["kept_edits"]``) before rollback restores it; a file
    whose copy cannot be written is not restored (its edit would be lost) and is reported unrestorable."""
    failed = []
    skip = set()
    kept = []
    for edit in out["kept_edits"]:
        try:
            host.write_file(edit["copy"], _files.bare(out["previous"][edit["key"]]))
            kept.append(edit)
        except HostError as e:
            skip.add(edit["key"])
            failed.append({"key": edit["key"], "reason": "edited by hand since the tune, and its copy could not be "
                                                         "kept, so it was not restored: %s" % e})
    out["kept_edits"] = kept
    return Plan([c for c in plan if c.key not in skip]), failed
