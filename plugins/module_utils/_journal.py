# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The on-node journal: originals of every key the collection touched, and generations.

Layout (``/var/lib/hpcnet-rdma/`` by default)::

    journal.json   {"schema": 1, "originals": {...}, "generations": [...], "next_generation": N}
    lock           flock'ed by every run for its whole read→apply, so runs serialize

* ``originals[key] = {"value": V, "generation": G, "seq": S}``: the value before the collection
  first touched ``key``; later generations never overwrite it.  ``seq`` orders first touches.
* ``generations[i] = {"id", "module", "time", "status", "changes": [{"key","before","after"}]}``:
  one per module call that changed something.

Writes are atomic (temp file, fsync, rename through :class:`Host`); a corrupt or foreign file is a
:class:`JournalError` and is never rewritten or reset.
"""
from __future__ import annotations

import json
import time
from typing import Any, Dict, List, Optional

from ansible_collections.hpcnet.rdma.plugins.module_utils._host import Host, HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils._plan import Change, Plan

SCHEMA = 1
DEFAULT_DIR = "/var/lib/hpcnet-rdma"
JOURNAL_FILE = "journal.json"
LOCK_FILE = "lock"


class JournalError(Exception):
    pass


def _empty() -> Dict[str, Any]:
    return {"schema": SCHEMA, "originals": {}, "generations": [], "next_generation": 1}


class Journal(object):
    def __init__(self, host: Host, directory: str = DEFAULT_DIR) -> None:
        self.host = host
        self.directory = directory.rstrip("/") or "/"
        self.path = self.directory + "/" + JOURNAL_FILE
        self.lock_path = self.directory + "/" + LOCK_FILE
        self._data: Optional[Dict[str, Any]] = None

    # ------------------------------------------------------------------ loading
    def load(self) -> Dict[str, Any]:
        """Read and validate the journal (an absent journal is empty)."""
        text = self.host.read(self.path)
        if text is None:
            self._data = _empty()
            return self._data
        try:
            data = json.loads(text)
        except ValueError as e:
            raise JournalError(
                "journal %s is corrupt (%s); it was left untouched: move it aside to start a new "
                "journal, or restore it from a backup" % (self.path, e))
        self._check(data)
        self._data = data
        return data

    def _check(self, data: Any) -> None:
        where = "journal %s" % self.path
        if not isinstance(data, dict):
            raise JournalError("%s is corrupt: top level is %s, not an object; left untouched"
                               % (where, type(data).__name__))
        schema = data.get("schema")
        if schema != SCHEMA:
            raise JournalError("%s has schema %r; this collection reads schema %d; left untouched"
                               % (where, schema, SCHEMA))
        shapes = (("originals", dict), ("generations", list), ("next_generation", int))
        for field, kind in shapes:
            if not isinstance(data.get(field), kind):
                raise JournalError("%s is corrupt: %r is missing or not a %s; left untouched"
                                   % (where, field, kind.__name__))
        for key, entry in data["originals"].items():
            if not isinstance(entry, dict) or "value" not in entry or "seq" not in entry:
                raise JournalError("%s is corrupt: original of %r is malformed; left untouched"
                                   % (where, key))
        for gen in data["generations"]:
            if not isinstance(gen, dict) or not isinstance(gen.get("changes"), list) \
                    or not isinstance(gen.get("id"), int):
                raise JournalError("%s is corrupt: a generation is malformed; left untouched" % where)

    @property
    def data(self) -> Dict[str, Any]:
        if self._data is None:
            return self.load()
        return self._data

    def _save(self) -> None:
        text = json.dumps(self.data, indent=1, sort_keys=True) + "\n"
        try:
            self.host.write_file(self.path, {"content": text, "mode": "0600"})
        except HostError as e:
            raise JournalError("cannot write journal: %s" % e)

    # ------------------------------------------------------------------ queries
    def originals(self) -> Dict[str, Any]:
        return dict((k, v["value"]) for k, v in self.data["originals"].items())

    def generations(self) -> List[Dict[str, Any]]:
        return list(self.data["generations"])

    def original(self, key: str) -> Any:
        return self.data["originals"][key]["value"]

    def has(self, key: str) -> bool:
        return key in self.data["originals"]

    # ------------------------------------------------------------------ updates
    def begin(self, module: str, plan: Plan) -> int:
        """Record a generation before it is applied; originals only for keys seen first now."""
        data = self.data
        gen_id = data["next_generation"]
        seq = max([o["seq"] for o in data["originals"].values()] + [-1]) + 1
        for c in plan:
            if c.key not in data["originals"]:
                data["originals"][c.key] = {"value": c.before, "generation": gen_id, "seq": seq}
                seq += 1
        data["generations"].append({
            "id": gen_id, "module": module, "status": "applying",
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "changes": plan.as_list(),
        })
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
        data = self.data
        for gen in data["generations"]:
            if gen["id"] == gen_id:
                gen["changes"] = [c for c in gen["changes"] if c["key"] not in keys]
        data["originals"] = dict((k, v) for k, v in data["originals"].items()
                                 if not (k in keys and v.get("generation") == gen_id))
        self._save()

    def clear(self) -> None:
        """Everything was rolled back: remove the journal file (the directory stays)."""
        self._data = _empty()
        try:
            self.host.write_file(self.path, None)
        except HostError as e:
            raise JournalError("cannot remove journal: %s" % e)

    # ------------------------------------------------------------------ rollback plans
    def rollback_all_targets(self) -> List[Change]:
        """(key, original) pairs newest first-touch first: the order to restore them in."""
        entries = sorted(self.data["originals"].items(), key=lambda kv: kv[1]["seq"], reverse=True)
        return [Change(k, None, v["value"]) for k, v in entries]

    def rollback_last_targets(self) -> List[Change]:
        gens = self.data["generations"]
        if not gens:
            return []
        return [Change(c["key"], None, c["before"]) for c in reversed(gens[-1]["changes"])]

    def last_generation(self) -> Optional[Dict[str, Any]]:
        gens = self.data["generations"]
        return gens[-1] if gens else None
