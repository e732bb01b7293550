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

from ansible_collections.hpcnet.rdma.plugins.module_utils.facts import _fabric
from ansible_collections.hpcnet.rdma.plugins.module_utils.facts import _findings as _findings_node
from ansible_collections.hpcnet.rdma.plugins.module_utils.health._judges import NEIGH_KEYS, data_ports, judge, verdict
from ansible_collections.hpcnet.rdma.plugins.module_utils.tuning import _status
from ansible_collections.hpcnet.rdma.plugins.module_utils.sysctl import _domain as _sysctl
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host, run_all
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._journal_file import DEFAULT_DIR
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._journal_schema import JournalError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import lazy_re, ParseError

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Callable, Dict, List, Optional

PCIE = ("current_link_speed", "max_link_speed", "current_link_width", "max_link_width")
# IB port counters (sysfs counters/ and hw_counters/) that mean trouble when they grow
_PORT_TROUBLE = lazy_re(r"(err|discard|downed|recovery|overrun|out_of_sequence|seq_err|out_of_buffer|timeout)",
                        re.IGNORECASE)
EXPECTED = (HostError, JournalError, ParseError, ValueError, OSError)
_BDF = lazy_re(r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")
# the apps' GID index settings: (option naming the file, key) - the files fabric_app_config writes
GID_KEYS = tuple((option, dict(keys)["gid_index"]) for _app, option, keys in _findings_node.APP_KEYS)

# The fabric tools whose facts the check judges: ibv_devinfo's active MTU and the GID indexes it lists (sysfs
# has neither).  rdma (link names, device caps), ibstat and nvidia-smi add facts fabric_info shows and the
# check judges none of (the firmware and node type are sysfs's, which the kernel fills from the same driver
# call as the RDMA netlink): the fabric stage does not run them - 0.05-0.1 s each of its time on a lab VM
# under TCG (docs/health.md).  The drift stage still runs `rdma link` where soft-RoCE links are journaled.
JUDGED_TOOLS = ("ibv_devinfo",)

DEFAULTS: Dict[str, Any] = {
    "interfaces": [], "fallback_interfaces": [], "tools": ["ibv_devinfo", "rdma"], "ethtool": False,
    "journal_dir": DEFAULT_DIR, "profile_file": _status.PROFILE_FILE, "memlock_group": "rdma", "memlock_kib": -1,
    "fleet_size": 0, "flap_max": 0, "nccl_conf": "/etc/nccl.conf", "ucx_conf": "/etc/ucx/ucx.conf", "budget": 2.0, "drift": True,
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
        link.update(pci_place(host, target))
        out[name] = link
    return out


def pci_place(host: Host, target: str) -> Dict[str, Any]:
    """The device's PCI address, the bridges above it (root port first, from its /sys/devices path) and its
    IOMMU group (number, type - identity, DMA, DMA-FQ, ... - and members); empty where sysfs has none."""
    bdf = target.rstrip("/").rsplit("/", 1)[-1]
    if not _BDF.match(bdf):
        return {}
    chain = [c for c in (host.readlink("/sys/bus/pci/devices/" + bdf) or "").split("/") if _BDF.match(c)]
    out: Dict[str, Any] = {"bdf": bdf, "upstream": chain[:-1] if chain and chain[-1] == bdf else []}
    group = host.readlink("/sys/bus/pci/devices/%s/iommu_group" % bdf)
    if group:
        number = group.rstrip("/").rsplit("/", 1)[-1]
        base = "/sys/kernel/iommu_groups/" + number
        out["iommu"] = {"group": number, "type": (host.read(base + "/type") or "").strip() or None,
                        "devices": sorted(host.listdir(base + "/devices"))}
    return out


def acs_of(host: Host, pcie: Dict[str, Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """``lspci -vvv -s`` of every bridge above the NICs (ACS is in config space, not in sysfs): bridge ->
    the parsed device, or {"unreadable": why}."""
    from ansible_collections.hpcnet.rdma.plugins.module_utils.node._lspci import LSPCI   # here: only where GPUs are
    out: Dict[str, Dict[str, Any]] = {}
    for bdf in sorted(set(b for link in pcie.values() for b in link.get("upstream") or [])):
        try:
            out[bdf] = LSPCI.call(host, "device", bdf=bdf)
        except (HostError, ParseError) as e:
            out[bdf] = {"unreadable": str(e)}
    return out


def gid_settings(host: Host, opts: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The GID index each app is told to use ({key, file, index}), and the RoCE version they need: the
    recorded profile's qos.roce_mode (as roce_qos sets it), else v2."""
    out = []
    for option, key in GID_KEYS:
        value = _findings_node.parse_conf_value(host.read(opts[option]) or "", key)
        if value is not None and value.isdigit():
            out.append({"key": key, "file": opts[option], "index": int(value)})
    return out


def roce_mode(host: Host, opts: Dict[str, Any]) -> Dict[str, str]:
    try:
        record = host.read_json(opts["profile_file"])
    except HostError:
        record = None
    mode = ((record or {}).get("qos") or {}).get("roce_mode") if isinstance(record, dict) else None
    if mode in ("v1", "v2"):
        return {"mode": mode, "source": "the profile's qos.roce_mode (%s)" % opts["profile_file"]}
    return {"mode": "v2", "source": "the default"}


def gpu_count(host: Host) -> int:
    return len(list(host.listdir("/proc/driver/nvidia/gpus")))


class BudgetSpent(BaseException):
    """Raised by the check's command runner once the time budget is spent (a command not started, or cut
    off): it ends the stage that ran the command, and that stage is named as not read (budget.exceeded)
    with whatever it had read dropped - a node half read is never judged: a tool that was not run is not
    a package absent, nor a tuned value drifted (seen on a lab VM: dpkg-query and ethtool cut off by the
    budget became five drift.key drains).  A BaseException, so the readers' ``except Exception`` around
    one unreadable value lets it through."""


def read(host: Host, opts: Dict[str, Any], manifest: Optional[Dict[str, Any]] = None,
         clock: Callable[[], float] = time.monotonic) -> Dict[str, Any]:
    """The node's facts for :func:`judge`, stage by stage while the budget lasts.

    The drift stage (the journal against the node: ``systemctl show``, dpkg's status file, ``ethtool``) runs in
    a thread (``run_all``) beside the fabric, limits and hardware stages (``ibv_devinfo``, ``rdma``, sysfs):
    it needs nothing they read, and each side's tool runs are waits the other side's Python fills - on a
    tuned lab VM the two sides were 0.36 s and 0.58 s one after the other (docs/health.md).  Each stage
    fills its own part of the facts, merged in the stages' fixed order, so a stage cut off by the budget
    drops only what it read."""
    started = clock()
    deadline = started + float(opts["budget"])
    facts: Dict[str, Any] = {"skipped": [], "failed": {}, "stages": {}, "manifest": manifest}
    done: Dict[str, Dict[str, Any]] = {}

    def stage(name: str, step: Callable[[Dict[str, Any]], None], t0: Optional[float] = None) -> None:
        t0 = clock() if t0 is None else t0
        if t0 >= deadline:
            done[name] = {"skipped": True}
            return
        part: Dict[str, Any] = {"failed": {}}
        try:
            step(part)
        except EXPECTED as e:
            part["failed"][name] = str(e)
            done[name] = {"part": part}
            return
        except BudgetSpent:
            done[name] = {"skipped": True}
            return
        done[name] = {"part": part, "seconds": round(clock() - t0, 4)}

    def merge(name: str) -> None:
        result = done.get(name)
        if result is None:
            return
        if result.get("skipped"):
            facts["skipped"].append(name)
            return
        part = result["part"]
        facts["failed"].update(part.pop("failed"))
        facts.update(part)
        if "seconds" in result:
            facts["stages"][name] = result["seconds"]

    def fabric(part: Dict[str, Any]) -> None:
        wanted = [n for n in opts["interfaces"] if host.exists("/sys/class/net/" + n)]
        part["fabric"] = _fabric.gather(host, wanted, [t for t in opts["tools"] if t in JUDGED_TOOLS], bool(opts.get("ethtool")),
                                        irqs=False)
        data = [n for n in _findings_node.data_interfaces(part["fabric"], opts["interfaces"], opts["fallback_interfaces"])
                if host.exists("/sys/class/net/" + n)]
        missing = [n for n in _findings_node.data_interfaces(part["fabric"], opts["interfaces"], opts["fallback_interfaces"])
                   if n not in data]
        if missing:
            part["failed"]["interfaces"] = "no such data interface: %s" % ", ".join(missing)
        extra = [n for n in data if n not in part["fabric"]["netdevs"]]
        if extra:
            part["fabric"]["netdevs"].update((n, _fabric.netdev(host, n, None, False)) for n in extra)
        part["data_interfaces"] = data
        part["carrier"] = dict((n, _int(host.read("/sys/class/net/%s/carrier_changes" % n))) for n in data)
        part["port_counters"] = port_counters(host, part["fabric"], data)
        part["modules"] = part["fabric"].get("modules", []) + (["nvidia_peermem"] if host.isdir("/sys/module/nvidia_peermem") else [])
        part["kernel"] = (host.read("/proc/sys/kernel/osrelease") or "").strip() or None
        part["rdma_core"] = _findings_node.rdma_core_version(host)
        part["gids"] = gid_settings(host, opts)
        part["roce_mode"] = roce_mode(host, opts)

    def drift(part: Dict[str, Any]) -> None:
        try:
            part["drift"] = _status.read(host, opts["journal_dir"], None)
        except (HostError, JournalError) as e:
            part["drift"] = {"failed": True, "msg": str(e)}

    def limits(part: Dict[str, Any]) -> None:
        files = [{"path": _findings_node.LIMITS, "text": host.read(_findings_node.LIMITS) or ""}]
        for name in sorted(host.listdir(_findings_node.LIMITS_D)):
            if name.endswith(".conf"):
                path = "%s/%s" % (_findings_node.LIMITS_D, name)
                files.append({"path": path, "text": host.read(path) or ""})
        part["memlock"] = _findings_node.parse_limits(files, opts["memlock_group"])
        part["sysctl"] = dict((k, _sysctl.read_value(host, k)) for k in NEIGH_KEYS)

    def hardware(part: Dict[str, Any]) -> None:
        part["pcie"] = pcie_links(host, facts.get("fabric") or {}, facts.get("data_interfaces") or [])
        part["gpus"] = gpu_count(host)
        if part["gpus"] and host.which("lspci"):      # ACS matters for GPUDirect (NIC <-> GPU peer to peer)
            part["acs"] = acs_of(host, part["pcie"])

    def in_turn() -> None:
        stage("fabric", fabric)
        merge("fabric")
        stage("limits", limits)
        stage("hardware", hardware)

    if opts.get("drift", True):
        t0 = clock()        # both sides start now, by this thread's clock
        run_all([in_turn, lambda: stage("drift", drift, t0)], True)
    else:
        in_turn()
    for name in ("drift", "limits", "hardware"):
        merge(name)
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
