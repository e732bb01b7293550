# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The on-node journal: originals of every key the collection touched, and generations.

Its file, the trust of its directory and the atomic writes: ``_journal_file``; what ``journal.json``
may hold and its check: ``_journal_schema``.
"""
from __future__ import annotations

import time

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._journal_file import JournalFile
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._journal_schema import empty
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Change, Plan

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, Iterable, List, Optional, Sequence


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


# ---------------------------------------------------------------------- the journal
class Journal(JournalFile):
    """The journal's records: originals, generations and targets, and every change to them."""

    def originals(self) -> Dict[str, Any]:
        return dict((k, v["value"]) for k, v in self.data["originals"].items())

    def generations(self) -> List[Dict[str, Any]]:
        return list(self.data["generations"])

    def original(self, key: str) -> Any:
        return self.data["originals"][key]["value"]

    def has(self, key: str) -> bool:
        return key in self.data["originals"]

    def targets(self) -> Dict[str, Dict[str, Any]]:
        """``{scope: {module: {"keys": {key: value}, "node": {...}}}}`` (see the module docstring)."""
        return self.data["targets"]

    def _entries(self) -> List[Dict[str, Any]]:
        return [e for modules in self.data["targets"].values() for e in modules.values()]

    def targets_differ(self, scope: str, module: str, keys: Dict[str, Any], node: Dict[str, Any],
                       run: Optional[str] = None) -> bool:
        """Whether :meth:`set_targets` would write: the keys or the node differ from the entry, or an
        entry of another run was stored after it (a no-change rerun writes nothing)."""
        entry = self.data["targets"].get(scope, {}).get(module)
        if entry is None or entry["keys"] != keys or entry.get("node") != node:
            return True
        seq = entry.get("seq", 0)
        return any(e.get("seq", 0) > seq and e.get("run") != entry.get("run") for e in self._entries())

    def set_targets(self, scope: str, module: str, keys: Dict[str, Any], node: Dict[str, Any],
                    run: Optional[str] = None) -> None:
        """Store what the call of ``module`` in ``scope`` left the node at, stamped with ``run`` and
        the next ``seq``; only under the lock, and only when :meth:`targets_differ`."""
        if not self.targets_differ(scope, module, keys, node, run):
            return
        entry: Dict[str, Any] = {"keys": dict(keys), "node": dict(node),
                                 "seq": max([e.get("seq", 0) for e in self._entries()] + [0]) + 1}
        if run:
            entry["run"] = run
        self.data["targets"].setdefault(scope, {})[module] = entry
        self._save()

    def last_written(self, key: str) -> Any:
        """``(True, value)``: the ``after`` of the newest change of ``key`` in any generation - what
        the collection last wrote there; ``(False, None)`` when no generation holds it."""
        found: Any = (False, None)
        for gen in self.data["generations"]:
            for c in gen["changes"]:
                if c["key"] == key:
                    found = (True, c["after"])
        return found

    def interrupted(self) -> List[Dict[str, Any]]:
        """Generations a killed run left ``applying`` (only meaningful outside a running call)."""
        return [g for g in self.data["generations"] if g.get("status") == "applying"]

    # ------------------------------------------------------------------ updates
    def begin(self, module: str, plan: Plan, run: Optional[str] = None, scope: Optional[str] = None) -> int:
        """Record a generation before it is applied; originals only for keys seen first now."""
        data = self.data
        gen_id = data["next_generation"]
        seq = max([o["seq"] for o in data["originals"].values()] + [-1]) + 1
        for c in plan:
            if c.key not in data["originals"]:
                data["originals"][c.key] = {"value": c.before, "generation": gen_id, "seq": seq}
                seq += 1
        gen: Dict[str, Any] = {"id": gen_id, "module": module, "status": "applying", "time": _now(),
                               "changes": plan.as_list()}
        if run:
            gen["run"] = run
        if scope:
            gen["scope"] = scope
        data["generations"].append(gen)
        data["next_generation"] = gen_id + 1
        self._save()
        return gen_id

    def commit(self, gen_id: int) -> None:
        for gen in self.data["generations"]:
            if gen["id"] == gen_id:
                gen["status"] = "applied"
        self._save()

    def discard(self, gen_id: int) -> None:
        """Forget a generation whose changes were reverted (or rolled back)."""
        data = self.data
        data["generations"] = [g for g in data["generations"] if g["id"] != gen_id]
        data["originals"] = dict((k, v) for k, v in data["originals"].items()
                                 if v.get("generation") != gen_id)
        self._save()

    def forget_keys(self, gen_id: int, keys: List[str]) -> None:
        """Drop keys of a generation that were not applied (refused by the kernel)."""
        self._drop(gen_id, keys)
        self._save()

    def _drop(self, gen_id: int, keys: Iterable[str]) -> None:
        """Forget ``keys`` in generation ``gen_id`` and the originals it introduced for them."""
        data = self.data
        keys = set(keys)
        for gen in data["generations"]:
            if gen["id"] == gen_id:
                gen["changes"] = [c for c in gen["changes"] if c["key"] not in keys]
        data["originals"] = dict((k, v) for k, v in data["originals"].items()
                                 if not (k in keys and v.get("generation") == gen_id))

    def reconcile(self, gen_id: int, not_applied: List[str]) -> None:
        """Settle a generation a killed run left ``applying``: the keys whose value on the node is
        still their ``before`` (``not_applied``) never changed and are forgotten, with the
        originals this generation introduced for them; the rest stays as an applied generation
        marked ``reconciled``.  A generation left without changes is dropped."""
        self._drop(gen_id, not_applied)
        data = self.data
        for gen in data["generations"]:
            if gen["id"] == gen_id:
                gen["status"] = "applied"
                gen["reconciled"] = _now()
        data["generations"] = [g for g in data["generations"] if g["id"] != gen_id or g["changes"]]
        self._save()

    def restored(self, keys: Iterable[str], gen_ids: Optional[Sequence[int]] = None) -> None:
        """Rollback restored ``keys``: forget them, keep every key it could not restore.

        Without ``gen_ids`` (scope all) each key leaves the originals and every generation; with
        them (scope last: the generations of the newest run) the key leaves those generations, and
        its original only when one of them introduced it.  Generations left without changes are
        dropped; an empty journal is removed.  Every stored target goes (see :meth:`set_targets`).
        """
        keys = set(keys)
        data = self.data
        data["targets"] = {}   # a rollback leaves no scope as a tune left it: no in-sync fast path
        if gen_ids is not None:
            for gen_id in gen_ids:
                self._drop(gen_id, keys)
        else:
            for gen in data["generations"]:
                gen["changes"] = [c for c in gen["changes"] if c["key"] not in keys]
            data["originals"] = dict((k, v) for k, v in data["originals"].items() if k not in keys)
        data["generations"] = [g for g in data["generations"]
                               if g["changes"] or (gen_ids is not None and g["id"] not in gen_ids)]
        self._save()

    def clear(self) -> None:
        """Everything was rolled back: remove the journal file (the directory stays)."""
        self._data = empty()
        self._remove()

    # ------------------------------------------------------------------ rollback plans
    def rollback_all_targets(self) -> List[Change]:
        """(key, original) pairs newest first-touch first: the order to restore them in."""
        entries = sorted(self.data["originals"].items(), key=lambda kv: kv[1]["seq"], reverse=True)
        return [Change(k, None, v["value"]) for k, v in entries]

    def last_run(self) -> List[Dict[str, Any]]:
        """The newest generation and, when it carries a ``run``, every generation of that run,
        oldest first: the unit ``rollback scope=last`` undoes."""
        gens = self.data["generations"]
        if not gens:
            return []
        run = gens[-1].get("run")
        if not run:
            return [gens[-1]]
        return [g for g in gens if g.get("run") == run]

    def rollback_last_targets(self) -> List[Change]:
        """(key, value before the newest run) pairs, newest change first; a key the run changed in
        several generations goes back to its value before the first of them."""
        targets: Dict[str, Change] = {}
        order: List[str] = []
        for gen in reversed(self.last_run()):
            for c in reversed(gen["changes"]):
                if c["key"] not in targets:
                    order.append(c["key"])
                targets[c["key"]] = Change(c["key"], None, c["before"])
        return [targets[k] for k in order]

    def released(self, module: str, scope: str, managed: Iterable[str]) -> List[Change]:
        """Keys ``module`` journaled in generations of release ``scope`` that are not in
        ``managed``: (key, original) pairs, newest first touch first (files before the directories
        created for them), the order to return them to their originals in."""
        managed = set(managed)
        keys = set()
        for gen in self.data["generations"]:
            if gen.get("module") == module and gen.get("scope") == scope:
                keys.update(c["key"] for c in gen["changes"])
        entries = sorted(((k, v) for k, v in self.data["originals"].items() if k in keys and k not in managed),
                         key=lambda kv: kv[1]["seq"], reverse=True)
        return [Change(k, None, v["value"]) for k, v in entries]
