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
(consistency findings add ``majority``).  :data:`RULES` is the catalogue of ids; docs/verify.md
documents it.  Every rule is linear in the number of hosts: the consistency rules count values
in one pass (``collections.Counter``), the path-MTU probes form a ring.
"""
from __future__ import annotations

import json
import re
from collections import Counter, OrderedDict
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple

from ansible_collections.hpcnet.rdma.plugins.module_utils.irq._domain import format_cpulist

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
])
DRIFT_DOMAINS = {"sysctl": "sysctl", "nic": "nic", "irq": "irq", "dcb": "qos", "mlnx_qos": "qos", "ecn": "qos",
                 "rdmacm": "qos", "kmod": "rdma", "rxe": "rdma", "rdma": "rdma", "devnode": "rdma",
                 "file": "file", "dir": "file", "service": "service", "pkg": "pkg"}
_ERRORS = re.compile(r"(err|crc|fifo|over_?run|timeout)", re.IGNORECASE)
_DROPS = re.compile(r"(drop|discard|miss|out_of_buffer|no_?buf)", re.IGNORECASE)
_PFC_PAUSE = re.compile(r"(prio_?\d+_pause|pfc|priority)", re.IGNORECASE)
_BAD_OPERSTATES = ("down", "lowerlayerdown", "notpresent", "dormant")
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


def _ok(result: Any) -> bool:
    return isinstance(result, dict) and not result.get("failed") and not result.get("skipped")


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _one(values: List[Any]) -> Any:
    """One value per host: the value when the host's data interfaces agree, else the sorted list."""
    distinct = []
    for v in values:
        if v is not None and v not in distinct:
            distinct.append(v)
    if not distinct:
        return None
    return distinct[0] if len(distinct) == 1 else sorted(distinct, key=_key)


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
    counts = Counter(_key(v) for v in values.values())
    top = max(counts.values())
    tied = [k for k, c in counts.items() if c == top]
    if len(tied) == 1:
        win = tied[0]
    elif expected is not None and _key(expected) in tied:
        win = _key(expected)
    else:
        win = next(_key(v) for v in values.values() if _key(v) in tied)
    odd = [h for h, v in values.items() if _key(v) != win]
    return json.loads(win), odd, len(tied) > 1


# ---------------------------------------------------------------------- consistency
def _netdev_values(node: Dict[str, Any], field: str) -> Tuple[Any, str]:
    info = node["info"]
    data = info.get("data_interfaces") or []
    netdevs = info["fabric"].get("netdevs", {})
    path = {"mtu": "/sys/class/net/%s/mtu", "driver": "/sys/class/net/%s/device/driver"}[field]
    return (_one([(netdevs.get(n) or {}).get(field) for n in data]),
            ", ".join(path % n for n in data) or "no data interface")


def _extract(item: str, node: Dict[str, Any]) -> Tuple[Any, str]:
    """(value, source) of one consistency item on one node; value None = not applicable."""
    info = node["info"]
    fabric = info["fabric"]
    data = info.get("data_interfaces") or []
    ports = data_ports(fabric, data)
    qos = node.get("qos") if _ok(node.get("qos")) else {}
    if item in ("mtu", "driver"):
        return _netdev_values(node, item)
    if item == "rdma_mtu":
        return _one([p.get("active_mtu") for _d, _p, p in ports]), "ibv_devinfo -v (active_mtu)"
    if item == "rdma_ports":
        return (len(ports) if data else None), "/sys/class/infiniband/*/ports/*/gid_attrs/ndevs"
    if item == "firmware":
        devs = sorted(set(d for d, _p, _x in ports))
        return (_one([fabric["devices"][d].get("fw_ver") for d in devs]),
                ", ".join("/sys/class/infiniband/%s/fw_ver" % d for d in devs) or "no RDMA device")
    if item == "kernel":
        return info.get("kernel"), "/proc/sys/kernel/osrelease"
    if item == "rdma_core":
        rc = info.get("rdma_core") or {}
        return rc.get("version"), rc.get("source") or "dpkg status / libibverbs file name"
    if item in ("pfc", "trust"):
        ifs = (qos or {}).get("interfaces") or {}
        vals = [ifs[n].get(item) for n in data if n in ifs and ifs[n].get("dcb")]
        if item == "pfc":
            vals = [sorted(v) if isinstance(v, list) else v for v in vals]
        return _one(vals), "dcb -j / mlnx_qos (hpcnet.rdma.roce_qos_info) on %s" % ", ".join(data)
    if item in ("tos", "roce_mode"):
        field = "tos" if item == "tos" else "mode"
        ports_qos = [p for p in ((qos or {}).get("rdma_ports") or []) if p.get("netdev") in data]
        return (_one([p.get(field) for p in ports_qos]),
                ", ".join("/sys/kernel/config/rdma_cm/%s/ports/%s/default_roce_%s" % (p["device"], p["port"], field)
                          for p in ports_qos) or "rdma_cm configfs")
    if item in ("nccl_tc", "ucx_tc"):
        app = (info.get("apps") or {}).get(item.split("_")[0]) or {}
        return (app.get("value") if app.get("present") else None), "%s (%s)" % (app.get("file"), app.get("key"))
    if item == "profile":
        prof = profile_of(node)
        return ((prof or {}).get("name"), (prof or {}).get("digest")) if prof else None, "/etc/hpcnet-rdma/profile.json"
    raise KeyError(item)


