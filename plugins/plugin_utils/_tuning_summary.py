# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The tuning role's per-host summary (action ``hpcnet.rdma.tuning_summary``): per concern the keys that
changed - or would change, in check mode - and what could not be set, each with its reason, and whether
the run took the in-sync fast path. Pure: from the registered results to one dict.

Its keys are snake_case and the same in every mode (``check_mode`` and ``outcome`` say whether ``changes``
changed or would change), and it goes to the run's custom stats as *global* stats keyed by host
(``{stats_key: {inventory_hostname: summary}}``): ansible-runner - AWX's executor - keeps only the global
custom stats (the ``playbook_on_stats`` event's ``artifact_data``, AWX's job artifacts); per-host stats are
dropped there.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

# The concerns in the order the role runs them (roles/tuning/tasks/main.yml).
CONCERNS = ("stack", "sysctl", "nic", "irq", "qos", "services", "app_config", "record")


def _ran(result: Any) -> bool:
    """A registered result of a step that ran (not skipped by tags or when) and reports its changes."""
    return isinstance(result, dict) and "skipped" not in result and "changes" in result


def _s(value: Any) -> str:
    return "" if value is None else str(value)


def _first(entry: Dict[str, Any], keys: List[str], default: str = "?") -> str:
    for k in keys:
        if entry.get(k) is not None:
            return _s(entry[k])
    return default


def not_set(result: Dict[str, Any]) -> List[str]:
    """What one module result could not set, one line each with the reason."""
    lines = []
    for u in result.get("unsettable") or []:
        lines.append("not settable here: %s - %s" % (_s(u.get("key")), _s(u.get("reason"))))
    for u in result.get("refused") or []:
        lines.append("refused: %s - %s" % (_first(u, ["key", "irq", "interface"]), _first(u, ["reason", "msg"], "")))
    for u in result.get("unsupported") or []:
        what = (_first(u, ["interface"]), _first(u, ["feature", "setting"], ""), _s(u.get("reason")))
        lines.append("unsupported: %s %s - %s" % what)
    for u in result.get("not_possible") or []:
        lines.append("not possible here: %s - %s" % (_first(u, ["part"]), _s(u.get("reason"))))
    for u in result.get("absent") or []:
        lines.append("absent: %s - %s" % (_first(u, ["unit"]), _s(u.get("reason"))))
    for u in result.get("notes") or []:
        if isinstance(u, str):
            lines.append("note: " + u)
    for u in result.get("capped") or []:
        what = tuple(_s(u.get(k)) for k in ("interface", "setting", "requested", "applied"))
        lines.append("capped: %s %s %s -> %s (hardware maximum)" % what)
    return lines


def fast_path(fast: bool, fast_allowed: bool, sync: Optional[Dict[str, Any]], scopes: List[str]) -> str:
    """Whether the run took the in-sync fast path, and what proved it - or why not."""
    sync = sync or {}
    if fast:
        return ("taken: in sync, every concern skipped - the record carries this run's inputs digest %s, and %s keys "
                "of %s read live equal their targets on unchanged devices"
                % (_s(sync.get("inputs_digest"))[:12], _s(sync.get("checked")), ", ".join(scopes)))
    if not fast_allowed:
        return ("not taken: only a full run may skip (rdma_fast_rerun, no --tags, no --skip-tags of the role's tags, "
                "not a switch, not a bake)")
    if sync.get("in_sync"):
        return "not taken: in sync, but the RDMA stack's role changed something before the one call, so every concern ran"
    return "not taken: " + _s(sync.get("msg") or "not checked")


def summarize(results: Dict[str, List[Any]], profile: Optional[str], digest: Optional[str],
              previous_profile: Optional[str], mode: Optional[str], run: Optional[str], fast_path_text: str,
              check_mode: bool) -> Dict[str, Any]:
    """The summary: a concern with no step that ran (tags, when) has no entry."""
    changed = {}
    unset = {}
    for concern in list(CONCERNS) + sorted(set(results) - set(CONCERNS)):
        ran = [r for r in results.get(concern) or [] if _ran(r)]
        if not ran:
            continue
        changed[concern] = [c.get("key") for r in ran for c in (r.get("changes") or []) if isinstance(c, dict)]
        issues = [line for r in ran for line in not_set(r)]
        if issues:
            unset[concern] = issues
    return {"profile": profile, "digest": digest, "previous_profile": previous_profile, "mode": mode, "run": run,
            "check_mode": bool(check_mode), "outcome": "would_change" if check_mode else "changed",
            "changes": changed, "not_set": unset, "fast_path": fast_path_text}


def stats(summary: Dict[str, Any], stats_key: str, host: str) -> Dict[str, Any]:
    """A result's ``ansible_stats``: the summary under ``stats_key`` keyed by ``host``, global and aggregated
    (what ``set_stats: {data: {stats_key: {host: summary}}, per_host: false, aggregate: true}`` hands the
    strategy) - every host's task merges its entry into the one global dict ansible-runner keeps."""
    return {"data": {stats_key: {host: summary}}, "per_host": False, "aggregate": True}


def of_fast_call(result: Dict[str, Any], options: Dict[str, Any], check_mode: bool) -> Optional[Dict[str, Any]]:
    """The summary of a node_tuning call that found the node in sync and ran no step (the role's fast
    path), from the call's result and its ``summary`` option; None for any other call."""
    if result.get("failed") or result.get("skipped_steps") is not True:
        return None
    sync = result.get("sync") or {}
    if not sync.get("in_sync"):
        return None
    record = sync.get("record") or {}
    return summarize({}, options.get("profile"), options.get("digest"), record.get("name"), options.get("rdma_mode"),
                     options.get("run"), fast_path(True, True, sync, options.get("scopes") or []), check_mode)
