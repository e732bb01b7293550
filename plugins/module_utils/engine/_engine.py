# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one path every module follows after it has planned:

check mode → diff → journal ``before`` → apply → read back and verify → journal commit; on any
failure the changes this call already made are reverted and the message names the key.

Each journal key prefix (``sysctl:``, ``nic:``, ``file:``, ...) belongs to a domain that supplies
``read_value(host, target)``, ``write_value(host, target, value)`` and ``same(actual, wanted)``
(the contract: ``_domain.Domain``).  An engine knows only the domains its module writes, handed to
it as the domain files' ``DOMAINS`` maps, plus ``file:`` and ``dir:`` (parent directories), so a
module's payload carries only its own domains; ``tuning_state`` hands it all of them
(``_registry``), so rollback can restore any key any module wrote.
"""
from __future__ import annotations

import contextlib
import json
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _files
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _fingerprint
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._domain import Domain, DomainMap, Refused
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._journal import DEFAULT_DIR, Journal, JournalError
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Change, Plan, render_diff


class Domains(object):
    """Journal key prefix → domain: the maps given, plus ``file:`` and ``dir:`` that every engine
    needs for the parent directories it plans (:func:`with_parent_dirs`)."""

    def __init__(self, *maps: DomainMap) -> None:
        self._by_prefix: Dict[str, Domain] = {}
        for m in (_files.DOMAINS,) + maps:
            for prefix, domain in m.items():
                if self._by_prefix.get(prefix, domain) is not domain:
                    raise ValueError("two domains claim the journal key prefix %r" % prefix)
                self._by_prefix[prefix] = domain

    def prefixes(self) -> List[str]:
        return sorted(self._by_prefix)

    def of(self, key: str) -> Domain:
        name = key.split(":", 1)[0]
        if name not in self._by_prefix:
            raise HostError("journal key %r belongs to no known domain (%s)" % (key, ", ".join(self.prefixes())))
        return self._by_prefix[name]

    def read_value(self, host: Host, key: str) -> Any:
        return self.of(key).read_value(host, key.split(":", 1)[1])

    def write_value(self, host: Host, key: str, value: Any) -> None:
        self.of(key).write_value(host, key.split(":", 1)[1], value)

    def same(self, key: str, actual: Any, wanted: Any) -> bool:
        return bool(self.of(key).same(actual, wanted))


class ApplyError(Exception):
    """Apply or verify failed; ``reverted`` tells whether the node is back to the call's start."""

    def __init__(self, msg: str, reverted: bool) -> None:
        Exception.__init__(self, msg)
        self.reverted = reverted


def with_parent_dirs(host: Host, plan: Plan, previous: Dict[str, Any]) -> Plan:
    """Every directory a planned file needs and the node lacks becomes a ``dir:`` change (False →
    True) right before the file, so the journal holds it and rollback removes it after the file.

    One place for every module: the file domain creates missing parents when it writes, so a
    planner that forgot them would leave directories behind after a rollback."""
    creates = [c for c in plan if c.domain == "file" and _files.is_absent(c.before) and not _files.is_absent(c.after)]
    if not creates:
        return plan
    out = Plan()
    planned = set(plan.keys())
    for c in plan:
        if c in creates:
            for parent in _files.missing_parents(host, c.target):
                key = "dir:" + parent
                if key not in planned:
                    planned.add(key)
                    previous[key] = False
                    out.add(key, False, True)
        out.add(c.key, c.before, c.after)
    return out


def apply_plan(host: Host, plan: Plan, domains: Domains) -> Tuple[List[Change], List[Dict[str, str]]]:
    """Apply every change in order, verify each by reading it back; all-or-nothing.

    Returns the changes with ``after`` replaced by the value read back, and the changes the node
    refused (``_domain.Refused``: nothing changed for that key, e.g. a kernel-managed IRQ) as
    named results.  On any other failure reverts what was applied (newest first) and raises
    :class:`ApplyError` naming the key.
    """
    applied: List[Change] = []
    refused: List[Dict[str, str]] = []
    current: Optional[Change] = None
    try:
        for c in plan:
            current = c
            try:
                domains.write_value(host, c.key, c.after)
            except Refused as e:  # a named result; any other error fails and reverts the call
                refused.append({"key": c.key, "reason": str(e)})
                continue
            applied.append(c)
        verified = []
        for c in applied:
            current = c
            actual = domains.read_value(host, c.key)
            if not domains.same(c.key, actual, c.after):
                raise HostError("read back %r after writing %r" % (actual, c.after))
            verified.append(Change(c.key, c.before, actual))
        return verified, refused
    except HostError as e:
        problems = _revert(host, applied, domains)
        msg = "%s: %s" % (current.key if current else "plan", e)
        if applied:
            msg += "; reverted %d earlier change(s) of this call" % len(applied)
        if problems:
            msg += "; REVERT FAILED for %s — the journal keeps the originals, run tuning_state rollback" \
                   % "; ".join(problems)
        raise ApplyError(msg, reverted=not problems)