def _expected(item: str, node: Dict[str, Any]) -> Any:
    prof = profile_of(node) or {}
    if item == "mtu":
        return (prof.get("nic") or {}).get("mtu")
    if item in ("pfc", "trust", "tos"):
        value = (prof.get("qos") or {}).get(item)
        return sorted(value) if item == "pfc" and isinstance(value, list) else value
    return None


CONSISTENCY = ("mtu", "rdma_mtu", "rdma_ports", "driver", "firmware", "kernel", "rdma_core", "pfc", "trust", "tos",
               "roce_mode", "nccl_tc", "ucx_tc", "profile")
_WHAT = {"mtu": "data-interface MTU", "rdma_mtu": "RDMA active MTU", "rdma_ports": "RDMA ports on the data interfaces",
         "driver": "data NIC driver", "firmware": "RDMA firmware", "kernel": "kernel release",
         "rdma_core": "rdma-core version", "pfc": "PFC priorities", "trust": "QoS trust", "tos": "RDMA CM ToS",
         "roce_mode": "RoCE mode", "nccl_tc": "NCCL_IB_TC", "ucx_tc": "UCX_IB_TRAFFIC_CLASS",
         "profile": "recorded profile (name, digest)"}
_FIX = {
    "mtu": "set the same MTU on every data interface: rdma_interfaces[].mtu or the profile's nic.mtu "
           "(hpcnet.rdma.nic_tuning), then re-run hpcnet.rdma.tune_rdma on the odd nodes",
    "rdma_mtu": "give every data interface the same MTU (nic.mtu) and the same rdma_roce_qos.rdma_mtu",
    "rdma_ports": "create the missing RDMA device: rdma_stack with rdma_core_soft_roce (soft-RoCE), or load the "
                  "NIC's RDMA driver (rdma_core_modules); check the HCA with ibv_devinfo",
    "driver": "install the same NIC driver (kernel/OFED) on every node",
    "firmware": "flash the same firmware on every HCA (mlxfwmanager / the vendor's tool)",
    "kernel": "boot the same kernel on every node of the fabric",
    "rdma_core": "install the same rdma-core release everywhere (rdma_core_packages, hpcnet.rdma.rdma_core)",
    "pfc": "set the same rdma_roce_qos.pfc (profile qos.pfc) on every node (hpcnet.rdma.roce_qos)",
    "trust": "set the same rdma_roce_qos.trust (profile qos.trust) on every node (hpcnet.rdma.roce_qos)",
    "tos": "set the same rdma_roce_qos.tos (profile qos.tos) on every node (hpcnet.rdma.roce_qos)",
    "roce_mode": "set the same rdma_roce_qos.roce_mode on every node (hpcnet.rdma.roce_qos)",
    "nccl_tc": "render /etc/nccl.conf from the same ToS everywhere (role hpcnet.rdma.fabric_app_config, fabric_app_config_tos)",
    "ucx_tc": "render ucx.conf from the same ToS everywhere (role hpcnet.rdma.fabric_app_config, fabric_app_config_tos)",
    "profile": "tune every node with the same rdma_profile (hpcnet.rdma.tune_rdma or switch_profile)",
}


