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

:func:`in_sync` answers ``node_tuning``'s ``sync`` (the tuning role's no-change rerun): whether a tune with the same inputs would
change nothing (the role's fast path for a no-change rerun), with the reasons when not.
"""
from __future__ import annotations

import base64

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _apply
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _journal
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _fingerprint
from ansible_collections.hpcnet.rdma.plugins.module_utils.tuning import _concerns as _registry
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional, Sequence

# Where the hpcnet.rdma.tuning role records the applied profile (a journaled file like any other).
PROFILE_FILE = "/etc/hpcnet-rdma/profile.json"


def shown(key: str, value: Any) -> Any:
    """A value as status shows it: a file state as its size, digest, mode and owner, not its bytes."""
    if not key.startswith("file:") or not isinstance(value, dict):
        return value
    out = dict((k, v) for k, v in value.items() if k not in ("content", "encoding"))
    if "content" in value:
        data = base64.b64decode(value["content"]) if value.get("encoding") == "base64" else value["content"].encode()
        import hashlib  # here: loading OpenSSL is a tenth of the node health check's start on a slow node
        out.update(size=len(data), sha256=hashlib.sha256(data).hexdigest())
    return out


def applied_values(journal: _journal.Journal) -> Dict[str, Dict[str, Any]]:
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


def status(host: Host, journal: _journal.Journal, profile_file: Optional[str] = None) -> Dict[str, Any]:
    """generations, tuned (original and live value of each journaled key), interrupted, drift (each
    journaled key against the value the collection last set; each key a call found already right -
    in the journal's targets only - against its target, with its ``scope``) and, with a
    ``profile_file``, the recorded profile; ``journal`` is loaded (or locked) by the caller."""
    tuned = {}
    drift = []
    applied = applied_values(journal)
    originals = journal.originals()
    targets = journal.targets()
    # every key read at once: a domain that reads many targets in one tool run (packages, rings) does so
    keys = list(originals) + sorted(set(
        key for modules in targets.values() for entry in modules.values() for key in entry["keys"]
        if key not in originals and not key.startswith("dir:")))
    # the domains of these keys, any module's (the others are not even imported: the health check runs this)
    domains = _apply.Domains(*_registry.for_keys(keys + list(applied)))
    live = domains.read_values(host, keys)
    for key, original in originals.items():
        current = live[key]
        if isinstance(current, HostError):
            tuned[key] = {"original": original, "error": str(current)}
            drift.append({"key": key, "applied": shown(key, applied[key]["value"]) if key in applied else None,
                          "error": str(current)})
            continue
        tuned[key] = {"original": original, "current": current}
        if key in applied and not domains.same(key, current, applied[key]["value"]):
            drift.append({"key": key, "applied": shown(key, applied[key]["value"]), "current": shown(key, current),
                          "since_generation": applied[key]["generation"]})
    # A key a call manages that was already right when it ran is in no generation (nothing changed);
    # its drift is read against the journal's targets - what the newest call of its scope left it at.
    for scope, modules in sorted(targets.items()):
        for module in sorted(modules):
            for key, target in sorted(modules[module]["keys"].items()):
                if key in tuned or key.startswith("dir:") or any(d["key"] == key for d in drift):
                    continue
                current = live[key]
                if isinstance(current, HostError):
                    drift.append({"key": key, "applied": shown(key, target), "error": str(current), "scope": scope})
                    continue
                if not domains.same(key, current, target):
                    drift.append({"key": key, "applied": shown(key, target), "current": shown(key, current),
                                  "scope": scope})
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
    journal = _journal.Journal(host, journal_dir)
    journal.load()
    return status(host, journal, profile_file)


def interrupted_msg(interrupted: List[Dict[str, Any]]) -> str:
    return "; ".join("generation %d (%s, %s) was interrupted before it committed (its run was killed); the next "
                     "run that takes the journal lock reconciles it" % (g["id"], g["module"], g["time"])
                     for g in interrupted)


def _reason(text: str, scope: Optional[str] = None, module: Optional[str] = None, key: Optional[str] = None,
            **extra: Any) -> Dict[str, Any]:
    out: Dict[str, Any] = dict((k, v) for k, v in (("scope", scope), ("module", module), ("key", key)) if v)
    out["reason"] = text
    out.update(extra)
    return out


def in_sync(host: Host, journal: _journal.Journal, profile_file: str, inputs_digest: str,
            scopes: Sequence[str]) -> Dict[str, Any]:
    """Whether the node is exactly as a tune with ``inputs_digest`` over ``scopes`` leaves it.

    True only when the profile record carries ``inputs_digest`` (the last full tune had the same
    inputs), no generation is interrupted, every scope has targets in the journal (every module
    call of that scope stored what it left the node at) and none was stored after the record's own
    (by a run that failed before it wrote the record), the node's devices still fingerprint as
    they did then, and every target key's live value is the same as its target (each domain's
    ``same``, as status's drift).  Every reason it is not is listed: ``{scope, module, key, reason}``
    (the fields that apply).  ``checked`` counts the keys read; ``record`` is the profile record
    (None when there is none)."""
    reasons: List[Dict[str, Any]] = []
    record = None
    try:
        record = host.read_json(profile_file)
    except HostError as e:
        reasons.append(_reason("the profile record %s cannot be read: %s" % (profile_file, e)))
    else:
        if not isinstance(record, dict):
            reasons.append(_reason("no profile is recorded in %s" % profile_file))
        elif record.get("inputs_digest") != inputs_digest:
            reasons.append(_reason("the profile recorded in %s was applied with other inputs (inputs_digest %s, "
                                   "this run %s)" % (profile_file, record.get("inputs_digest"), inputs_digest)))
    for gen in journal.interrupted():
        reasons.append(_reason("journal generation %d (%s, %s) was interrupted before it committed"
                               % (gen["id"], gen.get("module"), gen.get("time")), gen.get("scope")))
    targets = journal.targets()
    # only the domains of the keys this check reads (the others are not even imported)
    domains = _apply.Domains(*_registry.for_keys(key for scope in scopes for entry in targets.get(scope, {}).values()
                                                 for key in entry["keys"]))
    live_node: Optional[Dict[str, str]] = None
    checked = 0
    # the profile record is the last call of a finished run: an entry stored after it was stored by
    # a run that did not finish (its record was never written), whatever its values say
    sealed = [e.get("seq", 0) for scope in scopes for e in targets.get(scope, {}).values()
              if "file:" + profile_file in e["keys"]]
    if not sealed:
        reasons.append(_reason("no scope has the profile record %s among its targets" % profile_file))
    for scope in scopes:
        modules = targets.get(scope)
        if not modules:
            reasons.append(_reason("no targets stored for this scope (not tuned by this version since its last "
                                   "rollback)", scope))
            continue
        for module in sorted(modules):
            entry = modules[module]
            if live_node is None:
                live_node = _fingerprint.fingerprint(host)
            if sealed and entry.get("seq", 0) > max(sealed):
                reasons.append(_reason("stored after the profile record was last written, by a run that did not "
                                       "finish (%s)" % entry.get("run"), scope, module))
            changed = _fingerprint.differences(entry.get("node", {}), live_node)
            if changed:
                reasons.append(_reason("the node's %s changed since this scope was applied" % ", ".join(changed),
                                       scope, module))
            for key in sorted(entry["keys"]):
                target = entry["keys"][key]
                checked += 1
                try:
                    current = domains.read_value(host, key)
                except Exception as e:  # noqa: BLE001 - unreadable (interface or IRQ gone): not in sync
                    reasons.append(_reason("cannot read it: %s" % e, scope, module, key))
                    continue
                if not domains.same(key, current, target):
                    reasons.append(_reason("differs from its target", scope, module, key,
                                           target=shown(key, target), current=shown(key, current)))
    out = {"in_sync": not reasons, "reasons": reasons, "checked": checked, "inputs_digest": inputs_digest,
           "record": record if isinstance(record, dict) else None}
    if reasons:
        shown_reasons = ["%s%s" % ("".join("%s " % r[f] for f in ("scope", "key") if r.get(f)), r["reason"])
                         for r in reasons[:5]]
        out["msg"] = "not in sync: %s%s" % ("; ".join(shown_reasons),
                                            "; and %d more" % (len(reasons) - 5) if len(reasons) > 5 else "")
    return out
