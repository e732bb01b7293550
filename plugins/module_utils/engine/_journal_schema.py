# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What ``journal.json`` holds, and the check of a loaded journal that names the first field that is
wrong (:class:`Checker`); a journal that fails it is a :class:`JournalError`, left untouched.

Layout (``/var/lib/hpcnet-rdma/`` by default)::

    journal.json   {"schema": 2, "originals": {...}, "generations": [...], "next_generation": N,
                    "targets": {...}}
    lock           flock'ed by every run for its whole read→apply, so runs serialize

* ``originals[key] = {"value": V, "generation": G, "seq": S}``: the value before the collection
  first touched ``key``; later generations never overwrite it.  ``seq`` orders first touches.
* ``generations[i] = {"id", "module", "time", "status", "changes": [{"key","before","after"}]}``:
  one per module call that changed something.  Optional ``run``: the id the calls of one run share
  (the tuning role sets it), so rollback ``scope=last`` undoes the newest run as one unit; optional
  ``scope``: the call's ``release_scope``, so a later call of the same module and scope can return
  the keys it no longer manages to their originals (a profile switch).  ``status`` is ``applying`` from the moment the
  originals are recorded until the call verified its changes (``applied``); a generation a killed
  run left ``applying`` is reconciled by the next locked run (``reconciled`` holds when).
* ``targets[scope][module] = {"keys": {key: value}, "node": {...}, "run": R, "seq": N}``: per
  ``release_scope``, what the newest call of ``module`` in that scope left the node at - EVERY key
  it manages, changed or already right - and the fingerprint of the node's devices it planned
  against (``_fingerprint``); ``run`` is the ``journal_run`` that stored it, ``seq`` orders the
  stores.  Written only when it differs from what is stored, or when an entry of another run was
  stored after it (so every entry of a run that stored anything is re-stamped by that run, in call
  order: the last call of a finished run - the tuning role's profile record - holds the highest
  ``seq``, and an entry stored after it belongs to a run that did not finish); a steady-state rerun
  writes nothing.  Every rollback drops all targets.  ``node_tuning``'s ``sync`` compares them
  with the live values.  Schema 1 (no targets) is read and written back as schema 2.