def consistency(nodes: Dict[str, Dict[str, Any]], hosts: List[str]) -> List[Dict[str, Any]]:
    found = []
    live = [h for h in hosts if usable(nodes.get(h))]
    for item in CONSISTENCY:
        values: "OrderedDict[str, Any]" = OrderedDict()
        sources = {}
        expected = set()
        for h in live:
            value, source = _extract(item, nodes[h])
            if value is None:
                continue
            values[h], sources[h] = value, source
            exp = _expected(item, nodes[h])
            if exp is not None:
                expected.add(_key(exp))
        if len(values) < 2:
            continue
        win, odd, tie = majority(values, json.loads(next(iter(expected))) if len(expected) == 1 else None)
        if not odd:
            continue
        held = sum(1 for v in values.values() if _key(v) == _key(win))
        broken_by = "the recorded profile" if len(expected) == 1 and _key(win) in expected else "play order"
        note = "; a tie, broken by %s" % broken_by if tie else ""
        shown = ", ".join("%s has %s" % (h, _show(values[h])) for h in odd[:10]) + (" ..." if len(odd) > 10 else "")
        evidence = [ev(h, _WHAT[item], values[h], sources[h]) for h in odd]
        first_major = next(h for h, v in values.items() if _key(v) == _key(win))
        evidence.append(ev(first_major, _WHAT[item] + " (majority)", win, sources[first_major]))
        found.append(finding("consistency." + item, odd,
                             "%s differs: %s; the majority (%d of %d hosts%s) has %s"
                             % (_WHAT[item], shown, held, len(values), note, _show(win)),
                             evidence, _FIX[item], majority={"value": win, "hosts": held, "of": len(values), "tie": tie}))
    return found


def _show(value: Any) -> str:
    if isinstance(value, list):
        return "[%s]" % ", ".join(_show(v) for v in value)
    return str(value)


# ---------------------------------------------------------------------- drift
def drift(nodes: Dict[str, Dict[str, Any]], hosts: List[str]) -> List[Dict[str, Any]]:
    found = []
    grouped: "OrderedDict[Tuple[str, str], List[Tuple[str, Dict[str, Any]]]]" = OrderedDict()
    for h in hosts:
        node = nodes.get(h) or {}
        state = node.get("state")
        if not isinstance(state, dict) or state.get("skipped"):
            continue
        if state.get("failed"):
            found.append(finding("drift.unavailable", [h], "%s: tuning_state status failed: %s" % (h, state.get("msg")),
                                 [ev(h, "tuning_state status", state.get("msg"), "hpcnet.rdma.tuning_state")],
                                 "fix what the message names (the journal directory, rdma_journal_dir)"))
            continue
        if state.get("profile") is None and not state.get("drift"):
            found.append(finding("drift.no_profile", [h], "%s: no profile recorded; drift is not checked" % h,
                                 [ev(h, "profile record", None, "/etc/hpcnet-rdma/profile.json")],
                                 "tune the node: ansible-playbook hpcnet.rdma.tune_rdma -e rdma_profile=NAME"))
        for g in state.get("interrupted") or []:
            found.append(finding("drift.interrupted", [h], "%s: generation %s (%s) was interrupted"
                                 % (h, g.get("id"), g.get("module")),
                                 [ev(h, "journal generation", g, "/var/lib/hpcnet-rdma/journal.json")],
                                 "re-run hpcnet.rdma.tune_rdma (the next run reconciles it) or roll back"))
        for d in state.get("drift") or []:
            domain = DRIFT_DOMAINS.get(str(d.get("key", "")).split(":", 1)[0], "other")
            grouped.setdefault((domain, d.get("key")), []).append((h, d))
    for (domain, key), items in grouped.items():
        hs = [h for h, _d in items]
        evidence = [ev(h, key, {"applied": d.get("applied"), "current": d.get("current"),
                                "since_generation": d.get("since_generation")},
                       "hpcnet.rdma.tuning_state status (journal vs the live value)") for h, d in items]
        fix = "re-apply the profile (hpcnet.rdma.tune_rdma) or find what changed %s" % key
        if domain == "irq":
            balancers = [h for h in hs if _irqbalance_active(nodes.get(h) or {})]
            fix = ("irqbalance (running on %s) or a hand edit moved this IRQ: keep rdma_irqbalance=ban (irqbalance's "
                   "policy script skips our IRQs) and re-run hpcnet.rdma.tune_rdma --tags irq"
                   % (", ".join(balancers) if balancers else "none of them"))
        first = items[0][1]
        found.append(finding("drift." + domain, hs, "%s drifted on %s: applied %s, now %s"
                             % (key, ", ".join(hs[:10]) + (" ..." if len(hs) > 10 else ""),
                                _show(first.get("applied")), _show(first.get("current"))), evidence, fix, key=key))
    return found


