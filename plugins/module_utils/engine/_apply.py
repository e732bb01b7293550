# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Applying a plan: :class:`Domains` (journal key prefix → domain, the ``file:`` and ``dir:`` domains
always there), :func:`with_parent_dirs` (a file's missing parents become ``dir:`` changes),
:func:`apply_plan` (all-or-nothing: apply, read back, revert on failure) and the sweep of the temp
files killed writes left (:func:`sweep_write_debris`)."""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _files
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._domain import Refused
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Change, Plan
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple
    from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._domain import Domain, DomainMap


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

    def read_values(self, host: Host, keys: Iterable[str]) -> Dict[str, Any]:
        """``{key: value}`` for each key, a ``HostError`` instance in place of a value that could not be
        read; one ``read_values`` call for each domain that offers it (``_domain``), else ``read_value``.

        The domains are read one after the other: none runs a tool on the way any more (units over systemd's
        bus, NIC groups and RDMA links over netlink, packages from dpkg's file), and in threads their
        Python only waited for the GIL - side by side they cost the health check 4 % more wall and 10 %
        more CPU on a lab VM (docs/health.md)."""
        by_domain: Dict[str, List[str]] = {}
        out: Dict[str, Any] = {}
        for key in keys:
            try:
                self.of(key)
            except HostError as e:
                out[key] = e
                continue
            by_domain.setdefault(key.split(":", 1)[0], []).append(key)

        def read_group(prefix: str, group: List[str]) -> Dict[str, Any]:
            domain = self._by_prefix[prefix]
            many = getattr(domain, "read_values", None)
            if many is not None:
                values = many(host, [k.split(":", 1)[1] for k in group])
                return dict((k, values[k.split(":", 1)[1]]) for k in group)
            got: Dict[str, Any] = {}
            for key in group:
                try:
                    got[key] = domain.read_value(host, key.split(":", 1)[1])
                except HostError as e:
                    got[key] = e
            return got
        for prefix, group in by_domain.items():
            host.checkpoint()
            out.update(read_group(prefix, group))
        return out

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
        problems = revert(host, applied, domains)
        msg = "%s: %s" % (current.key if current else "plan", e)
        if applied:
            msg += "; reverted %d earlier change(s) of this call" % len(applied)
        if problems:
            msg += "; REVERT FAILED for %s — the journal keeps the originals, run tuning_state rollback" \
                   % "; ".join(problems)
        raise ApplyError(msg, reverted=not problems)


def revert(host: Host, applied: List[Change], domains: Domains) -> List[str]:
    """Write back the ``before`` of every applied change, newest first; the keys that failed, each with why."""
    problems = []
    for c in reversed(applied):
        try:
            domains.write_value(host, c.key, c.before)
        except HostError as e:
            problems.append("%s (%s)" % (c.key, e))
    return problems


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
