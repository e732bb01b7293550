# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The node health check ``hpcnet-rdma-check`` (role ``hpcnet.rdma.rdma_health``): read, judge, verdict.

:func:`read` reads the node through the readers ``fabric_info`` and ``verify_info`` use
(``_fabric.gather``, ``_findings_node`` for the data interfaces, limits and rdma-core, ``_status``
for the drift against the journal, ``_sysctl.read_value``), in stages under a time budget: a stage
that would start after the deadline is skipped and named.  The judges are pure and live in
``_judges`` (the finding codes, ``judge``, ``verdict``); :func:`run` is one check: read, judge,
verdict, and the counters (:func:`state_of`) the next run compares with.
"""
from __future__ import annotations

import re
import time
from typing import Any, Callable, Dict, List, Optional

from ansible_collections.hpcnet.rdma.plugins.module_utils.facts import _fabric
from ansible_collections.hpcnet.rdma.plugins.module_utils.facts import _findings as _findings_node
from ansible_collections.hpcnet.rdma.plugins.module_utils.health._judges import NEIGH_KEYS, data_ports, judge, verdict
from ansible_collections.hpcnet.rdma.plugins.module_utils.tuning import _status
from ansible_collections.hpcnet.rdma.plugins.module_utils.sysctl import _domain as _sysctl
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._journal_file import DEFAULT_DIR
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._journal_schema import JournalError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import ParseError

PCIE = ("current_link_speed", "max_link_speed", "current_link_width", "max_link_width")
# IB port counters (sysfs counters/ and hw_counters/) that mean trouble when they grow
_PORT_TROUBLE = re.compile(r"(err|discard|downed|recovery|overrun|out_of_sequence|seq_err|out_of_buffer|timeout)",
                           re.IGNORECASE)
EXPECTED = (HostError, JournalError, ParseError, ValueError, OSError)

DEFAULTS: Dict[str, Any] = {
    "interfaces": [], "fallback_interfaces": [], "tools": ["ibv_devinfo", "rdma"], "ethtool": False,
    "journal_dir": DEFAULT_DIR, "profile_file": _status.PROFILE_FILE, "memlock_group": "rdma", "memlock_kib": -1,
    "fleet_size": 0, "flap_max": 0, "nccl_conf": "/etc/nccl.conf", "budget": 2.0, "drift": True,
    "metrics_dir": "",
}


# ---------------------------------------------------------------------- reading (node I/O through Host)
def state_of(facts: Dict[str, Any], now: float) -> Dict[str, Any]:
    """What the next run compares with: per data netdev its carrier_changes and sysfs error counters,
    per RDMA port its trouble counters."""
    fabric = facts.get("fabric") or {}
    netdevs = {}
    for n in facts.get("data_interfaces") or []:
        info = (fabric.get("netdevs") or {}).get(n) or {}
        netdevs[n] = {"carrier_changes": (facts.get("carrier") or {}).get(n), "counters": info.get("counters") or {}}
    return {"time": now, "netdevs": netdevs, "ports": facts.get("port_counters") or {}}


def _int(text: Optional[str]) -> Optional[int]:
    try:
        return int(text.strip()) if text is not None else None
    except ValueError:
        return None


def port_counters(host: Host, fabric: Dict[str, Any], data: List[str]) -> Dict[str, Dict[str, int]]:
    out = {}
    for dev, port, _p in data_ports(fabric, data):
        base = "%s/%s/ports/%s" % (_fabric.IB, dev, port)
        values = {}
        for sub in ("counters", "hw_counters"):
            for name in host.listdir("%s/%s" % (base, sub)):
                if _PORT_TROUBLE.search(name):
                    value = _int(host.read("%s/%s/%s" % (base, sub, name)))
                    if value is not None:
                        values[name] = value
        out["%s/%s" % (dev, port)] = values
    return out


def pcie_links(host: Host, fabric: Dict[str, Any], data: List[str]) -> Dict[str, Dict[str, Optional[str]]]:
    """The PCIe link of each RDMA device and data netdev that sits on PCI (a veth or rxe has none)."""
    out = {}
    paths = [("%s/%s/device" % (_fabric.IB, d), d) for d in sorted(fabric.get("devices") or {})]
    paths += [("/sys/class/net/%s/device" % n, n) for n in data]
    seen = set()
    for path, name in paths:
        if not host.exists(path + "/max_link_width"):
            continue
        target = host.readlink(path) or path
        if target in seen:
            continue
        seen.add(target)
        link = dict((k, (host.read("%s/%s" % (path, k)) or "").strip() or None) for k in PCIE)
        link["path"] = path
        out[name] = link
    return out


def gpu_count(host: Host) -> int:
    return len(list(host.listdir("/proc/driver/nvidia/gpus")))


def read(host: Host, opts: Dict[str, Any], manifest: Optional[Dict[str, Any]] = None,
         clock: Callable[[], float] = time.monotonic) -> Dict[str, Any]:
    """The node's facts for :func:`judge`, stage by stage while the budget lasts."""
    started = clock()
    deadline = started + float(opts["budget"])
    facts: Dict[str, Any] = {"skipped": [], "failed": {}, "stages": {}, "manifest": manifest}

    def stage(name: str, step: Callable[[], None]) -> None:
        t0 = clock()
        if t0 >= deadline:
            facts["skipped"].append(name)
            return
        try:
            step()
        except EXPECTED as e:
            facts["failed"][name] = str(e)
        facts["stages"][name] = round(clock() - t0, 4)

    def fabric() -> None:
        wanted = [n for n in opts["interfaces"] if host.exists("/sys/class/net/" + n)]
        facts["fabric"] = _fabric.gather(host, wanted, opts["tools"], bool(opts.get("ethtool")))
        data = [n for n in _findings_node.data_interfaces(facts["fabric"], opts["interfaces"], opts["fallback_interfaces"])
                if host.exists("/sys/class/net/" + n)]
        missing = [n for n in _findings_node.data_interfaces(facts["fabric"], opts["interfaces"], opts["fallback_interfaces"])
                   if n not in data]
        if missing:
            facts["failed"]["interfaces"] = "no such data interface: %s" % ", ".join(missing)
        extra = [n for n in data if n not in facts["fabric"]["netdevs"]]
        if extra:
            facts["fabric"]["netdevs"].update((n, _fabric.netdev(host, n, {}, False)) for n in extra)
        facts["data_interfaces"] = data
        facts["carrier"] = dict((n, _int(host.read("/sys/class/net/%s/carrier_changes" % n))) for n in data)
        facts["port_counters"] = port_counters(host, facts["fabric"], data)
        facts["modules"] = facts["fabric"].get("modules", []) + (["nvidia_peermem"] if host.isdir("/sys/module/nvidia_peermem") else [])
        facts["kernel"] = (host.read("/proc/sys/kernel/osrelease") or "").strip() or None
        facts["rdma_core"] = _findings_node.rdma_core_version(host)
        gid = _findings_node.parse_conf_value(host.read(opts["nccl_conf"]) or "", "NCCL_IB_GID_INDEX")
        facts["gid_index"] = int(gid) if gid is not None and gid.isdigit() else None

    def drift() -> None:
        try:
            facts["drift"] = _status.read(host, opts["journal_dir"], None)
        except (HostError, JournalError) as e:
            facts["drift"] = {"failed": True, "msg": str(e)}

    def limits() -> None:
        files = [{"path": _findings_node.LIMITS, "text": host.read(_findings_node.LIMITS) or ""}]
        for name in sorted(host.listdir(_findings_node.LIMITS_D)):
            if name.endswith(".conf"):
                path = "%s/%s" % (_findings_node.LIMITS_D, name)
                files.append({"path": path, "text": host.read(path) or ""})
        facts["memlock"] = _findings_node.parse_limits(files, opts["memlock_group"])
        facts["sysctl"] = dict((k, _sysctl.read_value(host, k)) for k in NEIGH_KEYS)

    def hardware() -> None:
        facts["pcie"] = pcie_links(host, facts.get("fabric") or {}, facts.get("data_interfaces") or [])
        facts["gpus"] = gpu_count(host)

    stage("fabric", fabric)
    if opts.get("drift", True):
        stage("drift", drift)
    stage("limits", limits)
    stage("hardware", hardware)
    facts["elapsed"] = round(clock() - started, 4)
    if "fabric" in facts:
        facts["counters"] = state_of(facts, time.time())
    return facts


def run(host: Host, opts: Dict[str, Any], manifest: Optional[Dict[str, Any]], before: Optional[Dict[str, Any]],
        clock: Callable[[], float] = time.monotonic) -> Dict[str, Any]:
    """One check: {facts, findings, verdict, state} (``state`` is what to keep for the next run)."""
    full = dict(DEFAULTS)
    full.update(opts)
    facts = read(host, full, manifest, clock)
    found = judge(facts, before, full)
    return {"facts": facts, "findings": found, "verdict": verdict(found), "state": facts.get("counters")}
