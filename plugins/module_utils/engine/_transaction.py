# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A node_tuning call's runs as one unit: :class:`Transaction` holds the journal lock for them all,
remembers each engine run that committed a generation and, when a later run of the call fails, puts
back what they applied."""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._apply import Domains
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._journal import Journal
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._journal_file import DEFAULT_DIR
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._journal_schema import JournalError
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Change, Plan
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._restore import restore_plan
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._filelock import FileLock
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional, Tuple


class Transaction(object):
    """Several engine runs of one module call as one unit (hpcnet.rdma.node_tuning's steps), under one
    journal lock: the first run that needs the lock takes it through :meth:`lock` and the transaction
    holds it until :meth:`release` at the end of the call, so no other run takes it between two runs
    of the call (the runs before the first that needs it wrote nothing).  Each run that committed a
    generation is remembered, so that when a later run of the call fails, :meth:`revert` puts back
    what the earlier ones applied - newest first, still under the lock - and takes their changes out
    of the journal, as ``tuning_state rollback`` would.  An engine joins the transaction of its module
    (``module.transaction``) and runs under its lock; a module without one runs alone, as ever."""

    def __init__(self, host: Host, journal_dir: str = DEFAULT_DIR) -> None:
        self.host = host
        self.journal_dir = journal_dir
        self.journal = Journal(host, journal_dir)
        self.done: List[Tuple[str, Optional[int], List[Change], Domains]] = []
        self.step: Optional[str] = None   # the caller's name for the runs that follow (node_tuning: its step)
        self._lock: Optional[FileLock] = None
        self._made: List[str] = []   # the journal directories the call made, so a failed call leaves none of them

    def holds(self, lock_path: str) -> bool:
        """Whether ``lock_path`` is this transaction's lock (an engine of the same journal runs under it)."""
        return lock_path == self.journal.lock_path

    def lock(self) -> None:
        """Make the journal directory (what is missing of it) and take its lock, once: held until
        :meth:`release`.  HostError when either cannot be done."""
        if self._lock is not None:
            return
        reason = self.journal.make_dir()
        if reason:
            raise HostError("journal_dir: %s cannot hold the journal (%s); give a writable local directory"
                            % (self.journal_dir, reason))
        self._made.extend(self.journal.made)
        lock = self.host.lock(self.journal.lock_path)
        lock.__enter__()
        self._lock = lock

    def release(self, failed: bool) -> None:
        """The end of the call: the lock is let go.  A call that ``failed`` and left no journal (it
        changed nothing, or its revert took every change out) first removes the lock file it created,
        while it holds it, and then the directories it made: it leaves the node as it found it."""
        lock, self._lock = self._lock, None
        gone = failed and not self.journal.on_disk()
        try:
            if lock is not None:
                try:
                    if gone and lock.created:
                        lock.remove()
                finally:
                    lock.__exit__(None, None, None)
        finally:
            if gone and self._made:
                self.journal.remove_made(self._made)
            self._made = []

    def committed(self, name: str, gen: Optional[int], verified: List[Change], domains: Domains) -> None:
        self.done.append((self.step or name, gen, list(verified), domains))

    def revert(self) -> Tuple[List[Dict[str, Any]], List[Dict[str, str]]]:
        """Write back the ``before`` of every change the committed runs applied, newest first, best
        effort per key (:func:`_restore.restore_plan`), and take the restored keys out of their generations
        (what cannot be restored stays journaled, for rollback), under the call's lock.  Returns
        ``[{label, generation, keys}]`` of the reverted runs and ``[{key, reason}]`` of the keys that
        stay applied.  :meth:`release` then removes the lock file and directories when no journal is left."""
        reverted: List[Dict[str, Any]] = []
        failed: List[Dict[str, str]] = []
        if not self.done:
            return reverted, failed
        self.lock()   # held already: the runs that committed took it through this transaction
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
                if moved:   # changed since by a writer that ignores the journal lock: theirs now
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
