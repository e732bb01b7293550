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

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ansible_collections.hpcnet.rdma.plugins.module_utils import _files
from ansible_collections.hpcnet.rdma.plugins.module_utils._domain import Domain, DomainMap, Refused
from ansible_collections.hpcnet.rdma.plugins.module_utils._host import Host, HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils._journal import DEFAULT_DIR, Journal, JournalError
from ansible_collections.hpcnet.rdma.plugins.module_utils._plan import Change, Plan, render_diff


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
            on_success: Optional[Callable[[bool], bool]] = None) -> Dict[str, Any]:
        """Validate and plan, then (when something changes) lock, re-plan and apply.

        ``build`` reads the node and returns the plan and ``previous`` for every managed key; it
        raises ValueError for bad input.  The first pass runs unlocked and writes nothing: bad input
        and "nothing to do" end there.  Otherwise the journal lock is taken and ``build`` runs again
        under it, so a concurrent run cannot slip in between read and apply.  With ``record`` the
        plan becomes a journal generation; ``on_success(dry)`` runs after a successful apply
        (rollback drops generations with it) and returns whether it changed (or would) anything.
        """
        self.preflight()
        plan, previous = self._build(build)
        pending = bool(plan) or (on_success is not None and on_success(True))
        if self.module.check_mode or not pending:
            out = self.execute(name, plan, previous, result, record)
            if pending:
                out["changed"] = True
            return out
        reason = self.host.dir_writable(self.journal_dir, create=True)
        if reason:
            self.fail("journal_dir: %s cannot hold the journal (%s); give a writable local directory"
                      % (self.journal_dir, reason))
        try:
            with self.host.lock(self.journal.lock_path):
                self.journal.load()
                plan, previous = self._build(build)
                out = self.execute(name, plan, previous, result, record)
                if on_success is not None and on_success(False):
                    out["changed"] = True
                return out
        except (HostError, JournalError) as e:
            self.fail(str(e))
        return {}

    def _build(self, build: Callable[[], Tuple[Plan, Dict[str, Any]]]) -> Tuple[Plan, Dict[str, Any]]:
        try:
            plan, previous = build()
            return with_parent_dirs(self.host, plan, previous), previous
        except (ValueError, HostError) as e:
            self.fail(str(e))
            raise AssertionError("fail_json returned")

    def execute(self, name: str, plan: Plan, previous: Dict[str, Any],
                result: Optional[Dict[str, Any]], record: bool) -> Dict[str, Any]:
        out: Dict[str, Any] = dict(result or {})
        current = dict(previous)
        for c in plan:
            current[c.key] = c.after
        out.update(changed=bool(plan), changes=plan.as_list(), previous=previous, current=current)
        if self.module._diff:
            out["diff"] = render_diff(plan)
        if self.module.check_mode or not plan:
            return out
        gen = self.journal.begin(name, plan) if record else None
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
            if refused:
                self.journal.forget_keys(gen, [r["key"] for r in refused])
            if verified:
                self.journal.commit(gen)
                out["generation"] = gen
            else:
                self.journal.discard(gen)
        return out
