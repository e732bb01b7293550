# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The node health check's judges (pure): facts in, findings out.

Each finding is ``{code, severity, evidence, fix}`` with a stable ``code`` (:data:`CODES`) and a
severity ``drain`` (Slurm should not run jobs here), ``warn`` or ``info``.  :func:`judge` runs them
all over what ``_check.read`` gathered; :func:`verdict` turns the findings into the NHC/Slurm
convention: exit 0 when nothing asks for a drain, else 1 and one line
``ERROR: hpcnet-rdma: <code> <summary>``.

Counters are judged against the previous run (``_check.state_of`` is what the program keeps under
/run): a link that flapped, an error counter that grew *since the last check*.
"""
from __future__ import annotations

import re

from ansible_collections.hpcnet.rdma.plugins.module_utils.facts import _findings as _findings_node
from ansible_collections.hpcnet.rdma.plugins.module_utils.health import _manifest
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._lspci import redirects

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional

SEVERITIES = ("drain", "warn", "info")
PREFIX = "hpcnet-rdma"
STATE_FILE = "/run/hpcnet-rdma/health-state.json"
MANIFEST_FILE = "/etc/hpcnet-rdma/manifest.json"
NEIGH_KEYS = tuple("net.ipv4.neigh.default.gc_thresh%d" % i for i in (1, 2, 3))
GID_TYPES = {"v1": "IB/RoCE v1", "v2": "RoCE v2"}   # sysfs gid_attrs/types/<index>

# code -> (severity, what it means, the fix: the variable or playbook that fixes it)
CODES: Dict[str, tuple] = {
    "drift.key": ("drain", "a value the collection set has changed since",
                  "re-run hpcnet.rdma.tune_rdma (or hpcnet.rdma.switch_profile) on this node; tuning_state status shows the key"),
    "drift.unreadable": ("warn", "the journal could not be read: drift cannot be told",
                         "check /var/lib/hpcnet-rdma (owned by root, not writable by others)"),
    "drift.interrupted": ("warn", "a tuning run was killed mid-way", "re-run hpcnet.rdma.tune_rdma on this node"),
    "link.down": ("drain", "a data interface is not up", "bring the data interface up; check cable and switch port"),
    "port.down": ("drain", "an RDMA port is not ACTIVE", "check the cable, the switch port and the subnet manager (IB)"),
    "port.mtu": ("drain", "the RDMA active MTU is above the data interface's MTU",
                 "rdma_interfaces[].mtu / the profile's nic.mtu (hpcnet.rdma.tune_rdma)"),
    "gid.missing": ("drain", "the GID index the apps are told to use (NCCL_IB_GID_INDEX, UCX_IB_GID_INDEX) is not in the data port's GID table",
                    "fabric_app_config_gid_index (hpcnet.rdma.fabric_app_config) or an address on the data interface (the GID follows it)"),
    "gid.version": ("drain", "the GID index the apps are told to use is not of the RoCE version the profile sets",
                    "fabric_app_config_gid_index: the index of a GID of the profile's qos.roce_mode (default v2) on the data port"),
    "link.flap": ("drain", "a link went down and up since the last check (carrier_changes, link_downed)",
                  "check cable, transceiver and switch port; the check resumes the node once the link is stable"),
    "counters.errors": ("warn", "error/drop counters grew since the last check",
                        "hpcnet.rdma.verify_rdma for the whole fabric; see docs/verify.md (netdev.errors)"),
    "counters.baseline": ("info", "first run: counters recorded, growth is judged from the next run", ""),
    "memlock.low": ("drain", "the RDMA group's memlock limit is below what RDMA needs",
                    "rdma_core_memlock_limit / rdma_core_memlock_group (hpcnet.rdma.rdma_core, rdma_stack: true)"),
    "neigh.gc_thresh": ("warn", "the neighbour table is too small for the fleet",
                        "the profile's sysctl net.ipv4.neigh.default.gc_thresh1/2/3 (hpcnet.rdma.tune_rdma)"),
    "pcie.width": ("drain", "the NIC's PCIe link is narrower than the device can do",
                   "reseat the card or move it to a full-width slot; check the BIOS lane split"),
    "pcie.speed": ("warn", "the NIC's PCIe link is slower than the device can do",
                   "check the slot's generation and the BIOS PCIe speed setting"),
    "iommu.translation": ("warn", "the IOMMU translates the NIC's DMA (its IOMMU group is of type DMA/DMA-FQ, not identity)",
                          "boot with iommu=pt (intel_iommu=on iommu=pt, or amd_iommu=on iommu=pt) unless VMs or VFs need translation"),
    "pcie.acs": ("warn", "ACS on a PCIe switch port above the NIC redirects peer-to-peer traffic to the root complex "
                 "(GPUDirect RDMA between NIC and GPU crawls or hangs)",
                 "disable ACS redirection on the switch ports (the BIOS's ACS setting, or setpci at boot as the GPU vendor's "
                 "GPUDirect guide shows)"),
    "gpu.peermem": ("drain", "GPUs and RDMA devices are present but nvidia_peermem is not loaded (no GPUDirect RDMA)",
                    "rdma_core_modules: [nvidia_peermem] (hpcnet.rdma.rdma_core)"),
    "manifest.differs": ("drain", "the node differs from the fleet manifest (the majority of its group)", ""),
    "manifest.missing": ("info", "no fleet manifest on the node", "run the role hpcnet.rdma.rdma_health"),
    "read.failed": ("warn", "a part of the node could not be read", ""),
    "metrics.unwritable": ("warn", "the findings could not be written to node_exporter's textfile directory",
                           "check rdma_health_metrics_dir (the textfile collector's directory; rdma_health_metrics: false turns it off)"),
    "budget.exceeded": ("warn", "the check ran out of its time budget; the parts named were not read",
                        "raise --budget (rdma_health_budget) or find the slow tool (--json shows each stage's time)"),
}


def finding(code: str, evidence: str, fix: Optional[str] = None, **extra: Any) -> Dict[str, Any]:
    severity, _meaning, default_fix = CODES[code]
    out = {"code": code, "severity": severity, "evidence": evidence, "fix": fix if fix is not None else default_fix}
    out.update(extra)
    return out


# ---------------------------------------------------------------------- judges (pure)
def judge_drift(drift: Optional[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """_status.read's result (or {failed, msg}, or None when the stage was skipped)."""
    if drift is None:
        return []
    if drift.get("failed"):
        return [finding("drift.unreadable", drift.get("msg") or "unknown error")]
    out = []
    for d in drift.get("drift") or []:
        if "error" in d:
            out.append(finding("drift.key", "%s cannot be read back: %s" % (d["key"], d["error"]), key=d["key"]))
        else:
            text = "%s is %s, the collection set %s" % (d["key"], _short(d.get("current")), _short(d.get("applied")))
            out.append(finding("drift.key", text, key=d["key"]))
    for g in drift.get("interrupted") or []:
        out.append(finding("drift.interrupted", "journal generation %s (%s, %s) never committed"
                           % (g.get("id"), g.get("module"), g.get("time"))))
    return out


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def data_ports(fabric: Dict[str, Any], data: List[str]):
    for dev, info in sorted((fabric.get("devices") or {}).items()):
        for port, p in sorted((info.get("ports") or {}).items()):
            if not data or set(p.get("netdevs") or []) & set(data):
                yield dev, port, p


