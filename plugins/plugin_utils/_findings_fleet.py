# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Verify findings across hosts (pure, no Ansible): consistency (what differs from the majority of
the hosts, counted in one pass) and drift (tuning_state's drift, one finding per key over all hosts).
"""
from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any, Dict, List, Tuple

from ansible_collections.hpcnet.rdma.plugins.module_utils.health import _manifest
from ansible_collections.hpcnet.rdma.plugins.module_utils.health._manifest import one_value
from ansible_collections.hpcnet.rdma.plugins.plugin_utils._findings_catalogue import (
    data_ports, ev, finding, irqbalance_active, majority, profile_of, result_ok, usable, value_key)

DRIFT_DOMAINS = {"sysctl": "sysctl", "nic": "nic", "irq": "irq", "dcb": "qos", "mlnx_qos": "qos", "ecn": "qos",
                 "rdmacm": "qos", "kmod": "rdma", "rxe": "rdma", "rdma": "rdma", "devnode": "rdma",
                 "file": "file", "dir": "file", "service": "service", "pkg": "pkg"}


# ---------------------------------------------------------------------- consistency
def _extract(item: str, node: Dict[str, Any]) -> Tuple[Any, str]:
    """(value, source) of one consistency item on one node; value None = not applicable."""
    info = node["info"]
    fabric = info["fabric"]
    data = info.get("data_interfaces") or []
    ports = data_ports(fabric, data)
    qos = node.get("qos") if result_ok(node.get("qos")) else {}
    if item in ("mtu", "driver", "kernel", "rdma_core"):
        return _manifest.value_of(item, info)
    if item == "rdma_mtu":
        return one_value([p.get("active_mtu") for _d, _p, p in ports]), "ibv_devinfo -v (active_mtu)"
    if item == "rdma_ports":
        return (len(ports) if data else None), "/sys/class/infiniband/*/ports/*/gid_attrs/ndevs"
    if item == "firmware":          # the devices of the data ports only (the manifest takes every device)
        return _manifest.firmware_of(fabric, sorted(set(d for d, _p, _x in ports)))
    if item in ("pfc", "trust"):
        ifs = (qos or {}).get("interfaces") or {}
        vals = [ifs[n].get(item) for n in data if n in ifs and ifs[n].get("dcb")]
        if item == "pfc":
            vals = [sorted(v) if isinstance(v, list) else v for v in vals]
        return one_value(vals), "dcb -j / mlnx_qos (hpcnet.rdma.roce_qos_info) on %s" % ", ".join(data)
    if item in ("tos", "roce_mode"):
        field = "tos" if item == "tos" else "mode"
        ports_qos = [p for p in ((qos or {}).get("rdma_ports") or []) if p.get("netdev") in data]
        return (one_value([p.get(field) for p in ports_qos]),
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
                expected.add(value_key(exp))
        if len(values) < 2:
            continue
        win, odd, tie = majority(values, json.loads(next(iter(expected))) if len(expected) == 1 else None)
        if not odd:
            continue
        held = sum(1 for v in values.values() if value_key(v) == value_key(win))
        broken_by = "the recorded profile" if len(expected) == 1 and value_key(win) in expected else "play order"
        note = "; a tie, broken by %s" % broken_by if tie else ""
        shown = ", ".join("%s has %s" % (h, _show(values[h])) for h in odd[:10]) + (" ..." if len(odd) > 10 else "")
        evidence = [ev(h, _WHAT[item], values[h], sources[h]) for h in odd]
        first_major = next(h for h, v in values.items() if value_key(v) == value_key(win))
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
            balancers = [h for h in hs if irqbalance_active(nodes.get(h) or {})]
            fix = ("irqbalance (running on %s) or a hand edit moved this IRQ: keep rdma_irqbalance=ban (irqbalance's "
                   "policy script skips our IRQs) and re-run hpcnet.rdma.tune_rdma --tags irq"
                   % (", ".join(balancers) if balancers else "none of them"))
        first = items[0][1]
        found.append(finding("drift." + domain, hs, "%s drifted on %s: applied %s, now %s"
                             % (key, ", ".join(hs[:10]) + (" ..." if len(hs) > 10 else ""),
                                _show(first.get("applied")), _show(first.get("current"))), evidence, fix, key=key))
    return found
