# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Verify findings, the catalogue: the severities, families and rule ids (:data:`RULES`, documented in
docs/verify.md), the option checks, and the helpers every rule builds on (a finding, its evidence,
which hosts are usable, the majority of a value over hosts).  Pure, no Ansible.

The rules themselves: ``_findings_fleet`` (consistency, drift), ``_findings_path`` (path-MTU probes),
``_findings_checklist`` (per-node checks); ``_findings`` runs them all.
"""
from __future__ import annotations

import json
import re
from collections import Counter, OrderedDict
from typing import Any, Dict, Iterable, List, Optional, Tuple

SEVERITIES = ("error", "warning", "info")
RANK = {"info": 1, "warning": 2, "error": 3}
FAIL_ON = ("error", "warning", "info", "never")
FAMILIES = ("drift", "consistency", "path_mtu", "checklist")
UNLIMITED = -1

# id -> (family, default severity, what it means).  "node" findings are reported whatever the families.
RULES: "OrderedDict[str, Tuple[str, str, str]]" = OrderedDict([
    ("node.unreadable", ("node", "error", "a node's facts could not be read (the gathering task failed)")),
    ("node.unreachable", ("node", "error", "a host of the group was unreachable or failed before verify")),
    ("drift.unavailable", ("drift", "warning", "tuning_state status failed: drift cannot be told")),
    ("drift.no_profile", ("drift", "info", "no profile is recorded on the node (never tuned by hpcnet.rdma.tuning)")),
    ("drift.interrupted", ("drift", "warning", "a tuning run was killed mid-way; its generation is still applying")),
] + [("drift." + d, ("drift", "warning", "a %s value the collection set has changed since" % d))
     for d in ("sysctl", "nic", "irq", "qos", "rdma", "file", "service", "pkg", "other")] + [
    ("consistency.mtu", ("consistency", "error", "data-interface MTU differs between hosts")),
    ("consistency.rdma_mtu", ("consistency", "error", "RDMA active MTU differs between hosts")),
    ("consistency.rdma_ports", ("consistency", "error", "number of RDMA ports on the data interfaces differs")),
    ("consistency.driver", ("consistency", "warning", "data NIC driver differs between hosts")),
    ("consistency.firmware", ("consistency", "warning", "RDMA device firmware differs between hosts")),
    ("consistency.kernel", ("consistency", "warning", "kernel release differs between hosts")),
    ("consistency.rdma_core", ("consistency", "warning", "rdma-core version differs between hosts")),
    ("consistency.pfc", ("consistency", "error", "PFC priorities differ between hosts")),
    ("consistency.trust", ("consistency", "error", "DSCP/PCP trust differs between hosts")),
    ("consistency.tos", ("consistency", "error", "RDMA CM ToS differs between hosts")),
    ("consistency.roce_mode", ("consistency", "error", "RoCE mode differs between hosts")),
    ("consistency.nccl_tc", ("consistency", "error", "NCCL_IB_TC differs between hosts")),
    ("consistency.ucx_tc", ("consistency", "error", "UCX_IB_TRAFFIC_CLASS differs between hosts")),
    ("consistency.profile", ("consistency", "warning", "the recorded profile differs between hosts")),
    ("path_mtu.failed", ("path_mtu", "error", "a full-size, do-not-fragment ping did not cross the data path")),
    ("path_mtu.no_address", ("path_mtu", "warning", "a host has no IPv4 address on its data interface: not probed")),
    ("path_mtu.no_ping", ("path_mtu", "warning", "ping is not installed: the path MTU was not probed")),
    ("path_mtu.single_host", ("path_mtu", "info", "one host only: there is no path to probe")),
    ("interface.missing", ("checklist", "error", "a data interface named in rdma_verify_interfaces does not exist")),
    ("netdev.down", ("checklist", "error", "a data interface is not up")),
    ("rdma.no_device", ("checklist", "info", "no RDMA port on the data interfaces")),
    ("port.not_active", ("checklist", "error", "an RDMA port is not ACTIVE")),
    ("roce.no_v2_gid", ("checklist", "error", "no RoCE v2 GID on the data interface")),
    ("rdma.mtu_above_netdev", ("checklist", "error", "the RDMA active MTU is above the netdev MTU")),
    ("irq.concentrated", ("checklist", "warning", "every queue IRQ of a NIC is on one CPU")),
    ("irq.off_numa", ("checklist", "warning", "queue IRQs are on CPUs off the NIC's NUMA node")),
    ("irqbalance.not_banned", ("checklist", "warning", "irqbalance runs and is not told to skip the pinned IRQs")),
    ("softnet.drops", ("checklist", "error", "softnet backlog drops grew")),
    ("softnet.squeeze", ("checklist", "warning", "softnet time squeezes grew (softirq budget exhausted)")),
    ("netdev.errors", ("checklist", "error", "NIC error counters grew")),
    ("netdev.drops", ("checklist", "warning", "NIC drop/discard counters grew")),
    ("netdev.pause", ("checklist", "warning", "pause frames grew")),
    ("flow_control.mismatch", ("checklist", "error", "pause frames of the kind the host does not use grew")),
    ("tcp.retransmits", ("checklist", "warning", "TCP retransmit rate above rdma_verify_retrans_ratio")),
    ("coalesce.profile_mismatch", ("checklist", "warning", "interrupt coalescing contradicts the profile")),
    ("memlock.too_low", ("checklist", "error", "the RDMA group's memlock limit is below rdma_verify_memlock")),
    ("devnode.too_open", ("checklist", "warning", "/dev/infiniband access is wider than rdma_verify_device_mode")),
    ("app.tc", ("checklist", "error", "an app's traffic class (NCCL_IB_TC, UCX_IB_TRAFFIC_CLASS) is not the node's RoCE ToS")),
    ("app.gid", ("checklist", "error", "an app's GID index names no GID of the RoCE version on the data port")),
    ("app.device", ("checklist", "error", "an app is told to use an RDMA device or port the node does not have")),
])
DEFAULTS: Dict[str, Any] = {"retrans_ratio": 0.001, "memlock": "unlimited", "device_mode": "0660", "path_mtu": None}


class VerifyError(ValueError):
    """Bad input to the comparison (an unknown family, severity or rule id)."""


# ---------------------------------------------------------------------- input checks
def validate_options(families: Iterable[str], fail_on: str, severity: Dict[str, str],
                     memlock: Any = "unlimited", device_mode: str = "0660", retrans_ratio: float = 0.001) -> List[str]:
    """Every problem with the options, each naming the field, the value and what is allowed."""
    errors = []
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        errors.append("rdma_verify_checks / --tags: unknown check family %s; allowed: %s"
                      % (", ".join(repr(f) for f in unknown), ", ".join(FAMILIES)))
    if fail_on not in FAIL_ON:
        errors.append("rdma_verify_fail_on: %r is not a severity; allowed: %s" % (fail_on, ", ".join(FAIL_ON)))
    for rule, sev in sorted((severity or {}).items()):
        if rule not in RULES:
            errors.append("rdma_verify_severity: unknown finding id %r; allowed: %s" % (rule, ", ".join(RULES)))
        elif sev not in SEVERITIES + ("ignore",):
            errors.append("rdma_verify_severity[%s]: %r is not a severity; allowed: %s"
                          % (rule, sev, ", ".join(SEVERITIES + ("ignore",))))
    if memlock_required(memlock) is None:
        errors.append("rdma_verify_memlock: %r is neither 'unlimited' nor a size in KiB" % (memlock,))
    if not re.match(r"^0?[0-7]{3}$", str(device_mode)):
        errors.append("rdma_verify_device_mode: %r is not an octal mode such as 0660" % (device_mode,))
    try:
        if not 0 <= float(retrans_ratio) <= 1:
            raise ValueError
    except (TypeError, ValueError):
        errors.append("rdma_verify_retrans_ratio: %r is not a ratio between 0 and 1" % (retrans_ratio,))
    return errors


def memlock_required(value: Any) -> Optional[int]:
    if str(value) in ("unlimited", "infinity", "-1"):
        return UNLIMITED
    return int(value) if str(value).isdigit() else None


# ---------------------------------------------------------------------- helpers
def finding(rule: str, nodes: List[str], title: str, evidence: List[Dict[str, Any]], fix: str,
            **extra: Any) -> Dict[str, Any]:
    family, severity, _meaning = RULES[rule]
    out = {"id": rule, "family": family, "severity": severity, "nodes": list(nodes), "title": title,
           "evidence": evidence, "fix": fix}
    out.update(extra)
    return out


def ev(node: str, what: str, value: Any, source: str) -> Dict[str, Any]:
    return {"node": node, "what": what, "value": value, "source": source}


def usable(node: Optional[Dict[str, Any]]) -> bool:
    info = (node or {}).get("info")
    return isinstance(info, dict) and not info.get("failed") and isinstance(info.get("fabric"), dict)


def result_ok(result: Any) -> bool:
    return isinstance(result, dict) and not result.get("failed") and not result.get("skipped")


def value_key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def data_ports(fabric: Dict[str, Any], data: List[str]) -> List[Tuple[str, str, Dict[str, Any]]]:
    """(device, port, port facts) of the RDMA ports on the data interfaces (IB ports always)."""
    out = []
    for dev, info in sorted(fabric.get("devices", {}).items()):
        for port, p in sorted(info.get("ports", {}).items(), key=lambda kv: str(kv[0])):
            if p.get("link_layer") == "InfiniBand" or set(p.get("netdevs") or []) & set(data) \
                    or (not p.get("netdevs") and (info.get("parent") in data or not data)):
                out.append((dev, str(port), p))
    return out


def profile_of(node: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    prof = (node.get("info") or {}).get("profile")
    return prof if isinstance(prof, dict) and "error" not in prof else None


def majority(values: "OrderedDict[str, Any]", expected: Any = None) -> Tuple[Any, List[str], bool]:
    """(majority value, hosts that differ from it, tie?).  ``values`` is host -> value in play order.

    A tie is broken by ``expected`` (the value the recorded profile asks for) when one of the tied
    values is it, else by the value of the first host in play order.
    """
    counts = Counter(value_key(v) for v in values.values())
    top = max(counts.values())
    tied = [k for k, c in counts.items() if c == top]
    if len(tied) == 1:
        win = tied[0]
    elif expected is not None and value_key(expected) in tied:
        win = value_key(expected)
    else:
        win = next(value_key(v) for v in values.values() if value_key(v) in tied)
    odd = [h for h, v in values.items() if value_key(v) != win]
    return json.loads(win), odd, len(tied) > 1


def irqbalance_active(node: Dict[str, Any]) -> bool:
    ib = ((node.get("info") or {}).get("irqbalance") or {})
    return bool(ib.get("installed") and (ib.get("service") or {}).get("active"))