def _irqbalance_active(node: Dict[str, Any]) -> bool:
    ib = ((node.get("info") or {}).get("irqbalance") or {})
    return bool(ib.get("installed") and (ib.get("service") or {}).get("active"))


# ---------------------------------------------------------------------- path MTU
def _data_mtu(info: Dict[str, Any], ifname: str) -> Optional[int]:
    return ((info["fabric"].get("netdevs") or {}).get(ifname) or {}).get("mtu")


def data_address(info: Dict[str, Any]) -> Tuple[Optional[str], Optional[str]]:
    """(interface, first IPv4 address) of the first data interface with an address (verify_info's result)."""
    for n in info.get("data_interfaces") or []:
        addrs = (info.get("addresses") or {}).get(n) or []
        if addrs:
            return n, addrs[0]
    return None, None


def pairs_of(values: Iterable[Any], mode: str = "ring") -> List[Tuple[Any, Any]]:
    """Pairs of hosts in order: ``ring`` (i -> i+1 and the last -> the first, O(n) pairs; two hosts give one
    pair each way) or ``pairs`` (0-1, 2-3, ...; an odd last host is left out).  The path MTU probes use the
    ring; hpcnet.rdma.rdma_bench either."""
    items = list(values)
    if mode == "ring":
        return [(items[i], items[(i + 1) % len(items)]) for i in range(len(items))] if len(items) > 1 else []
    if mode == "pairs":
        return [(items[i], items[i + 1]) for i in range(0, len(items) - 1, 2)]
    raise ValueError("pairing %r is not one of ring, pairs" % (mode,))


def plan_probes(nodes: Dict[str, Dict[str, Any]], hosts: List[str], path_mtu: Optional[int] = None) -> Dict[str, Any]:
    """A ring over the hosts with a data address: host i pings host i+1 (O(n) pings in all).

    The size is ``path_mtu - 28`` when given, else the larger of both ends' data MTUs minus 28 (IPv4 + ICMP
    headers), so a pair whose ends disagree fails in at least one direction.  A host without a data address
    gets ``{"skip": reason}``.
    """
    probes: Dict[str, Any] = {}
    ring = []
    for h in hosts:
        node = nodes.get(h)
        if not usable(node):
            probes[h] = {"skip": "its facts could not be read"}
            continue
        ifname, addr = data_address(node["info"])
        if addr is None:
            probes[h] = {"skip": "no IPv4 address on its data interfaces %s" % (node["info"].get("data_interfaces") or [])}
            continue
        ring.append((h, ifname, addr))
    if len(ring) < 2:
        for h, _i, _a in ring:
            probes[h] = {"skip": "no other host with a data address to ping"}
        return probes
    for (h, ifname, addr), (peer, peer_if, peer_addr) in pairs_of(ring, "ring"):
        mtus = [m for m in (_data_mtu(nodes[h]["info"], ifname), _data_mtu(nodes[peer]["info"], peer_if)) if m]
        mtu = path_mtu or (max(mtus) if mtus else 1500)
        probes[h] = {"peer": peer, "address": peer_addr, "interface": ifname, "source": addr, "mtu": mtu,
                     "size": mtu - 28,
                     "argv": ["ping", "-M", "do", "-s", str(mtu - 28), "-c", "2", "-W", "1", "-I", ifname, peer_addr]}
    return probes


