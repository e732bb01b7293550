# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Verify findings: the rules that turn every node's facts into findings (pure, no Ansible).

Input is one dict per host (``nodes``), each with what the role ``hpcnet.rdma.rdma_verify`` registered:

- ``info``   the result of ``hpcnet.rdma.verify_info`` (``fabric`` = fabric_info's facts, ``delta``, ...)
- ``state``  ``verify_info``'s ``state``: what ``hpcnet.rdma.tuning_state action=status`` returns
  (``drift``, ``profile``; the same code, module_utils/tuning/_status.py)
- ``qos``    ``verify_info``'s ``qos``: what ``hpcnet.rdma.roce_qos_info`` returns for the data
  interfaces (the same code, module_utils/qos/_info.py)
- ``ping``   the result of the path MTU ping (``rc``, ``stdout``, ``stderr``) and its ``probe``
- ``interfaces``  the node's ``rdma_interfaces`` (per-interface coalescing overrides)

A finding is ``{id, family, severity, nodes, title, evidence: [{node, what, value, source}], fix}``
(consistency findings add ``majority``).  ``_findings_catalogue.RULES`` is the catalogue of ids;
docs/verify.md documents it.  This file runs the families and gates the result; the rules live in
``_findings_fleet`` (consistency, drift), ``_findings_path`` (path MTU) and ``_findings_checklist``.
Every rule is linear in the number of hosts: the consistency rules count values in one pass
(``collections.Counter``), the path-MTU probes form a ring.
"""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional

from ansible_collections.hpcnet.rdma.plugins.plugin_utils._findings_catalogue import (
    DEFAULTS, FAMILIES, RANK, SEVERITIES, ev, finding, usable)
from ansible_collections.hpcnet.rdma.plugins.plugin_utils._findings_checklist import checklist
from ansible_collections.hpcnet.rdma.plugins.plugin_utils._findings_fleet import consistency, drift
from ansible_collections.hpcnet.rdma.plugins.plugin_utils._findings_path import path_mtu, plan_probes


def node_findings(nodes: Dict[str, Dict[str, Any]], hosts: List[str], hosts_all: Optional[List[str]] = None) -> List[Dict[str, Any]]:
    found = []
    for h in hosts:
        node = nodes.get(h) or {}
        info = node.get("info")
        if not usable(node):
            msg = (info or {}).get("msg") if isinstance(info, dict) else "no facts were gathered"
            found.append(finding("node.unreadable", [h], "%s: facts could not be read: %s" % (h, msg),
                                 [ev(h, "hpcnet.rdma.verify_info", msg, "the verify_info task")],
                                 "fix what the message names (python3 on the node, become, rdma_verify_interfaces)"))
    missing = [h for h in (hosts_all or []) if h not in hosts]
    if missing:
        found.append(finding("node.unreachable", missing, "not verified (unreachable or failed earlier): %s" % ", ".join(missing),
                             [ev(h, "host", "not in the play's hosts any more", "ansible_play_hosts_all") for h in missing],
                             "make the hosts reachable and re-run verify"))
    return found


def evaluate(nodes: Dict[str, Dict[str, Any]], hosts: List[str], families: Iterable[str],
             probes: Optional[Dict[str, Any]] = None, options: Optional[Dict[str, Any]] = None,
             severity: Optional[Dict[str, str]] = None, hosts_all: Optional[List[str]] = None) -> List[Dict[str, Any]]:
    """All findings of the chosen families, severities overridden, worst first."""
    options = dict(DEFAULTS, **(options or {}))
    families = [f for f in FAMILIES if f in families]
    found = node_findings(nodes, hosts, hosts_all)
    if "drift" in families:
        found.extend(drift(nodes, hosts))
    if "consistency" in families:
        found.extend(consistency(nodes, hosts))
    if "path_mtu" in families:
        found.extend(path_mtu(nodes, hosts, probes if probes is not None else plan_probes(nodes, hosts, options["path_mtu"])))
    if "checklist" in families:
        found.extend(checklist(nodes, hosts, options))
    out = []
    for f in found:
        sev = (severity or {}).get(f["id"], f["severity"])
        if sev == "ignore":
            continue
        f["severity"] = sev
        out.append(f)
    return sort_findings(out)


def sort_findings(found: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    return sorted(found, key=lambda f: (-RANK[f["severity"]], f["family"], f["id"], f["nodes"]))


def gate(found: List[Dict[str, Any]], fail_on: str) -> Dict[str, Any]:
    """Whether the play must fail: any finding at ``fail_on`` or worse (never: never)."""
    counts = dict((s, sum(1 for f in found if f["severity"] == s)) for s in SEVERITIES)
    worst = next((s for s in SEVERITIES if counts[s]), None)
    reached = [] if fail_on == "never" else [f for f in found if RANK[f["severity"]] >= RANK[fail_on]]
    return {"fail_on": fail_on, "failed": bool(reached), "counts": counts, "worst": worst,
            "reached": ["%s %s: %s" % (f["severity"], f["id"], f["title"]) for f in reached]}