def judge_links(fabric: Dict[str, Any], data: List[str], gids: Optional[List[Dict[str, Any]]] = None,
                roce: Optional[Dict[str, str]] = None) -> List[Dict[str, Any]]:
    """Data interfaces up; their RDMA ports ACTIVE, with an active MTU the netdev carries and the GID
    indexes the apps use (``gids``: {key, file, index}) GIDs of the RoCE version ``roce`` ({mode, source})."""
    out = []
    netdevs = fabric.get("netdevs") or {}
    for n in data:
        state = (netdevs.get(n) or {}).get("operstate")
        if state in ("down", "lowerlayerdown", "notpresent", "dormant"):
            out.append(finding("link.down", "%s operstate is %s (/sys/class/net/%s/operstate)" % (n, state, n), netdev=n))
    for dev, port, p in data_ports(fabric, data):
        if p.get("state") != "ACTIVE":
            out.append(finding("port.down", "%s port %s is %s (%s)" % (dev, port, p.get("state"), p.get("phys_state")),
                               device=dev))
        for nd in p.get("netdevs") or []:
            mtu = (netdevs.get(nd) or {}).get("mtu")
            if p.get("active_mtu") and mtu and mtu < p["active_mtu"]:
                out.append(finding("port.mtu", "%s port %s active MTU %d is above %s's MTU %d"
                                   % (dev, port, p["active_mtu"], nd, mtu), device=dev))
        if p.get("link_layer") == "Ethernet":
            out += judge_gids(dev, port, p, gids or [], roce or {"mode": "v2", "source": "the default"})
    return out


