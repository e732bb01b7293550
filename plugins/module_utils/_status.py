# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the journal says is tuned on a node, read back: ``tuning_state action=status``.

One reader for the two modules that show it: ``tuning_state`` (status, and the state a rollback
starts from) and ``verify_info`` (``drift=true``, so a verify reads the node in one module call).
For every journaled key its original and live value; the keys whose live value differs from the
value the collection last set (the drift); the generations, the interrupted ones, and the profile
the ``hpcnet.rdma.tuning`` role recorded.  Reads only: it takes no journal lock and writes nothing.
Every domain is read through ``_registry`` (any key any module wrote).
"""
from __future__ import annotations

import base64
import hashlib
from typing import Any, Dict, List, Optional

from ansible_collections.hpcnet.rdma.plugins.module_utils import _engine, _registry
from ansible_collections.hpcnet.rdma.plugins.module_utils._host import Host, HostError

# Where the hpcnet.rdma.tuning role records the applied profile (a journaled file like any other).
PROFILE_FILE = "/etc/hpcnet-rdma/profile.json"


def shown(key: str, value: Any) -> Any:
    """A value as status shows it: a file state as its size, digest, mode and owner, not its bytes."""
    if not key.startswith("file:") or not isinstance(value, dict):
        return value
    out = dict((k, v) for k, v in value.items() if k not in ("content", "encoding"))
    if "content" in value:
        data = base64.b64decode(value["content"]) if value.get("encoding") == "base64" else value["content"].encode()
        out.update(size=len(data), sha256=hashlib.sha256(data).hexdigest())
    return out


def applied_values(journal: _engine.Journal) -> Dict[str, Dict[str, Any]]:
    """Each journaled key's newest change: the value the collection last set, and when."""
    applied = {}
    for g in journal.generations():
        for c in g["changes"]:
            applied[c["key"]] = {"value": c["after"], "generation": g["id"], "time": g.get("time")}
    return applied


def profile(host: Host, path: str, applied: Dict[str, Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """The profile record the tuning role wrote (name, digest, chain), with when it was applied."""
    try:
        record = host.read_json(path)
    except HostError as e:
        return {"file": path, "error": str(e)}
    if record is None:
        return None
    if not isinstance(record, dict):
        return {"file": path, "error": "not a JSON object"}
    out = dict((k, record[k]) for k in ("name", "digest", "chain", "description") if k in record)
    out["file"] = path
    entry = applied.get("file:" + path)
    out["applied_at"] = entry["time"] if entry else None
    out["generation"] = entry["generation"] if entry else None
    return out


def status(host: Host, journal: _engine.Journal, profile_file: Optional[str] = None) -> Dict[str, Any]:
    """generations, tuned (original and live value of each key), interrupted, drift and, with a
    ``profile_file``, the recorded profile; ``journal`` is loaded (or locked) by the caller."""
    tuned = {}
    drift = []
    domains = _engine.Domains(*_registry.ALL)   # any key any module wrote
    applied = applied_values(journal)
    for key, original in journal.originals().items():
        try:
            current = domains.read_value(host, key)
        except HostError as e:
            tuned[key] = {"original": original, "error": str(e)}
            drift.append({"key": key, "applied": shown(key, applied[key]["value"]) if key in applied else None,
                          "error": str(e)})
            continue
        tuned[key] = {"original": original, "current": current}
        if key in applied and not domains.same(key, current, applied[key]["value"]):
            drift.append({"key": key, "applied": shown(key, applied[key]["value"]), "current": shown(key, current),
                          "since_generation": applied[key]["generation"]})
    gens = []
    for g in journal.generations():
        gen = {"id": g["id"], "module": g.get("module"), "status": g.get("status"), "time": g.get("time"),
               "keys": [c["key"] for c in g["changes"]]}
        for field in ("reconciled", "run", "scope"):
            if g.get(field):
                gen[field] = g[field]
        gens.append(gen)
    interrupted = [{"id": g["id"], "module": g.get("module"), "time": g.get("time")} for g in journal.interrupted()]
    out = {"generations": gens, "tuned": tuned, "interrupted": interrupted, "drift": drift}
    if profile_file:
        out["profile"] = profile(host, profile_file, applied)
    return out


def read(host: Host, journal_dir: str, profile_file: Optional[str] = PROFILE_FILE) -> Dict[str, Any]:
    """:func:`status` of the journal in ``journal_dir``, loaded without its lock (read only).

    Raises ``JournalError`` (an untrusted or corrupt journal) and ``HostError``."""
    journal = _engine.Journal(host, journal_dir)
    journal.load()
    return status(host, journal, profile_file)


def interrupted_msg(interrupted: List[Dict[str, Any]]) -> str:
    return "; ".join("generation %d (%s, %s) was interrupted before it committed (its run was killed); the next "
                     "run that takes the journal lock reconciles it" % (g["id"], g["module"], g["time"])
                     for g in interrupted)