def path_mtu(nodes: Dict[str, Dict[str, Any]], hosts: List[str], probes: Dict[str, Any]) -> List[Dict[str, Any]]:
    found = []
    planned = [h for h in hosts if "argv" in (probes.get(h) or {})]
    if len([h for h in hosts if usable(nodes.get(h))]) < 2:
        if hosts:
            found.append(finding("path_mtu.single_host", list(hosts), "only %s: no path to probe" % ", ".join(hosts),
                                 [], "run verify on a group of at least two hosts (rdma_hosts)"))
        return found
    for h in hosts:
        probe = probes.get(h) or {}
        if "skip" in probe and usable(nodes.get(h)):
            found.append(finding("path_mtu.no_address", [h], "%s was not probed: %s" % (h, probe["skip"]),
                                 [ev(h, "data addresses", (nodes[h]["info"].get("addresses") or {}), "ip -j addr show")],
                                 "give the data interface an IPv4 address, or name the data interface in rdma_verify_interfaces"))
    for h in planned:
        probe = probes[h]
        res = (nodes.get(h) or {}).get("ping")
        if not isinstance(res, dict) or res.get("skipped"):
            continue
        out = " ".join(((res.get("stdout") or "") + " " + (res.get("stderr") or "")).split())
        if res.get("rc") is None or "No such file" in str(res.get("msg", "")) + out:
            found.append(finding("path_mtu.no_ping", [h], "%s: ping could not run: %s" % (h, res.get("msg") or out),
                                 [ev(h, "ping", res.get("msg") or out, " ".join(probe["argv"]))],
                                 "install iputils-ping (rdma_core_extra_packages)"))
            continue
        if res.get("rc") == 0:
            continue
        m = re.search(r"mtu[= ](\d+)", out)
        loss = re.search(r"(\d+)% packet loss", out)
        detail = ("a hop or %s's own route allows only %s bytes" % (h, m.group(1)) if m
                  else "%s%% of the full-size packets were lost" % loss.group(1) if loss else "ping failed")
        found.append(finding("path_mtu.failed", [h, probe["peer"]],
                             "%s -> %s (%s) does not carry MTU %d unfragmented: %s"
                             % (h, probe["peer"], probe["address"], probe["mtu"], detail),
                             [ev(h, "ping rc %s" % res.get("rc"), out[-400:], " ".join(probe["argv"]))],
                             "make every hop carry MTU %d: the NICs (nic.mtu), the switch ports and any route MTU "
                             "(ip route ... mtu); or lower the fabric's MTU everywhere" % probe["mtu"],
                             mtu=probe["mtu"], limit=int(m.group(1)) if m else None))
    return found


# ---------------------------------------------------------------------- checklist
def _cpus(text: str) -> List[int]:
    out: List[int] = []
    for part in (text or "").split(","):
        part = part.strip()
        if "-" in part:
            a, b = part.split("-", 1)
            if a.isdigit() and b.isdigit():
                out.extend(range(int(a), int(b) + 1))
        elif part.isdigit():
            out.append(int(part))
    return out


def _grown(delta: Dict[str, int], pattern: "re.Pattern[str]", exclude: Optional["re.Pattern[str]"] = None) -> Dict[str, int]:
    return dict((k, v) for k, v in sorted(delta.items())
                if v and pattern.search(k) and not (exclude and exclude.search(k)))


def checklist(nodes: Dict[str, Dict[str, Any]], hosts: List[str], options: Dict[str, Any]) -> List[Dict[str, Any]]:
    found = []
    any_rdma = any(data_ports(nodes[h]["info"]["fabric"], nodes[h]["info"].get("data_interfaces") or [])
                   for h in hosts if usable(nodes.get(h)))
    for h in hosts:
        node = nodes.get(h)
        if not usable(node):
            continue
        found.extend(_node_checklist(h, node, options, any_rdma))
    return found