def _revert(host: Host, applied: List[Change], domains: Domains) -> List[str]:
    problems = []
    for c in reversed(applied):
        try:
            domains.write_value(host, c.key, c.before)
        except HostError as e:
            problems.append("%s (%s)" % (c.key, e))
    return problems


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


# Temp files of Host.write_file (mkstemp ".hpcnet-XXXX", symlinks "NAME.hpcnet-tmp") that a run
# killed mid-write left next to a journaled file; only ever removed under the journal lock.
def _is_write_debris(name: str) -> bool:
    return name.startswith(".hpcnet-") or name.endswith(".hpcnet-tmp")


def sweep_write_debris(host: Host, keys: Sequence[str], dry: bool = False) -> List[str]:
    """What killed writes left in the directories of the journaled ``file:`` keys; removed unless
    ``dry``."""
    dirs = sorted(set(k.split(":", 1)[1].rsplit("/", 1)[0] or "/" for k in keys if k.startswith("file:")))
    gone = []
    for d in dirs:
        for name in host.listdir(d):
            path = d.rstrip("/") + "/" + name
            if _is_write_debris(name) and not host.isdir(path):
                try:
                    if not dry:
                        host.write_file(path, None)
                    gone.append(path)
                except HostError:
                    pass
    return gone


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
        effort per key (:func:`restore_plan`), and take the restored keys out of their generations
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
        made only when there is something to record.
        """
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
        best effort per key (:func:`restore_plan`) and ``out`` lists ``refused`` and
        ``unrestorable`` keys; the caller decides whether that fails.

        Every locked run first settles what killed runs left behind (:meth:`reconcile`); a run
        takes the lock for that alone when there is such a generation it can read back.

        ``release=False``: a follow-up generation of the same call (what the system did in
        consequence, e.g. modules udev loaded): it releases nothing and is recorded without the
        release scope, so a later call of that scope, which cannot plan those keys, leaves them.
        """
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
        holds it) and the directories it made: a failed call leaves the node as it found it."""
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
        Generations with keys this module cannot read stay ``applying`` for tuning_state.
        """
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
            out.update(refused=[], unrestorable=[], kept_edits=self._edits(plan))
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
        problems = _revert(self.host, verified, self.domains)
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

    def _edits(self, plan: Plan) -> List[Dict[str, str]]:
        """Rollback: the files of ``plan`` edited by hand since the collection last wrote them (their
        bytes differ from the journal's newest ``after``), each with the copy that keeps the edit."""
        edits = []
        for c in plan:
            if c.domain != "file":
                continue
            found, written = self.journal.last_written(c.key)
            if found and _files.edited(c.before, written):
                edits.append({"key": c.key, "path": c.target, "copy": _files.edited_copy(self.host, c.target)})
        return edits

    def _keep_edits(self, plan: Plan, out: Dict[str, Any]) -> Tuple[Plan, List[Dict[str, str]]]:
        """Write each hand-edited file's copy before rollback restores it; a file whose copy cannot
        be written is not restored (its edit would be lost) and is reported unrestorable."""
        failed = []
        skip = set()
        kept = []
        for edit in out["kept_edits"]:
            try:
                self.host.write_file(edit["copy"], _files.bare(out["previous"][edit["key"]]))
                kept.append(edit)
            except HostError as e:
                skip.add(edit["key"])
                failed.append({"key": edit["key"], "reason": "edited by hand since the tune, and its copy could not be "
                                                             "kept, so it was not restored: %s" % e})
        out["kept_edits"] = kept
        return Plan([c for c in plan if c.key not in skip]), failed

    def _restore(self, plan: Plan, out: Dict[str, Any], current: Dict[str, Any]) -> Dict[str, Any]:
        """Rollback: apply best effort (:func:`restore_plan`), never revert, report every key.  A file
        edited by hand since the tune is kept beside it first (``PATH.hpcnet-rdma-edited``)."""
        plan, not_kept = self._keep_edits(plan, out)
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