def judge_gids(dev: str, port: Any, p: Dict[str, Any], gids: List[Dict[str, Any]], roce: Dict[str, str]) -> List[Dict[str, Any]]:
    """Each app's GID index exists in the port's GID table (sysfs gids/) and is of the RoCE version wanted."""
    out = []
    want = GID_TYPES.get(roce.get("mode"), GID_TYPES["v2"])
    table = dict((g.get("index"), g) for g in p.get("gids") or [])
    for setting in gids:
        where = "%s in %s" % (setting["key"], setting["file"])
        gid = table.get(setting["index"])
        base = "/sys/class/infiniband/%s/ports/%s" % (dev, port)
        if gid is None:
            out.append(finding("gid.missing", "%s port %s has no GID at index %d (%s; %s/gids/ holds %s)" % (
                dev, port, setting["index"], where, base, ", ".join(str(i) for i in sorted(table)) or "none"), device=dev,
                key=setting["key"]))
        elif gid.get("type") != want:
            out.append(finding("gid.version", "%s port %s GID index %d is %s, the apps need %s (%s; %s by %s; %s/gid_attrs/types/%d)" % (
                dev, port, setting["index"], gid.get("type") or "of no type", want, where, roce.get("mode"), roce.get("source"),
                base, setting["index"]), device=dev, key=setting["key"]))
    return out


def _grew(before: Optional[Dict[str, Any]], now: Optional[Dict[str, Any]]) -> Dict[str, int]:
    return dict((k, v) for k, v in _findings_node.counter_delta(before, now).items() if v > 0)


def judge_counters(now: Dict[str, Any], before: Optional[Dict[str, Any]], flap_max: int = 0) -> List[Dict[str, Any]]:
    """``now``/``before``: ``_check.state_of`` of this run and of the previous one (None: first run)."""
    if not before:
        return [finding("counters.baseline", "no previous run's counters (%s)" % STATE_FILE)]
    out = []
    since = "since the last check %ds ago" % max(0, int(now.get("time", 0) - before.get("time", 0)))
    for n, cur in sorted((now.get("netdevs") or {}).items()):
        old = (before.get("netdevs") or {}).get(n) or {}
        flaps = _findings_node.counter_delta({"c": old.get("carrier_changes")}, {"c": cur.get("carrier_changes")}).get("c")
        if flaps is not None and flaps > flap_max:
            out.append(finding("link.flap", "%s carrier_changes grew by %d %s" % (n, flaps, since), netdev=n))
        grew = _grew(old.get("counters"), cur.get("counters"))
        if grew:
            out.append(finding("counters.errors", "%s: %s %s" % (n, ", ".join("%s +%d" % kv for kv in sorted(grew.items())), since),
                               netdev=n))
    for port, cur in sorted((now.get("ports") or {}).items()):
        grew = _grew(((before.get("ports") or {}).get(port)), cur)
        downed = grew.pop("link_downed", 0)
        if downed:
            out.append(finding("link.flap", "%s link_downed grew by %d %s" % (port, downed, since), port=port))
        if grew:
            out.append(finding("counters.errors", "%s: %s %s" % (port, ", ".join("%s +%d" % kv for kv in sorted(grew.items())), since),
                               port=port))
    return out