def _node_checklist(h: str, node: Dict[str, Any], options: Dict[str, Any], any_rdma: bool) -> List[Dict[str, Any]]:
    found = []
    info = node["info"]
    fabric = info["fabric"]
    data = info.get("data_interfaces") or []
    netdevs = fabric.get("netdevs") or {}
    delta = info.get("delta") or {}
    prof = profile_of(node) or {}
    interval = delta.get("interval") or 0
    for name in info.get("missing_interfaces") or []:
        found.append(finding("interface.missing", [h], "%s: data interface %s does not exist" % (h, name),
                             [ev(h, "interface", name, "/sys/class/net/%s" % name)],
                             "fix rdma_verify_interfaces, or create the interface"))
    for name in data:
        state = (netdevs.get(name) or {}).get("operstate")
        if state in _BAD_OPERSTATES:
            found.append(finding("netdev.down", [h], "%s: %s is %s" % (h, name, state),
                                 [ev(h, "%s operstate" % name, state, "/sys/class/net/%s/operstate" % name)],
                                 "bring the link up (cable, switch port, ip link set %s up)" % name))
    ports = data_ports(fabric, data)
    if not ports:
        reason = "ib_core is not loaded" if "ib_core" not in (fabric.get("modules") or []) else "no RDMA device"
        found.append(finding("rdma.no_device", [h], "%s: no RDMA port on %s (%s)" % (h, ", ".join(data) or "any interface", reason),
                             [ev(h, "RDMA devices", sorted(fabric.get("devices") or {}), "/sys/class/infiniband")],
                             "rdma_stack: true with the NIC's RDMA driver or rdma_core_soft_roce (hpcnet.rdma.rdma_core)"
                             if any_rdma else "nothing to do on a node without RDMA hardware; rdma_core_soft_roce for a lab"))
    for dev, port, p in ports:
        src = "/sys/class/infiniband/%s/ports/%s" % (dev, port)
        if p.get("state") != "ACTIVE":
            found.append(finding("port.not_active", [h], "%s: %s port %s is %s (%s)" % (h, dev, port, p.get("state"), p.get("phys_state")),
                                 [ev(h, "%s/%s state" % (dev, port), {"state": p.get("state"), "phys_state": p.get("phys_state")},
                                     src + "/state, phys_state")],
                                 "check the cable and the switch port; for RoCE the netdev must be up; for IB a subnet manager"))
        if p.get("link_layer") == "Ethernet":
            v2 = [g for g in p.get("gids") or [] if g.get("type") == "RoCE v2" and g.get("netdev") in data]
            if not v2:
                found.append(finding("roce.no_v2_gid", [h], "%s: %s port %s has no RoCE v2 GID on %s" % (h, dev, port, ", ".join(data)),
                                     [ev(h, "%s/%s GIDs" % (dev, port), p.get("gids"), src + "/gids, gid_attrs/types")],
                                     "give the data interface an IP address (RoCE v2 GIDs follow them) and rdma_roce_qos.roce_mode v2"))
        for nd in p.get("netdevs") or []:
            mtu = (netdevs.get(nd) or {}).get("mtu")
            if p.get("active_mtu") and mtu and p["active_mtu"] > mtu:
                found.append(finding("rdma.mtu_above_netdev", [h], "%s: %s port %s active MTU %d is above %s's MTU %d"
                                     % (h, dev, port, p["active_mtu"], nd, mtu),
                                     [ev(h, "active_mtu / netdev mtu", [p["active_mtu"], mtu], "ibv_devinfo -v, /sys/class/net/%s/mtu" % nd)],
                                     "raise %s's MTU (nic.mtu) or lower rdma_roce_qos.rdma_mtu" % nd))
    found.extend(_irq_findings(h, node, prof))
    found.extend(_counter_findings(h, node, interval))
    found.extend(_setting_findings(h, node, prof, options, bool(ports)))
    return found


def _irq_cpus(irq: Dict[str, Any]) -> Set[int]:
    """The CPUs an IRQ is served on: its effective affinity, unless that lies outside the mask set
    in smp_affinity_list - then a move is pending (x86 moves an MSI at its next interrupt, so an
    idle queue keeps its old CPU in effective_affinity_list) and the mask is where it will run."""
    mask = set(_cpus(irq.get("affinity") or ""))
    effective = set(_cpus(irq.get("effective") or ""))
    return effective if effective and (not mask or effective <= mask) else mask


def _irq_findings(h: str, node: Dict[str, Any], prof: Dict[str, Any]) -> List[Dict[str, Any]]:
    found = []
    info = node["info"]
    policy = (prof.get("irq") or {}).get("policy")
    for name, detail in sorted((info.get("irqs") or {}).items()):
        if not detail or not detail.get("irqs"):
            continue
        src = "/proc/irq/N/smp_affinity_list, effective_affinity_list"
        local = _cpus(detail.get("local_cpus") or "")
        where = dict((i["name"], _irq_cpus(i)) for i in detail["irqs"])
        used = set().union(*where.values()) if where else set()
        shown = dict((n, format_cpulist(list(cpus))) for n, cpus in where.items())
        if len(detail["irqs"]) > 1 and len(used) == 1 and len(local) > 1 and policy != "single":
            found.append(finding("irq.concentrated", [h], "%s: all %d queue IRQs of %s are on CPU %d (local CPUs %s)"
                                 % (h, len(detail["irqs"]), name, next(iter(used)), detail.get("local_cpus")),
                                 [ev(h, "%s queue IRQ affinity" % name, shown, src)],
                                 "spread them: rdma_irq_interfaces with policy spread-local (hpcnet.rdma.irq_affinity), "
                                 "or the profile's irq.policy single if one CPU is meant"))
        online = set(_cpus(detail.get("online_cpus") or ""))
        off = sorted(used - set(local)) if local and set(local) != online else []
        if off:
            found.append(finding("irq.off_numa", [h], "%s: queue IRQs of %s run on CPUs %s outside its NUMA node %s (local CPUs %s)"
                                 % (h, name, off, detail.get("numa_node"), detail.get("local_cpus")),
                                 [ev(h, "%s queue IRQ affinity" % name, shown, src)],
                                 "pin them NUMA-local: rdma_irq_interfaces (hpcnet.rdma.irq_affinity, policy spread-local)"))
    ib = info.get("irqbalance") or {}
    tuned_irqs = bool(prof.get("irq")) and any((d or {}).get("irqs") for d in (info.get("irqs") or {}).values())
    if tuned_irqs and _irqbalance_active(node) and not ib.get("policyscript"):
        found.append(finding("irqbalance.not_banned", [h], "%s: irqbalance runs without the collection's policy script: "
                             "it will move the pinned IRQs" % h,
                             [ev(h, "irqbalance", ib, "systemctl is-active irqbalance, /etc/default/irqbalance")],
                             "rdma_irqbalance: ban (or stop) and re-run hpcnet.rdma.tune_rdma --tags irq"))
    return found