"""
from __future__ import annotations

import posixpath

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import lazy_re

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, Iterable

SCHEMA = 2
READABLE_SCHEMAS = (1, 2)   # schema 1 had no targets; it is upgraded in memory and written as 2

# Every journal key prefix any module writes (the engine's domain registry maps each to its code;
# a unit test keeps the two equal).  A key with another prefix makes the journal foreign.
KEY_PREFIXES = frozenset(["sysctl", "nic", "file", "irq", "service", "pkg", "kmod", "rxe", "rdma",
                          "devnode", "dir", "dcb", "mlnx_qos", "ecn", "rdmacm"])
# Prefixes whose target is a node path: it must be absolute and normalised (no ``..``).
PATH_PREFIXES = frozenset(["file", "dir", "devnode"])
STATUSES = ("applying", "applied")
_KEY = lazy_re(r"^([a-z_]+):([^\x00-\x1f\x7f]+)$")
_MODE = lazy_re(r"^0?[0-7]{3,4}$")
_TOP_FIELDS = frozenset(["schema", "originals", "generations", "next_generation", "targets"])
_TARGET_FIELDS = frozenset(["keys", "node", "run", "seq"])
_ORIGINAL_FIELDS = frozenset(["value", "generation", "seq"])
_GENERATION_FIELDS = frozenset(["id", "module", "status", "time", "changes", "reconciled", "run", "scope"])
_CHANGE_FIELDS = frozenset(["key", "before", "after"])
# Typed fields of a file state (see _filestate.FileState; a field a later schema adds passes as JSON).
_FILE_FIELDS = {"content": str, "mode": str, "link": str, "notify": str, "absent": bool,
                "encoding": str, "uid": int, "gid": int, "selinux": str}


class JournalError(Exception):
    pass


def empty() -> Dict[str, Any]:
    return {"schema": SCHEMA, "originals": {}, "generations": [], "next_generation": 1, "targets": {}}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class Checker(object):
    """Validates a loaded journal; every problem is a JournalError naming the field."""

    def __init__(self, where: str) -> None:
        self.where = where

    def bad(self, what: str) -> JournalError:
        return JournalError("%s is corrupt: %s; left untouched" % (self.where, what))

    def key(self, key: Any, where: str) -> str:
        if not isinstance(key, str):
            raise self.bad("%s: key %r is not a string" % (where, key))
        m = _KEY.match(key)
        if not m:
            raise self.bad("%s: key %r is not PREFIX:TARGET" % (where, key))
        prefix, target = m.group(1), m.group(2)
        if prefix not in KEY_PREFIXES:
            raise self.bad("%s: key %r has an unknown prefix %r (known: %s)"
                           % (where, key, prefix, ", ".join(sorted(KEY_PREFIXES))))
        if prefix in PATH_PREFIXES and (not target.startswith("/") or target.startswith("//")
                                        or posixpath.normpath(target) != target):
            raise self.bad("%s: key %r does not name an absolute, normalised path" % (where, key))
        return prefix

    def value(self, prefix: str, value: Any, where: str) -> None:
        if prefix == "dir" and not isinstance(value, bool):
            raise self.bad("%s: a dir: value must be true or false, not %r" % (where, value))
        if prefix != "file" or value is None:
            return
        if not isinstance(value, dict):
            raise self.bad("%s: a file: value must be null or an object, not %s" % (where, type(value).__name__))
        for field, item in value.items():
            kind = _FILE_FIELDS.get(field)
            if kind is not None and not isinstance(item, kind):
                raise self.bad("%s: file field %r must be a %s" % (where, field, kind.__name__))
        if "mode" in value and not _MODE.match(value["mode"]):
            raise self.bad("%s: file mode %r is not an octal mode" % (where, value["mode"]))
        if value.get("encoding", "base64") != "base64":
            raise self.bad("%s: file encoding %r is not base64" % (where, value["encoding"]))
        for field in ("uid", "gid"):
            if field in value and (isinstance(value[field], bool) or value[field] < 0):
                raise self.bad("%s: file %s %r is not an id" % (where, field, value[field]))

    def fields(self, obj: Any, allowed: frozenset, required: Iterable[str], where: str) -> Dict[str, Any]:
        if not isinstance(obj, dict):
            raise self.bad("%s is %s, not an object" % (where, type(obj).__name__))
        unknown = sorted(set(obj) - allowed)
        if unknown:
            raise self.bad("%s has unknown field(s) %s" % (where, ", ".join(unknown)))
        missing = [f for f in required if f not in obj]
        if missing:
            raise self.bad("%s lacks %s" % (where, ", ".join(missing)))
        return obj

    def journal(self, data: Any) -> None:
        if not isinstance(data, dict):
            raise JournalError("%s is corrupt: top level is %s, not an object; left untouched"
                               % (self.where, type(data).__name__))
        schema = data.get("schema")
        if isinstance(schema, bool) or schema not in READABLE_SCHEMAS:
            raise JournalError("%s has schema %r; this collection reads schema %s; left untouched"
                               % (self.where, schema, " or ".join(str(n) for n in READABLE_SCHEMAS)))
        shapes = (("originals", dict), ("generations", list), ("next_generation", int))
        for field, kind in shapes:
            if not isinstance(data.get(field), kind) or isinstance(data.get(field), bool):
                raise self.bad("%r is missing or not a %s" % (field, kind.__name__))
        unknown = sorted(set(data) - _TOP_FIELDS)
        if unknown:
            raise self.bad("unknown top-level field(s) %s" % ", ".join(unknown))
        if schema == 1 and "targets" in data:
            raise self.bad("a schema 1 journal has no 'targets'")
        for key, entry in data["originals"].items():
            self.original(key, entry)
        self.targets(data.get("targets", {}))
        ids = set()
        for i, gen in enumerate(data["generations"]):
            gid = self.generation(i, gen)
            if gid in ids:
                raise self.bad("generation id %d appears twice" % gid)
            if gid >= data["next_generation"]:
                raise self.bad("generation id %d is not below next_generation %d" % (gid, data["next_generation"]))
            ids.add(gid)

    def targets(self, targets: Any) -> None:
        if not isinstance(targets, dict):
            raise self.bad("'targets' is not an object")
        for scope, modules in targets.items():
            if not isinstance(modules, dict):
                raise self.bad("targets[%r] is not an object" % (scope,))
            for module, entry in modules.items():
                where = "targets[%r][%r]" % (scope, module)
                self.fields(entry, _TARGET_FIELDS, ("keys",), where)
                if not isinstance(entry["keys"], dict):
                    raise self.bad("%s: keys is not an object" % where)
                if not isinstance(entry.get("node", {}), dict):
                    raise self.bad("%s: node is not an object" % where)
                if not isinstance(entry.get("run", ""), str):
                    raise self.bad("%s: run must be a string" % where)
                if not _is_int(entry.get("seq", 0)) or entry.get("seq", 0) < 0:
                    raise self.bad("%s: seq %r is not a non-negative integer" % (where, entry.get("seq")))
                for key, value in entry["keys"].items():
                    self.value(self.key(key, where), value, where)

    def original(self, key: Any, entry: Any) -> None:
        where = "original of %r" % (key,)
        prefix = self.key(key, where)
        self.fields(entry, _ORIGINAL_FIELDS, ("value", "seq"), where)
        if not _is_int(entry["seq"]) or entry["seq"] < 0:
            raise self.bad("%s: seq %r is not a non-negative integer" % (where, entry["seq"]))
        if "generation" in entry and (not _is_int(entry["generation"]) or entry["generation"] < 1):
            raise self.bad("%s: generation %r is not a positive integer" % (where, entry["generation"]))
        self.value(prefix, entry["value"], where)

    def generation(self, i: int, gen: Any) -> int:
        where = "generations[%d]" % i
        if not isinstance(gen, dict) or not isinstance(gen.get("changes"), list) or not _is_int(gen.get("id")):
            raise JournalError("%s is corrupt: a generation is malformed (%s); left untouched" % (self.where, where))
        self.fields(gen, _GENERATION_FIELDS, ("id", "changes", "status"), where)
        if gen["id"] < 1:
            raise self.bad("%s: id %r is not a positive integer" % (where, gen["id"]))
        if gen["status"] not in STATUSES:
            raise self.bad("%s: status %r is not one of %s" % (where, gen["status"], ", ".join(STATUSES)))
        for field in ("module", "time", "reconciled", "run", "scope"):
            if field in gen and not isinstance(gen[field], str):
                raise self.bad("%s: %s must be a string" % (where, field))
        for j, change in enumerate(gen["changes"]):
            cwhere = "%s.changes[%d]" % (where, j)
            self.fields(change, _CHANGE_FIELDS, ("key", "before", "after"), cwhere)
            prefix = self.key(change["key"], cwhere)
            self.value(prefix, change["before"], cwhere)
            self.value(prefix, change["after"], cwhere)
        return gen["id"]
