# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one path every module follows after it has planned:

check mode → diff → journal ``before`` → apply → read back and verify → journal commit; on any
failure the changes this call already made are reverted and the message names the key.

Each journal key prefix (``sysctl:``, ``nic:``, ``file:``, ...) belongs to a domain that supplies
``read_value(host, target)``, ``write_value(host, target, value)`` and ``same(actual, wanted)``
(the contract: ``_domain.CONTRACT``).  An engine knows only the domains its module writes, handed to
it as the domain files' ``DOMAINS`` maps, plus ``file:`` and ``dir:`` (parent directories), so a
module's payload carries only its own domains; ``tuning_state`` hands it all of them
(``_registry``), so rollback can restore any key any module wrote.

What it runs lives beside it: applying a plan (``_apply``), rollback's best-effort restore
(``_restore``) and a node_tuning call's runs as one unit (``_transaction``).
"""
from __future__ import annotations

import contextlib
import json

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _files
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _fingerprint
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._apply import ApplyError, Domains, apply_plan, revert, sweep_write_debris, with_parent_dirs
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._journal import Journal
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._journal_file import DEFAULT_DIR
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._journal_schema import JournalError
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Change, Plan, render_diff
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._restore import edited_files, keep_edits, restore_plan
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._transaction import Transaction
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple
    from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._domain import DomainMap


class Engine(object):
    """Binds a module, its Host, the domains it writes and the journal for one call.

    ``domains``: the ``DOMAINS`` maps of the domain files whose keys the module plans, e.g.
    ``(_sysctl.DOMAINS,)``; ``file:`` and ``dir:`` are always there."""

    def __init__(self, module: Any, host: Host, journal_dir: str = DEFAULT_DIR, *,
                 domains: Sequence[DomainMap]) -> None:
        self.module = module
        self.host = host
        self.domains = Domains(*domains)
        self.journal = Journal(host, journal_dir)
        self.journal_dir = journal_dir
        params = getattr(module, "params", None) or {}
        # _spec.RUN: the run this call belongs to, and the release scope (see _release)
        self.run_id: Optional[str] = params.get("journal_run") or None
        self.release_scope: Optional[str] = params.get("release_scope") or None
        self._warned: set = set()
        # node_tuning: the call's Transaction, which a later step's failure reverts this run by
        self.transaction: Optional[Transaction] = getattr(module, "transaction", None)

    def fail(self, msg: str, **kwargs: Any) -> None:
        self.module.fail_json(msg=msg, **kwargs)

    def preflight(self) -> None:
        """Before anything is read: the journal must be loadable and its directory usable.

        Nothing is created here, so bad input leaves the node exactly as it was; the directory is
        made only when there is something to record."""
        reason = self.host.dir_writable(self.journal_dir, create=False)
        if reason:
            self.fail("journal_dir: %s cannot hold the journal (%s); give a writable local directory"
                      % (self.journal_dir, reason))
        try:
            self.journal.load()
        except (JournalError, HostError) as e:
            self.fail(str(e))

    def run(self, name: str, build: Callable[[], Tuple[Plan, Dict[str, Any]]],
            result: Optional[Dict[str, Any]] = None, record: bool = True,
            on_success: Optional[Callable[[bool, Dict[str, Any]], bool]] = None,
            restore: bool = False, release: bool = True) -> Dict[str, Any]:
        """Validate and plan, then (when something changes) lock, re-plan and apply.

        ``build`` reads the node and returns the plan and ``previous`` for every managed key; it
        raises ValueError for bad input.  The first pass runs unlocked and writes nothing: bad input
        and "nothing to do" end there.  Otherwise the journal lock is taken and ``build`` runs again
        under it, so a concurrent run cannot slip in between read and apply.  With ``record`` the
        plan becomes a journal generation; ``on_success(dry, out)`` runs after the apply (rollback
        updates the journal with it; ``out`` is the result so far, empty when ``dry``) and returns
        whether it changed (or would) anything.  With ``restore`` (rollback) the plan is applied
        best effort per key (:func:`_restore.restore_plan`) and ``out`` lists ``refused`` and
        ``unrestorable`` keys; the caller decides whether that fails.

        Every locked run first settles what killed runs left behind (:meth:`reconcile`); a run
        takes the lock for that alone when there is such a generation it can read back.

        ``release=False``: a follow-up generation of the same call (what the system did in
        consequence, e.g. modules udev loaded): it releases nothing and is recorded without the
        release scope, so a later call of that scope, which cannot plan those keys, leaves them."""
        scope = self.release_scope
        if not release:
            self.release_scope = None
        try:
            return self._run(name, build, result, record, on_success, restore)
        finally:
            self.release_scope = scope

    def _run(self, name: str, build: Callable[[], Tuple[Plan, Dict[str, Any]]],
             result: Optional[Dict[str, Any]], record: bool,
             on_success: Optional[Callable[[bool, Dict[str, Any]], bool]], restore: bool) -> Dict[str, Any]:
        self.preflight()
        plan, previous = self._build(build, restore, name)
        work = bool(plan) or (on_success is not None and on_success(True, {}))
        interrupted = self._reconcilable()
        if self.module.check_mode or not (work or interrupted or self._debris()):
            out = self.execute(name, plan, previous, result, record, restore)
            if work:
                out["changed"] = True
            for gen in interrupted:
                self.module.warn("journal generation %d (%s, %s) was interrupted before it committed; the "
                                 "next run that takes the journal lock reconciles it"
                                 % (gen["id"], gen.get("module"), gen.get("time")))
            if not (self.module.check_mode or work) and self._targets(name, out, record, restore):
                self._store_targets(name, out)
            return out
        try:
            with self._locked():
                # under the lock, so the sweep of a killed run's probe never races a live one
                reason = self.host.dir_writable(self.journal_dir, create=True)
                if reason:
                    self.fail("journal_dir: %s cannot hold the journal (%s); give a writable local directory"
                              % (self.journal_dir, reason))
                self.journal.load()
                reconciled = self.reconcile()
                plan, previous = self._build(build, restore, name)
                out = self.execute(name, plan, previous, result, record, restore)
                if reconciled:
                    out["reconciled"] = reconciled
                if on_success is not None and on_success(False, out):
                    out["changed"] = True
                targets = self._targets(name, out, record, restore)
                if targets:
                    self.journal.set_targets(self.release_scope, name, targets[0], targets[1], self.run_id)
                return out
        except (HostError, JournalError) as e:
            self.fail(str(e))
        return {}

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """The journal directory made (what is missing of it) and its lock held.  A call that fails
        having changed nothing - no journal file left - removes the lock file it created (while it
        holds it) and the directories it made: a failed call leaves the node as it found it.

        A node_tuning call's engine runs under its Transaction's lock instead, taken at the call's
        first run that needs it and held (cleaned up as above) until the call ends: the engine does not
        take it again (a second flock on a new descriptor of the same file would wait for the first)."""
        if self.transaction is not None and self.transaction.holds(self.journal.lock_path):
            self.transaction.lock()
            yield
            return
        reason = self.journal.make_dir()
        if reason:
            self.fail("journal_dir: %s cannot hold the journal (%s); give a writable local directory"
                      % (self.journal_dir, reason))
        made = list(self.journal.made)
        done = False
        try:
            with self.host.lock(self.journal.lock_path) as lock:
                try:
                    yield
                    done = True
                finally:
                    if not done and lock.created and not self.journal.on_disk():
                        lock.remove()
        finally:
            if not done and made and not self.journal.on_disk():
                self.journal.remove_made(made)

    def _targets(self, name: str, out: Dict[str, Any], record: bool,
                 restore: bool) -> Optional[Tuple[Dict[str, Any], Dict[str, str]]]:
        """What this call left the node at - every key it manages (``current``: read back, or read
        and already right) - and the node's fingerprint, when they differ from the journal's
        targets of this scope and module; None when there is nothing to store (no release scope,
        an unrecorded call, a rollback, or the journal already holds exactly this)."""
        if not (record and self.release_scope) or restore:
            return None
        # as the journal stores them; without the parent directories this call created for its files
        # (in current only on the call that made them; the file keys imply them) - a directory
        # released back to absent stays a target
        keys = json.loads(json.dumps(dict((k, v) for k, v in (out.get("current") or {}).items()
                                          if not (k.startswith("dir:") and v)), sort_keys=True))
        node = _fingerprint.fingerprint(self.host)
        if not self.journal.targets_differ(self.release_scope, name, keys, node, self.run_id):
            return None
        return keys, node

    def _store_targets(self, name: str, out: Dict[str, Any]) -> None:
        """A call that changed nothing found targets that differ from the journal's (the first run
        with this scope, or after a rollback): store them under the lock, re-read there."""
        try:
            with self._locked():
                self.journal.load()
                targets = self._targets(name, out, True, False)
                # read without the lock: a concurrent run may have changed a key since; store only
                # what the node still holds
                if targets and self._still(targets[0]):
                    self.journal.set_targets(self.release_scope, name, targets[0], targets[1], self.run_id)
        except (HostError, JournalError) as e:
            self.fail(str(e))

    def _still(self, keys: Dict[str, Any]) -> bool:
        """Every key still holds its value (a key that cannot be read does not)."""
        try:
            return all(self.domains.same(k, self.domains.read_value(self.host, k), v) for k, v in keys.items())
        except HostError:
            return False

    def _build(self, build: Callable[[], Tuple[Plan, Dict[str, Any]]], restore: bool = False,
               name: str = "") -> Tuple[Plan, Dict[str, Any]]:
        try:
            plan, previous = build()
            if not restore:   # a replaced file keeps its owner and label; rollback restores them exactly
                plan = _files.keep_attributes(plan)
            plan = with_parent_dirs(self.host, plan, previous)
            if self.release_scope and not restore:
                plan = self._release(name, plan, previous)
            return plan, previous
        except (ValueError, HostError) as e:
            self.fail(str(e))
            raise AssertionError("fail_json returned")

    def _release(self, name: str, plan: Plan, previous: Dict[str, Any]) -> Plan:
        """``release_scope``: every key this module journaled in earlier calls of the same scope
        that this call does not manage goes back to its pre-tuning original, in this call's
        generation (a profile switch: a key the new profile does not set is not left at the old
        profile's value).  Managed are the keys the planner read (``previous``) and the parent
        directories of the files among them.  A key that cannot be read any more (its interface is
        gone) is left in the journal with a warning, for rollback to report."""
        managed = set(previous) | set(plan.keys())
        for key in list(managed):
            if key.startswith("file:"):
                path = key.split(":", 1)[1]
                while "/" in path.strip("/"):
                    path = path.rsplit("/", 1)[0]
                    managed.add("dir:" + path)
        released = self.journal.released(name, self.release_scope, managed)
        going = set(t.target for t in released)
        for target in released:
            if target.domain == "dir" and not target.after and self._holds_others(target.target, going):
                continue   # a directory we created that holds files of other calls: rollback decides
            try:
                current = self.domains.read_value(self.host, target.key)
            except HostError as e:
                if target.key in self._warned:   # build runs twice (unlocked, then under the lock)
                    continue
                self._warned.add(target.key)
                self.module.warn("release_scope %s: %s is no longer managed but cannot be read to return it to its "
                                 "original (%s); it stays in the journal" % (self.release_scope, target.key, e))
                continue
            previous[target.key] = current
            if not self.domains.same(target.key, current, target.after):
                plan.add(target.key, current, target.after)
        return plan

    def _holds_others(self, path: str, going: set) -> bool:
        """A directory that still holds something besides the paths being released with it."""
        return any(path.rstrip("/") + "/" + n not in going for n in self.host.listdir(path))

    def _debris(self) -> List[str]:
        """Temp files killed runs left (journal directory, next to journaled files)."""
        return self.journal.sweep(dry=True) + sweep_write_debris(self.host, list(self.journal.originals()), dry=True)

    def _reconcilable(self) -> List[Dict[str, Any]]:
        """Interrupted generations whose every key this engine can read back."""
        known = set(self.domains.prefixes())
        return [g for g in self.journal.interrupted()
                if all(c["key"].split(":", 1)[0] in known for c in g["changes"])]

    def reconcile(self) -> List[Dict[str, Any]]:
        """Under the lock: settle what runs killed with -9 left behind.

        Temp files of killed writes (journal and journaled files) are removed.  A generation left
        ``applying`` is read back key by key: a key still at its ``before`` never changed and is
        forgotten; every other key (applied, changed otherwise, or unreadable) stays, so its
        original is never lost, and the generation becomes ``applied`` marked ``reconciled``.
        Generations with keys this module cannot read stay ``applying`` for tuning_state."""
        sweep_write_debris(self.host, list(self.journal.originals()))
        self.journal.sweep()
        done = []
        for gen in self._reconcilable():
            kept, dropped = [], []
            for c in gen["changes"]:
                (dropped if self._unchanged(c) else kept).append(c["key"])
            self.journal.reconcile(gen["id"], dropped)
            done.append({"generation": gen["id"], "module": gen.get("module"), "kept": kept, "dropped": dropped})
            self.module.warn("journal generation %d (%s, %s) was interrupted before it committed; reconciled: "
                             "%d key(s) found applied kept, %d never changed dropped"
                             % (gen["id"], gen.get("module"), gen.get("time"), len(kept), len(dropped)))
        return done

    def _unchanged(self, change: Dict[str, Any]) -> bool:
        key = change["key"]
        try:
            actual = self.domains.read_value(self.host, key)
            return self.domains.same(key, actual, change["before"]) and not self.domains.same(key, actual, change["after"])
        except Exception:  # noqa: BLE001 - unreadable: keep it, its original must not be lost
            return False

    def execute(self, name: str, plan: Plan, previous: Dict[str, Any],
                result: Optional[Dict[str, Any]], record: bool, restore: bool = False) -> Dict[str, Any]:
        out: Dict[str, Any] = dict(result or {})
        current = dict(previous)
        for c in plan:
            current[c.key] = c.after
        out.update(changed=bool(plan), changes=plan.as_list(), previous=previous, current=current)
        if self.module._diff:
            out["diff"] = render_diff(plan)
        if restore:
            out.update(refused=[], unrestorable=[], kept_edits=edited_files(self.host, self.journal, plan))
        if self.module.check_mode or not plan:
            return out
        if restore:
            return self._restore(plan, out, current)
        gen = self.journal.begin(name, plan, run=self.run_id, scope=self.release_scope) if record else None
        try:
            verified, refused = apply_plan(self.host, plan, self.domains)
        except ApplyError as e:
            if gen is not None and e.reverted:
                self.journal.discard(gen)
            self.fail("%s failed and changed nothing: %s" % (name, e) if e.reverted else str(e),
                      changes=plan.as_list(), previous=previous)
            return {}
        for r in refused:
            current[r["key"]] = previous.get(r["key"])
        for c in verified:
            current[c.key] = c.after
        out["current"] = current
        out["refused"] = refused
        done = set(c.key for c in verified)
        out["changes"] = [c.as_dict() for c in plan if c.key in done]
        out["changed"] = bool(verified)
        if gen is not None:
            try:
                if refused:
                    self.journal.forget_keys(gen, [r["key"] for r in refused])
                if verified:
                    self.journal.commit(gen)
                    out["generation"] = gen
                else:
                    self.journal.discard(gen)
            except JournalError as e:
                self._uncommitted(name, gen, verified, e, plan, previous)
        if self.transaction is not None and verified:
            self.transaction.committed(name, gen, verified, self.domains)
        return out

    def _uncommitted(self, name: str, gen: int, verified: List[Change], error: JournalError,
                     plan: Plan, previous: Dict[str, Any]) -> None:
        """The changes were applied but the journal could not record it (a disk that filled between
        apply and commit): revert them, newest first, and fail saying so.  What cannot be reverted is
        named, with the generation that keeps its original for rollback."""
        problems = revert(self.host, verified, self.domains)
        keys = ", ".join(c.key for c in verified) or "none"
        if not problems:
            try:
                self.journal.discard(gen)
                kept = ""
            except JournalError:
                kept = ("; the journal still holds generation %d as applying, which the next run reconciles "
                        "(its keys are back at their values before)" % gen)
            self.fail("%s failed and changed nothing: %s; so the %d change(s) this call applied were reverted "
                      "(%s)%s" % (name, error, len(verified), keys, kept), changes=plan.as_list(), previous=previous)
        self.fail("%s failed: %s after applying %s; REVERT FAILED for %s - these keys stay applied, and the journal "
                  "keeps their originals (generation %d, status applying): free space, then run tuning_state "
                  "rollback to recover them" % (name, error, keys, "; ".join(problems), gen),
                  changes=plan.as_list(), previous=previous)

    def _restore(self, plan: Plan, out: Dict[str, Any], current: Dict[str, Any]) -> Dict[str, Any]:
        """Rollback: apply best effort (:func:`_restore.restore_plan`), never revert, report every key.  A file
        edited by hand since the tune is kept beside it first (``PATH.hpcnet-rdma-edited``)."""
        plan, not_kept = keep_edits(self.host, plan, out)
        restored, refused, failed = restore_plan(self.host, plan, self.domains)
        failed = not_kept + failed
        for c in restored:
            current[c.key] = c.after
        for item in refused + failed:
            try:
                current[item["key"]] = self.domains.read_value(self.host, item["key"])
            except Exception:  # noqa: BLE001 - its value stays the one read before
                current[item["key"]] = out["previous"].get(item["key"])
        done = set(c.key for c in restored)
        out.update(current=current, refused=refused, unrestorable=failed, changed=bool(restored),
                   changes=[c.as_dict() for c in plan if c.key in done])
        if self.module._diff:
            out["diff"] = render_diff(Plan([c for c in plan if c.key in done]))
        return out