def _counter_findings(h: str, node: Dict[str, Any], interval: float) -> List[Dict[str, Any]]:
    found = []
    info = node["info"]
    delta = info.get("delta") or {}
    per = " in %.1f s" % interval
    pfc_on = _pfc_on(node)
    for name, d in sorted((delta.get("netdevs") or {}).items()):
        counters = dict(d.get("counters") or {})
        counters.update(d.get("ethtool_counters") or {})
        src = "/sys/class/net/%s/statistics/*, ethtool -S %s (sampled twice%s)" % (name, name, per)
        errors = _grown(counters, _ERRORS)
        if errors:
            found.append(finding("netdev.errors", [h], "%s: %s error counters grew%s: %s" % (h, name, per, _kv(errors)),
                                 [ev(h, "%s counter growth" % name, errors, src)],
                                 "check the cable/optics and the switch port (CRC, FIFO), the driver and firmware"))
        drops = _grown(counters, _DROPS, _ERRORS)
        if drops:
            found.append(finding("netdev.drops", [h], "%s: %s drop/discard counters grew%s: %s" % (h, name, per, _kv(drops)),
                                 [ev(h, "%s counter growth" % name, drops, src)],
                                 "larger rings (nic.rings), more channels, NUMA-local IRQs (irq.policy), "
                                 "lossless QoS for RoCE (rdma_roce_qos.pfc)"))
        pause = _grown(counters, re.compile("pause", re.IGNORECASE))
        if pause:
            found.append(finding("netdev.pause", [h], "%s: %s pause frames grew%s: %s" % (h, name, per, _kv(pause)),
                                 [ev(h, "%s pause counter growth" % name, pause, src)],
                                 "a congested receiver or switch: check buffers, ECN (rdma_roce_qos.ecn) and PFC priorities"))
            pfc = dict((k, v) for k, v in pause.items() if _PFC_PAUSE.search(k))
            glob = dict((k, v) for k, v in pause.items() if not _PFC_PAUSE.search(k))
            if pfc_on is not None and ((pfc_on and glob) or (not pfc_on and pfc)):
                found.append(finding("flow_control.mismatch", [h], "%s: %s has PFC %s but %s pause frames grew: %s"
                                     % (h, name, "on" if pfc_on else "off", "global" if pfc_on else "per-priority",
                                        _kv(glob if pfc_on else pfc)),
                                     [ev(h, "%s pause counter growth" % name, pause, src),
                                      ev(h, "%s PFC" % name, pfc_on, "dcb -j pfc (hpcnet.rdma.roce_qos_info)")],
                                     "configure the switch port and the host alike: PFC on the RoCE priority on both "
                                     "(rdma_roce_qos.pfc), global pause off"))
    sn = delta.get("softnet") or {}
    if sn.get("dropped"):
        found.append(finding("softnet.drops", [h], "%s: softnet backlog dropped %d packets%s" % (h, sn["dropped"], per),
                             [ev(h, "softnet dropped growth", sn["dropped"], "/proc/net/softnet_stat (column 2)")],
                             "raise net.core.netdev_max_backlog (profile sysctls) and spread RX (irq.policy, RPS)"))
    if sn.get("time_squeeze"):
        found.append(finding("softnet.squeeze", [h], "%s: softnet ran out of budget %d times%s" % (h, sn["time_squeeze"], per),
                             [ev(h, "softnet time_squeeze growth", sn["time_squeeze"], "/proc/net/softnet_stat (column 3)")],
                             "raise net.core.netdev_budget / netdev_budget_usecs (profile sysctls), spread IRQs"))
    return found


def _kv(d: Dict[str, Any]) -> str:
    return ", ".join("%s=+%s" % kv for kv in sorted(d.items()))