def judge_memlock(memlock: Optional[Dict[str, Any]], required_kib: Optional[int]) -> List[Dict[str, Any]]:
    """``parse_limits``'s result for the RDMA group; ``required_kib`` -1 = unlimited, None = not checked."""
    if not memlock or required_kib is None:
        return []
    out = []
    for kind in ("soft", "hard"):
        line = memlock.get(kind)
        have = line["kib"] if line else None
        short = have is None or (have != -1 and (required_kib == -1 or have < required_kib))
        if short:
            out.append(finding("memlock.low", "@%s gets %s memlock %s (%s), needs %s" % (
                memlock.get("group"), kind, line["value"] if line else "the default (8 MiB or less)",
                line["source"] if line else "no limits.conf line", "unlimited" if required_kib == -1 else "%d KiB" % required_kib)))
            break
    return out


def judge_neigh(values: Dict[str, Optional[str]], fleet_size: int) -> List[Dict[str, Any]]:
    """gc_thresh2 (soft limit) must hold one entry per peer and gc_thresh3 (hard limit) twice that:
    below them the kernel drops neighbours of a fabric that size and connections stall on ARP."""
    if fleet_size <= 0:
        return []
    out = []
    for key, need in ((NEIGH_KEYS[1], fleet_size), (NEIGH_KEYS[2], 2 * fleet_size)):
        value = values.get(key)
        if value is not None and value.strip().isdigit() and int(value) < need:
            out.append(finding("neigh.gc_thresh", "%s is %s, below %d for a fleet of %d nodes" % (key, value.strip(), need, fleet_size),
                               key=key))
    return out


def _gts(speed: Optional[str]) -> Optional[float]:
    m = re.match(r"^\s*([\d.]+)\s*GT/s", speed or "")
    return float(m.group(1)) if m else None


def judge_pcie(pcie: Dict[str, Dict[str, Optional[str]]]) -> List[Dict[str, Any]]:
    """Per PCI device (by RDMA device or netdev name): current_link_* below max_link_*."""
    out = []
    for name, link in sorted(pcie.items()):
        cw, mw = link.get("current_link_width"), link.get("max_link_width")
        if cw and mw and cw.isdigit() and mw.isdigit() and 0 < int(cw) < int(mw):
            out.append(finding("pcie.width", "%s PCIe link is x%s, the device can do x%s (%s)" % (name, cw, mw, link.get("path")),
                               device=name))
        cs, ms = _gts(link.get("current_link_speed")), _gts(link.get("max_link_speed"))
        if cs and ms and cs < ms:
            out.append(finding("pcie.speed", "%s PCIe link runs at %s, the device can do %s (%s)" % (
                name, link.get("current_link_speed"), link.get("max_link_speed"), link.get("path")), device=name))
    return out


def judge_iommu(pcie: Dict[str, Dict[str, Any]]) -> List[Dict[str, Any]]:
    """A NIC whose IOMMU group translates DMA (type DMA or DMA-FQ; identity is passthrough, no group is no IOMMU)."""
    out = []
    for name, link in sorted(pcie.items()):
        group = link.get("iommu") or {}
        if group.get("type") in ("DMA", "DMA-FQ"):
            out.append(finding("iommu.translation", "%s (%s) is in IOMMU group %s of type %s (/sys/kernel/iommu_groups/%s/type)" % (
                name, link.get("bdf"), group.get("group"), group["type"], group.get("group")), device=name))
    return out


def judge_acs(pcie: Dict[str, Dict[str, Any]], acs: Optional[Dict[str, Dict[str, Any]]], gpus: int) -> List[Dict[str, Any]]:
    """With GPUs: a switch port (not the root port: traffic between root ports goes through the root complex
    anyway) above a NIC whose ACS control redirects requests or completions.  Unreadable bridges are not judged."""
    if not gpus or not acs:
        return []
    out = []
    for name, link in sorted(pcie.items()):
        for bdf in link.get("upstream") or []:
            bridge = acs.get(bdf) or {}
            redirected = redirects(bridge.get("acs_ctl"))
            if redirected and bridge.get("port_type") not in (None, "Root Port"):
                out.append(finding("pcie.acs", "%s (%s) sits below %s, a PCIe %s whose ACSCtl has %s (lspci -vvv -s %s): "
                                   "peer-to-peer with the %d GPU(s) goes up to the root complex" % (
                                       name, link.get("bdf"), bdf, bridge["port_type"], " ".join(b + "+" for b in redirected),
                                       bdf, gpus), device=name, bridge=bdf))
    return out


