# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A node_tuning call's runs as one unit: :class:`Transaction` remembers each engine run that
committed a generation and, when a later run of the call fails, puts back what they applied."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._apply import Domains
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._journal import Journal
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._journal_file import DEFAULT_DIR
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._journal_schema import JournalError
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Change, Plan
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._restore import restore_plan
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host


class Transaction(object):
    """Several engine runs of one module call as one unit (hpcnet.rdma.node_tuning's steps): each run
    that committed a generation is remembered, so that when a later run of the call fails,
    :meth:`revert` puts back what the earlier ones applied - newest first - and takes their changes
    out of the journal, as ``tuning_state rollback`` would.  An engine joins the transaction of its
    module (``module.transaction``); a module without one runs alone, as ever."""

    def __init__(self, host: Host, journal_dir: str = DEFAULT_DIR) -> None:
        self.host = host
        self.journal = Journal(host, journal_dir)
        self.done: List[Tuple[str, Optional[int], List[Change], Domains]] = []
        self.step: Optional[str] = None   # the caller's name for the runs that follow (node_tuning: its step)
        # what of the journal directory the call found, so that a fully reverted call leaves none of it
        self._missing = self._missing_dirs(journal_dir)
        self._had_lock = host.exists(self.journal.lock_path)

    def _missing_dirs(self, journal_dir: str) -> List[str]:
        missing = []
        path = journal_dir.rstrip("/")
        while path and not self.host.exists(path):
            missing.append(path)
            path = path.rsplit("/", 1)[0]
        return missing   # innermost first

    def committed(self, name: str, gen: Optional[int], verified: List[Change], domains: Domains) -> None:
        self.done.append((self.step or name, gen, list(verified), domains))

    def revert(self) -> Tuple[List[Dict[str, Any]], List[Dict[str, str]]]:
        """Write back the ``before`` of every change the committed runs applied, newest first, best
        effort per key (:func:`_restore.restore_plan`), and take the restored keys out of their generations
        (what cannot be restored stays journaled, for rollback).  Returns ``[{label, generation,
        keys}]`` of the reverted runs and ``[{key, reason}]`` of the keys that stay applied."""
        reverted: List[Dict[str, Any]] = []
        failed: List[Dict[str, str]] = []
        if not self.done:
            return reverted, failed
        with self.host.lock(self.journal.lock_path) as lock:
            try:
                self.journal.load()
            except (JournalError, HostError) as e:   # the node is still reverted; the journal keeps everything
                failed.append({"key": "journal", "reason": str(e)})
                journal_ok = False
            else:
                journal_ok = True
            for label, gen, verified, domains in reversed(self.done):
                back = Plan()
                for c in reversed(verified):
                    moved = self._moved(domains, c)
                    if moved:   # another run changed it since (between two steps): theirs now
                        failed.append({"key": c.key, "reason": moved})
                    else:
                        back.add(c.key, c.after, c.before)
                restored, refused, unrestorable = restore_plan(self.host, back, domains)
                keys = [c.key for c in restored]
                failed.extend(refused + unrestorable)   # stays applied, and journaled for rollback
                if journal_ok and gen is not None:
                    try:
                        self.journal.restored(keys, [gen])
                    except (JournalError, HostError) as e:
                        failed.append({"key": "journal generation %d" % gen, "reason": str(e)})
                reverted.append({"label": label, "generation": gen, "keys": keys})
            if not self.journal.on_disk() and not self._had_lock:
                lock.remove()
        if not self.journal.on_disk():   # the directories the call made, innermost first while empty
            self.journal.remove_made([self.host.p(path) for path in reversed(self._missing)])
        return reverted, failed

    def _moved(self, domains: Domains, c: Change) -> Optional[str]:
        """Why ``c`` is not reverted: the node no longer holds what this call applied (None: revert it)."""
        try:
            actual = domains.read_value(self.host, c.key)
        except HostError as e:
            return "cannot be read to revert it: %s" % e
        if domains.same(c.key, actual, c.after):
            return None
        return "changed by someone else since this call applied it, so left as it is"