def _pfc_on(node: Dict[str, Any]) -> Optional[bool]:
    qos = node.get("qos")
    if not _ok(qos):
        return None
    data = node["info"].get("data_interfaces") or []
    ifs = [i for n, i in (qos.get("interfaces") or {}).items() if n in data and i.get("dcb")]
    if not ifs:
        return None
    return any(i.get("pfc") for i in ifs)


def _setting_findings(h: str, node: Dict[str, Any], prof: Dict[str, Any], options: Dict[str, Any],
                      has_rdma: bool) -> List[Dict[str, Any]]:
    found = []
    info = node["info"]
    delta = info.get("delta") or {}
    tcp = delta.get("tcp") or {}
    ratio = float(options.get("retrans_ratio", DEFAULTS["retrans_ratio"]))
    if tcp.get("out_segs") and tcp.get("retrans_segs") and float(tcp["retrans_segs"]) / tcp["out_segs"] > ratio:
        found.append(finding("tcp.retransmits", [h], "%s: TCP retransmitted %d of %d segments (%.2f%%) in %.1f s"
                             % (h, tcp["retrans_segs"], tcp["out_segs"], 100.0 * tcp["retrans_segs"] / tcp["out_segs"],
                                delta.get("interval") or 0),
                             [ev(h, "Tcp RetransSegs/OutSegs growth", tcp, "/proc/net/snmp")],
                             "look for drops on the path (netdev.drops, path_mtu), tcp_mtu_probing=1, buffers (profile sysctls)"))
    wanted = dict((prof.get("nic") or {}).get("coalesce") or {})
    overrides = dict((e.get("name"), e.get("coalesce") or {}) for e in node.get("interfaces") or [] if isinstance(e, dict))
    for name, live in sorted((info.get("coalesce") or {}).items()):
        want = dict(wanted)
        want.update(overrides.get(name) or {})
        diff = dict((k, {"wanted": v, "live": (live or {}).get(k)}) for k, v in sorted(want.items())
                    if v is not None and live and k in live and live.get(k) != v)
        if diff:
            found.append(finding("coalesce.profile_mismatch", [h], "%s: %s coalescing differs from the profile %s: %s"
                                 % (h, name, prof.get("name"),
                                    ", ".join("%s %s (wanted %s)" % (k, d["live"], d["wanted"]) for k, d in diff.items())),
                                 [ev(h, "%s coalesce" % name, diff, "ethtool -c %s; profile nic.coalesce" % name)],
                                 "re-apply the profile (hpcnet.rdma.tune_rdma --tags nic) or change nic.coalesce"))
    if has_rdma:
        required = memlock_required(options.get("memlock", DEFAULTS["memlock"]))
        ml = info.get("memlock") or {}
        line = ml.get("soft") or ml.get("hard")
        have = line.get("kib") if line else None
        low = have is None or (required == UNLIMITED and have != UNLIMITED) or \
            (required != UNLIMITED and have != UNLIMITED and have < (required or 0))
        if low:
            found.append(finding("memlock.too_low", [h], "%s: members of %s get memlock %s, below %s"
                                 % (h, ml.get("group"), line.get("value") if line else "the default (8192 KiB; no limits line)",
                                    options.get("memlock", DEFAULTS["memlock"])),
                                 [ev(h, "memlock for @%s" % ml.get("group"), ml, (line or {}).get("source") or
                                     "/etc/security/limits.conf, limits.d/*.conf")],
                                 "rdma_core_memlock_group / rdma_core_memlock_limit (hpcnet.rdma.rdma_core, rdma_stack: true)"))
        allowed = int(str(options.get("device_mode", DEFAULTS["device_mode"])), 8)
        wide = dict((n, d) for n, d in sorted((info.get("devnodes") or {}).items())
                    if int(d.get("mode", "0"), 8) & ~allowed)
        if wide:
            found.append(finding("devnode.too_open", [h], "%s: /dev/infiniband nodes wider than %s: %s"
                                 % (h, options.get("device_mode", DEFAULTS["device_mode"]),
                                    ", ".join("%s %s (%s)" % (n, d.get("mode"), d.get("group")) for n, d in wide.items())),
                                 [ev(h, "/dev/infiniband modes", wide, "stat /dev/infiniband/*")],
                                 "rdma_core_devices / rdma_core_device_group / rdma_core_device_mode (hpcnet.rdma.rdma_core)"))
    return found


# ---------------------------------------------------------------------- everything
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
