# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The on-node journal: originals of every key the collection touched, and generations.

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
  writes nothing.  Every rollback drops all targets.  ``tuning_state action=in_sync`` compares them
  with the live values.  Schema 1 (no targets) is read and written back as schema 2.

Trust: whoever can write ``journal.json`` steers what rollback does as root, so the journal
directory and every directory above it must be owned by root (or the running user) and not be
writable by group or others; a directory above it may be world-writable only with the sticky bit
(``/tmp``), because then nobody else can rename or replace the entry below it, which must be ours.
``journal.json`` and ``lock`` are opened with ``O_NOFOLLOW`` and must be regular files of root
(or the running user) that group and others cannot write.

Writes are atomic (temp file, fsync, rename, fsync of the directory); a journal with no original
and no generation left is removed rather than written empty.  A corrupt, foreign or untrusted
journal is a :class:`JournalError` and is never rewritten or reset.
"""
from __future__ import annotations

import errno
import json
import os
import posixpath
import re
import tempfile
import time
from typing import Any, Dict, Iterable, List, Optional, Sequence

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import os_reason
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._trust import path_trust_problem, untrusted_file
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Change, Plan

SCHEMA = 2
READABLE_SCHEMAS = (1, 2)   # schema 1 had no targets; it is upgraded in memory and written as 2
DEFAULT_DIR = "/var/lib/hpcnet-rdma"
JOURNAL_FILE = "journal.json"
LOCK_FILE = "lock"
TEMP_PREFIX = ".journal-"
TEMP_SUFFIX = ".tmp"
PROBE_PREFIX = ".probe-"   # Host.dir_writable's probe file

# Every journal key prefix any module writes (the engine's domain registry maps each to its code;
# a unit test keeps the two equal).  A key with another prefix makes the journal foreign.
KEY_PREFIXES = frozenset(["sysctl", "nic", "file", "irq", "service", "pkg", "kmod", "rxe", "rdma",
                          "devnode", "dir", "dcb", "mlnx_qos", "ecn", "rdmacm"])
# Prefixes whose target is a node path: it must be absolute and normalised (no ``..``).
PATH_PREFIXES = frozenset(["file", "dir", "devnode"])
STATUSES = ("applying", "applied")
_KEY = re.compile(r"^([a-z_]+):([^\x00-\x1f\x7f]+)$")
_MODE = re.compile(r"^0?[0-7]{3,4}$")
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


def _empty() -> Dict[str, Any]:
    return {"schema": SCHEMA, "originals": {}, "generations": [], "next_generation": 1, "targets": {}}


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# ---------------------------------------------------------------------- trust of the directory
# The rule is node/_trust's (one place for every directory the collection writes through): the journal
# directory itself may not be writable by group or others even with the sticky bit.
def _file_problem(path: str, st: os.stat_result) -> Optional[str]:
    problem = untrusted_file(st)
    return "%s is %s" % (path, problem) if problem else None


def trust_problem(path: str) -> Optional[str]:
    """Why the directory ``path`` (a real path, absolute) cannot be trusted to hold the journal,
    or None (:func:`_trust.path_trust_problem`; the part that does not exist yet is created by root
    with mode 0700 and checked again once it exists)."""
    return path_trust_problem(path, strict_last=True)


# ---------------------------------------------------------------------- validation
class _Checker(object):
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


# ---------------------------------------------------------------------- the journal
class Journal(object):
    def __init__(self, host: Host, directory: str = DEFAULT_DIR) -> None:
        self.host = host
        self.directory = directory.rstrip("/") or "/"
        self.path = self.directory + "/" + JOURNAL_FILE
        self.lock_path = self.directory + "/" + LOCK_FILE
        self._data: Optional[Dict[str, Any]] = None
        self.made: List[str] = []   # the directories (full paths) the last make_dir created

    def _full(self, path: str) -> str:
        return self.host.p(path)

    # ------------------------------------------------------------------ trust
    def check_trust(self) -> None:
        """JournalError when the journal directory (or a directory above it) is not trusted."""
        full = self._full(self.directory)
        problem = trust_problem(full)
        if problem:
            raise JournalError("journal_dir %s is not trusted: %s. Whoever can change it steers what "
                               "rollback does as root; use a directory owned by root, mode 0700, whose "
                               "parents only root can write (or sticky, like /tmp)" % (self.directory, problem))

    def make_dir(self) -> Optional[str]:
        """Create the missing part of the journal directory, one level at a time, mode 0700 (the
        process umask can only narrow it).  When a level cannot be made, the levels made before it
        are removed again and the reason is returned (None when the directory is there)."""
        full = self._full(self.directory)
        missing = []
        while full and not os.path.lexists(full):
            missing.append(full)
            parent = posixpath.dirname(full)
            if parent == full:
                break
            full = parent
        made: List[str] = []
        self.made = made
        for path in reversed(missing):
            try:
                os.mkdir(path, 0o700)
                made.append(path)
            except FileExistsError:
                pass
            except OSError as e:
                for done in reversed(made):
                    try:
                        os.rmdir(done)
                    except OSError:
                        break
                del made[:]
                return os_reason(e)
        return None

    def on_disk(self) -> bool:
        """Whether ``journal.json`` exists (a journal with nothing in it is removed, not written)."""
        return os.path.lexists(self._full(self.path))

    def remove_made(self, made: Sequence[str]) -> None:
        """Remove the directories a :meth:`make_dir` created, innermost first, while they are empty
        (a call that failed having changed nothing leaves no tree behind).  Best effort."""
        for path in reversed(list(made)):
            try:
                os.rmdir(path)
            except OSError:
                return

    # ------------------------------------------------------------------ loading
    def load(self) -> Dict[str, Any]:
        """Check the directory's trust, then read and validate the journal (absent is empty)."""
        self.check_trust()
        raw = self._read()
        if raw is None:
            self._data = _empty()
            return self._data
        try:
            data = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError) as e:
            raise JournalError(
                "journal %s is corrupt (%s); it was left untouched: move it aside to start a new "
                "journal, or restore it from a backup" % (self.path, e))
        _Checker("journal %s" % self.path).journal(data)
        data["schema"] = SCHEMA          # written back as the current schema
        data.setdefault("targets", {})
        self._data = data
        return data

    def _read(self) -> Optional[bytes]:
        full = self._full(self.path)
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(full, flags)
        except FileNotFoundError:
            return None
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise JournalError("journal %s is a symbolic link; refusing to follow it (left untouched)"
                                   % self.path)
            raise JournalError("cannot read journal %s: %s" % (self.path, e.strerror or e))
        try:
            problem = _file_problem(self.path, os.fstat(fd))
            if problem:
                raise JournalError("journal %s is not trusted: %s; left untouched" % (self.path, problem))
            chunks = []
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
            return b"".join(chunks)
        except OSError as e:
            raise JournalError("cannot read journal %s: %s" % (self.path, e.strerror or e))
        finally:
            os.close(fd)

    @property
    def data(self) -> Dict[str, Any]:
        if self._data is None:
            return self.load()
        return self._data

    def is_empty(self) -> bool:
        return not self.data["originals"] and not self.data["generations"] and not self.data["targets"]

    # ------------------------------------------------------------------ writing
    def _save(self) -> None:
        """Write the journal atomically; a journal with nothing in it is removed instead."""
        if self.is_empty():
            self._remove()
            return
        text = json.dumps(self.data, indent=1, sort_keys=True) + "\n"
        try:
            self._write(text.encode("utf-8"))
        except OSError as e:
            raise JournalError("cannot write journal %s: %s" % (self.path, os_reason(e)))

    def _write(self, data: bytes) -> None:
        full = self._full(self.path)
        parent = posixpath.dirname(full)
        if not os.path.isdir(parent):
            self.make_dir()
            self.check_trust()
        fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=TEMP_SUFFIX, dir=parent)  # O_EXCL|O_NOFOLLOW, 0600
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
            os.close(fd)
            fd = -1
            os.replace(tmp, full)
        except BaseException:
            if fd >= 0:
                os.close(fd)
            if os.path.lexists(tmp):
                os.unlink(tmp)
            raise
        _fsync_dir(parent)

    def _remove(self) -> None:
        full = self._full(self.path)
        try:
            os.unlink(full)
        except FileNotFoundError:
            return
        except OSError as e:
            raise JournalError("cannot remove journal %s: %s" % (self.path, e.strerror or e))
        _fsync_dir(posixpath.dirname(full))

    def sweep(self, dry: bool = False) -> List[str]:
        """The temp files a killed run left in the journal directory (journal writes, and the
        writability probe the engine makes under the lock); removed unless ``dry``.  Only under
        the lock, where no live run can be writing them."""
        full = self._full(self.directory)
        found = []
        try:
            names = sorted(os.listdir(full))
        except OSError:
            return found
        for name in names:
            if (name.startswith(TEMP_PREFIX) and name.endswith(TEMP_SUFFIX)) or name.startswith(PROBE_PREFIX):
                try:
                    if not dry:
                        os.unlink(posixpath.join(full, name))
                    found.append(name)
                except OSError:
                    pass
        return found

    # ------------------------------------------------------------------ queries
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
        self._data = _empty()
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


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