def judge_gpu(gpus: int, rdma_devices: int, modules: List[str]) -> List[Dict[str, Any]]:
    if gpus and rdma_devices and "nvidia_peermem" not in modules:
        return [finding("gpu.peermem", "%d NVIDIA GPU(s) and %d RDMA device(s), /sys/module/nvidia_peermem absent" % (gpus, rdma_devices))]
    return []


def judge_manifest(attrs: Dict[str, Any], manifest: Optional[Dict[str, Any]]) -> List[Dict[str, Any]]:
    if manifest is None:
        return [finding("manifest.missing", "%s is absent" % MANIFEST_FILE)]
    return [finding("manifest.differs", "%s is %s, the fleet's majority (%s) has %s" % (
        d["what"], _manifest._key(d["value"]), d["held"], _manifest._key(d["majority"])), d["fix"], item=d["item"],
        majority=d["majority"]) for d in _manifest.differences(attrs, manifest)]


def judge_budget(skipped: List[str], elapsed: float, budget: float) -> List[Dict[str, Any]]:
    if not skipped:
        return []
    return [finding("budget.exceeded", "%.2fs of %gs used; not read: %s" % (elapsed, budget, ", ".join(skipped)))]


def judge_failures(failed: Dict[str, str]) -> List[Dict[str, Any]]:
    return [finding("read.failed", "%s: %s" % (stage, msg), stage=stage) for stage, msg in sorted(failed.items())]


def judge(facts: Dict[str, Any], before: Optional[Dict[str, Any]], opts: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Every finding of one run, the drain ones first (stable order: severity, then code)."""
    fabric = facts.get("fabric") or {}
    data = facts.get("data_interfaces") or []
    found: List[Dict[str, Any]] = []
    found += judge_failures(facts.get("failed") or {})
    found += judge_drift(facts.get("drift"))
    if fabric:
        found += judge_links(fabric, data, facts.get("gids"), facts.get("roce_mode"))
    if "counters" in facts:
        found += judge_counters(facts["counters"], before, int(opts.get("flap_max", 0)))
    memlock = opts.get("memlock_kib", -1)
    found += judge_memlock(facts.get("memlock"), None if memlock is None else int(memlock))
    found += judge_neigh(facts.get("sysctl") or {}, int(opts.get("fleet_size", 0)))
    found += judge_pcie(facts.get("pcie") or {})
    found += judge_iommu(facts.get("pcie") or {})
    found += judge_acs(facts.get("pcie") or {}, facts.get("acs"), facts.get("gpus") or 0)
    if fabric:
        found += judge_gpu(facts.get("gpus") or 0, len(fabric.get("devices") or {}), facts.get("modules") or [])
        found += judge_manifest(_manifest.attributes(facts), facts.get("manifest"))
    found += judge_budget(facts.get("skipped") or [], facts.get("elapsed") or 0.0, float(opts.get("budget", 2.0)))
    rank = dict((s, i) for i, s in enumerate(SEVERITIES))
    return sorted(found, key=lambda f: (rank[f["severity"]], f["code"]))


def verdict(findings: List[Dict[str, Any]]) -> Dict[str, Any]:
    """{rc, line, reason}: rc 1 and ``ERROR: hpcnet-rdma: <code> <summary>`` when a finding asks for a
    drain (the first; ``+N more`` when there are others), rc 0 and no line otherwise.  ``reason`` is
    what Slurm's node Reason gets: ``hpcnet-rdma:<code> <summary>`` (Slurm keeps it short)."""
    drains = [f for f in findings if f["severity"] == "drain"]
    if not drains:
        return {"rc": 0, "line": None, "reason": None}
    first = drains[0]
    more = " (+%d more)" % (len(drains) - 1) if len(drains) > 1 else ""
    summary = " ".join((first["evidence"] + more).split())
    return {"rc": 1, "line": "ERROR: %s: %s %s" % (PREFIX, first["code"], summary),
            "reason": ("%s:%s %s" % (PREFIX, first["code"], summary))[:200]}
