# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ``irq`` domain: NUMA-aware IRQ affinity of NIC queue interrupts.

Keys are ``irq:NAME`` (the name in /proc/interrupts, e.g. ``virtio2-input.0``,
``mlx5_comp3@pci:0000:3b:00.0``), never the IRQ number: numbers change across boots and driver
reloads, names do not.  Values are kernel cpulists (``0-3,8``).

This file's text is also the first part of the boot applier installed on the node (``_applier.py``'s
follows it: ``_module.applier_source``), so it stays standard-library only and imports nothing else of
the collection.  Reads and writes go through a host with ``read``, ``listdir``, ``exists`` and
``write_proc`` — ``_host.Host`` at tune time, ``_applier.BootHost`` at boot.
"""
from __future__ import annotations

import fnmatch
import re
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional

INTERRUPTS = "/proc/interrupts"
ONLINE = "/sys/devices/system/cpu/online"
# The IRQ names the boot applier pinned at this boot, for irqbalance's policy script (an image baked with no
# NIC has none in its persistent ban list, so the boot adds them here; tmpfs: nothing to roll back).
RUN_BANNED = "/run/hpcnet-rdma/irqbalance-banned"
POLICIES = ("spread-local", "single", "explicit", "hint")
# How drivers name their MSI-X vectors in /proc/interrupts: the IRQ columns of the driver table
# (_drivers.DRIVERS reads them from here; they live in this file because the boot applier runs
# alone on the node).  Per driver: (queue patterns, non-queue patterns).  A queue pattern captures
# the queue index as group "q"; "{if}" stands for the interface name.  Non-queue patterns are tried
# first (i40e's "...:fdir-TxRx-0" is a flow-director sideband vector, not a data queue).  Each entry
# is proven by a capture under tests/unit/fixtures/real/interrupts/ (docs/hardware.md lists them).
IRQ_NAMING = {
    # mlx5_comp3@pci:0000:3b:00.0; mlx5_async0@..., older mlx5_{pages,cmd,async}_eq@...
    "mlx5_core": ([r"^mlx5_comp(?P<q>\d+)(?:@|$)"], [r"^mlx5_(?:async|pages|cmd|page_fault|fw)"]),
    # MLNX_OFED 2.x mlx4_en: eth6-0 per ring; upstream: mlx4-comp-N@pci:... shared EQs; mlx4-async@pci:...
    "mlx4_en": ([r"^{if}-(?P<q>\d+)$", r"^mlx4-comp-(?P<q>\d+)@"], [r"^mlx4-async@"]),
    # ice-ens2f1-TxRx-0; the out-of-tree ice (1.16) gives one vector two queues: ice-ens2f1-TxRx-0-1 (index: the first);
    # ice-0000:65:00.0:ctrl-TxRx-0 is the control VSI's vector (flow director), not a data queue
    "ice": ([r"^ice-{if}-TxRx-(?P<q>\d+)(?:-\d+)?$"], [r":misc$", r":ctrl-TxRx-\d+$"]),
    "i40e": ([r"^i40e-{if}-TxRx-(?P<q>\d+)$"], [r":misc$", r":fdir-TxRx-\d+$"]),
    "ixgbe": ([r"^{if}-TxRx-(?P<q>\d+)$"], [r"^{if}$"]),
    "igb": ([r"^{if}-(?:TxRx|rx|tx)-(?P<q>\d+)$"], [r"^{if}$"]),
    "e1000e": ([r"^{if}-(?:rx|tx)-(?P<q>\d+)$"], [r"^{if}$"]),
    "bnxt_en": ([r"^{if}-(?:TxRx|rx|tx)-(?P<q>\d+)$"], []),
    "bnx2": ([r"^{if}-(?P<q>\d+)$"], []),
    "bnx2x": ([r"^{if}-fp-(?P<q>\d+)$"], [r"^{if}$"]),
    "tg3": ([r"^{if}-(?:txrx|tx|rx)-(?P<q>\d+)$"], [r"^{if}$"]),
    # ens5-Tx-Rx-0 per queue pair; ena-mgmnt@pci:0000:00:05.0 (admin/AENQ)
    "ena": ([r"^{if}-Tx-Rx-(?P<q>\d+)$"], [r"^ena-mgmnt@"]),
    # gve-ntfy-blk0@pci:... since 6.3; eth0-ntfy-block.0 before; gve-mgmnt@pci:...
    "gve": ([r"^gve-ntfy-blk(?P<q>\d+)@", r"-ntfy-block\.(?P<q>\d+)$"], [r"^gve-mgmnt@"]),
    "virtio_net": ([r"^virtio\d+-(?:input|output)\.(?P<q>\d+)$"], [r"^virtio\d+-(?:config|control)$"]),
}
# Any other driver: the union of the common shapes.
GENERIC_IRQ_NAMING = (
    [r"(?:^|[-_])comp(?P<q>\d+)(?:@|$)", r"-TxRx-(?P<q>\d+)(?:-\d+)?$", r"-Tx-Rx-(?P<q>\d+)$",
     r"-(?:rx|tx|txrx|rxtx|fp)-(?P<q>\d+)$", r"-(?:input|output)\.(?P<q>\d+)$", r"ntfy-blk(?P<q>\d+)@",
     r"-ntfy-block\.(?P<q>\d+)$", r"^mlx4-comp-(?P<q>\d+)@", r"^{if}-(?P<q>\d+)$"],
    [r"[:-]misc$", r":fdir-", r":ctrl-", r":mbx$", r"^mlx5_(?:async|pages|cmd|page_fault|fw)", r"-mgmnt@", r"-async@",
     r"^virtio\d+-(?:config|control)$", r"^{if}$"],
)
_COMPILED = {}  # type: Dict[Any, Any]
_DIGITS = re.compile(r"^[0-9]+$")
_CPU = re.compile(r"^CPU\d+$")
_INDEX = "irq_numbers"   # irq_number's index in host.tool_facts
# The metrics collector (roles/rdma_metrics/files/hpcnet-rdma-metrics.py, which runs alone on the node) keeps a copy
# of IRQ_NAMING and GENERIC_IRQ_NAMING; tests/unit/roles/rdma_metrics/test_collector.py fails when they differ.


# ---------------------------------------------------------------------- cpulists
def parse_cpulist(text: str, field: str = "cpulist") -> List[int]:
    """Kernel cpulist syntax (``0-3,8,10-11``, also ``0-15:2`` strides) → sorted CPU numbers."""
    cpus = set()
    text = str(text).strip()
    if not text:
        return []
    for part in text.split(","):
        m = re.match(r"^(\d+)(?:-(\d+)(?::(\d+))?)?$", part.strip())
        if not m:
            raise ValueError("%s: %r is not a cpulist (allowed: CPU numbers and ranges like 0-3,8,10-11)"
                             % (field, text))
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        step = int(m.group(3)) if m.group(3) else 1
        if hi < lo or step < 1:
            raise ValueError("%s: range %r in %r is empty" % (field, part, text))
        cpus.update(range(lo, hi + 1, step))
    return sorted(cpus)


def format_cpulist(cpus: List[int]) -> str:
    out = []
    cpus = sorted(set(cpus))
    i = 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else "%d-%d" % (cpus[i], cpus[j]))
        i = j + 1
    return ",".join(out)


def mask_to_cpus(mask: str) -> List[int]:
    """A hex CPU mask as in /proc/irq/N/affinity_hint (``00000000,0000000f``) → CPU numbers."""
    value = int(mask.strip().replace(",", "") or "0", 16)
    return [i for i in range(value.bit_length()) if value >> i & 1]


# ---------------------------------------------------------------------- parsing
def _parse_error(msg: str) -> Exception:
    """The collection's ParseError at tune time; at boot this file runs alone (ValueError, its base)."""
    try:
        from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import ParseError
    except ImportError:
        return ValueError(msg)
    return ParseError(msg)


def parse_interrupts(text: str) -> Dict[int, Dict[str, Any]]:
    """/proc/interrupts → {irq: {"name", "counts": [per CPU]}} for numbered IRQs only.

    The name is the last field (chip and hwirq columns of newer kernels come before it).  Lines
    that are not numbered IRQs (NMI, LOC, an elision such as "[...]") are skipped.  ParseError
    (a ValueError) naming the line when the text is no /proc/interrupts: no CPU header, or a
    numbered line with no per-CPU count."""
    if not isinstance(text, str):
        raise _parse_error("/proc/interrupts: expected text, got %s" % type(text).__name__)
    lines = text.splitlines()
    header = lines[0].split() if lines else []
    if not header or not all(_CPU.match(h) for h in header):
        raise _parse_error("/proc/interrupts: no CPU header line (got %r)" % (lines[0][:80] if lines else ""))
    ncpu = len(header)
    out = {}  # type: Dict[int, Dict[str, Any]]
    for line in lines[1:]:
        head, _sep, rest = line.partition(":")
        if not _DIGITS.match(head.strip()):
            continue
        fields = rest.split()
        counts = []  # type: List[int]
        for x in fields[:ncpu]:
            if not _DIGITS.match(x):
                break
            counts.append(int(x))
        if not counts:
            raise _parse_error("/proc/interrupts: IRQ line without per-CPU counts: %r" % line[:120])
        name = fields[-1] if len(fields) > len(counts) else ""
        out[int(head)] = {"name": name, "counts": counts}
    return out


def driver_profile(driver: Optional[str]) -> str:
    """The IRQ_NAMING entry that reads this driver's vectors: its own name, or "generic"."""
    return driver if driver in IRQ_NAMING else "generic"


def _patterns(which: int, driver: Optional[str], ifname: Optional[str]) -> List[Any]:
    key = (which, driver_profile(driver), ifname)
    if key not in _COMPILED:
        raw = (IRQ_NAMING[driver][which] if driver in IRQ_NAMING else []) + GENERIC_IRQ_NAMING[which]
        # a pattern naming the interface applies only when the interface is known
        _COMPILED[key] = [re.compile(r.replace("{if}", re.escape(ifname or ""))) for r in raw if ifname or "{if}" not in r]
    return _COMPILED[key]


def irq_role(name: str, driver: Optional[str] = None, ifname: Optional[str] = None) -> Any:
    """("queue", index), ("other", None) for a known non-queue vector (async, misc, mgmnt, config,
    flow director, link), or (None, None) for a name no rule knows.  ``driver`` picks the driver's
    own patterns first (IRQ_NAMING); the generic ones always apply after them."""
    for rx in _patterns(1, driver, ifname):
        if rx.search(name):
            return "other", None
    for rx in _patterns(0, driver, ifname):
        m = rx.search(name)
        if m:
            return "queue", int(m.group("q"))
    return None, None


def queue_index(name: str, driver: Optional[str] = None, ifname: Optional[str] = None) -> int:
    role, index = irq_role(name, driver, ifname)
    if role == "queue":
        return index
    m = re.search(r"(\d+)(?:@.*)?$", name.split("@")[0])
    return int(m.group(1)) if m else 0


def is_queue_irq(name: str, driver: Optional[str] = None, ifname: Optional[str] = None) -> bool:
    return irq_role(name, driver, ifname)[0] == "queue"


# ---------------------------------------------------------------------- reading the node
def _pci_dir(host: Any, ifname: str) -> Optional[str]:
    """The sysfs directory holding msi_irqs for the interface (virtio: the parent PCI device)."""
    base = "/sys/class/net/%s/device" % ifname
    for d in (base, base + "/.."):
        if host.exists(d + "/msi_irqs"):
            return d
    return None


def _read_int(host: Any, path: str, default: int) -> int:
    text = host.read(path)
    try:
        return int(text.strip()) if text is not None else default
    except ValueError:
        return default


def online_cpus(host: Any) -> List[int]:
    return parse_cpulist(host.read(ONLINE) or "0", "online CPUs")


def nic_irqs(host: Any, ifname: str, interrupts: Dict[int, Dict[str, Any]]) -> Dict[str, Any]:
    """The interface's MSI/MSI-X queue IRQs, NUMA node and local CPUs."""
    if not host.exists("/sys/class/net/%s" % ifname):
        raise ValueError("interfaces: unknown interface %r" % ifname)
    pci = _pci_dir(host, ifname)
    if pci is None:
        raise ValueError("interfaces: %s has no MSI/MSI-X interrupts (no msi_irqs in sysfs: a virtual "
                         "device such as veth or a legacy-INTx NIC); IRQ affinity needs per-queue vectors"
                         % ifname)
    driver = nic_driver(host, ifname)
    irqs = []
    other = []
    for entry in host.listdir(pci + "/msi_irqs"):
        if entry.isdigit() and int(entry) in interrupts:
            name = interrupts[int(entry)]["name"]
            role, index = irq_role(name, driver, ifname)
            if role == "queue":
                irqs.append({"irq": int(entry), "name": name, "queue": index})
            else:
                other.append(name)
    irqs.sort(key=lambda i: (i["queue"], i["name"]))
    numa = _read_int(host, pci + "/numa_node", -1)
    local = host.read(pci + "/local_cpulist")
    return {"interface": ifname, "irqs": irqs, "numa_node": numa,
            "local_cpus": parse_cpulist(local, "local_cpulist") if local else online_cpus(host),
            "driver": driver, "driver_profile": driver_profile(driver), "other_irqs": sorted(other)}


def nic_driver(host: Any, ifname: str) -> Optional[str]:
    """The kernel driver bound to the interface's device (basename of device/driver), None when unknown."""
    readlink = getattr(host, "readlink", None)
    if readlink is None:
        return None
    try:
        target = readlink("/sys/class/net/%s/device/driver" % ifname)
    except Exception:   # the Host wraps OSError; no driver link means a virtual device
        return None
    return target.rstrip("/").rsplit("/", 1)[-1] if target else None


def irq_number(host: Any, name: str) -> int:
    """The number of the IRQ named ``name`` now (the first such line of /proc/interrupts).

    /proc/interrupts is parsed once per call into a name -> number index (kept in the host's
    ``tool_facts``, which lives as long as the call), not once per IRQ: a node with 512 queue IRQs
    and 256 CPUs made the tuning call read and parse that file ~1,500 times.  An indexed number is
    used only while /proc/irq/N/NAME - the directory the kernel makes for each named handler of IRQ
    N - says IRQ N still carries that name; otherwise (numbers changed by a driver reload or an
    ``ethtool -L``, a handler without that directory) the file is read and indexed again."""
    facts = getattr(host, "tool_facts", None)
    index = facts.get(_INDEX) if facts is not None else None
    if index is not None and name in index and name not in ("", ".", "..") and "/" not in name \
            and host.exists("/proc/irq/%d/%s" % (index[name], name)):
        return index[name]
    index = {}
    for irq, info in parse_interrupts(host.read(INTERRUPTS) or "").items():
        index.setdefault(info["name"], irq)
    if facts is not None:
        facts[_INDEX] = index
    if name in index:
        return index[name]
    raise LookupError("IRQ %s is not in /proc/interrupts (driver not loaded or device gone)" % name)


# ---------------------------------------------------------------------- plan (pure)
def assign(policy: Dict[str, Any], nic: Dict[str, Any], online: List[int],
           hints: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """IRQ name → cpulist for one interface under one policy; ValueError on bad input."""
    name = nic["interface"]
    irqs = nic["irqs"]
    if not irqs:
        raise ValueError("interfaces: %s has MSI-X vectors but none is a queue interrupt" % name)
    kind = policy.get("policy") or "spread-local"
    if kind not in POLICIES:
        raise ValueError("policy: %r is not one of %s" % (kind, ", ".join(POLICIES)))
    reserved = set(parse_cpulist(policy.get("reserved_cpus") or "", "reserved_cpus"))
    offline = sorted(reserved - set(online))
    if offline:
        raise ValueError("reserved_cpus: CPU %s is not online (online: %s)"
                         % (format_cpulist(offline), format_cpulist(online)))
    if kind == "spread-local":
        cpus = [c for c in nic["local_cpus"] if c in online and c not in reserved]
        if not cpus:
            raise ValueError("reserved_cpus: reserving %s leaves no CPU local to %s (NUMA node %d: %s)"
                             % (format_cpulist(sorted(reserved)), name, nic["numa_node"],
                                format_cpulist(nic["local_cpus"])))
        return dict((irq["name"], str(cpus[i % len(cpus)])) for i, irq in enumerate(irqs))
    if kind == "single":
        if policy.get("cpu") is not None:
            cpu = int(policy["cpu"])
            if cpu not in online:
                raise ValueError("cpu: CPU %d is not online (online: %s)" % (cpu, format_cpulist(online)))
        else:
            local = [c for c in nic["local_cpus"] if c in online and c not in reserved]
            if not local:
                raise ValueError("cpu: no online, unreserved CPU is local to %s" % name)
            cpu = local[0]
        return dict((irq["name"], str(cpu)) for irq in irqs)
    if kind == "explicit":
        mapping = policy.get("explicit") or {}
        if not mapping:
            raise ValueError("explicit: give IRQ-name patterns and cpulists, e.g. {'*-input.*': '0-1'}")
        out: Dict[str, str] = {}
        for pattern, cpulist in mapping.items():
            cpus = parse_cpulist(cpulist, "explicit[%s]" % pattern)
            bad = [c for c in cpus if c not in online]
            if bad or not cpus:
                raise ValueError("explicit[%s]: cpulist %r has CPUs that are not online (%s); online: %s"
                                 % (pattern, cpulist, format_cpulist(bad) or "none given", format_cpulist(online)))
            hits = [irq["name"] for irq in irqs if fnmatch.fnmatchcase(irq["name"], pattern)]
            if not hits:
                raise ValueError("explicit: pattern %r matches no queue IRQ of %s (its IRQs: %s)"
                                 % (pattern, name, ", ".join(i["name"] for i in irqs)))
            for h in hits:
                out.setdefault(h, format_cpulist(cpus))
        return out
    # hint: the driver's affinity_hint
    out = {}
    for irq in irqs:
        cpus = [c for c in mask_to_cpus((hints or {}).get(irq["name"], "0")) if c in online]
        if not cpus:
            raise ValueError("policy: hint: the driver gives no affinity_hint for %s of %s; use spread-local"
                             % (irq["name"], name))
        out[irq["name"]] = format_cpulist(cpus)
    return out


# ---------------------------------------------------------------------- domain interface
def read_value(host: Any, name: str) -> Optional[str]:
    try:
        irq = irq_number(host, name)
    except LookupError as e:
        raise _host_error(str(e))
    text = host.read("/proc/irq/%d/smp_affinity_list" % irq)
    return None if text is None else format_cpulist(parse_cpulist(text))


def effective(host: Any, name: str) -> Optional[str]:
    text = host.read("/proc/irq/%d/effective_affinity_list" % irq_number(host, name))
    return None if text is None else text.strip()


def write_value(host: Any, name: str, value: str) -> None:
    try:
        irq = irq_number(host, name)
    except LookupError as e:
        raise _host_error(str(e))
    try:
        host.write_proc("/proc/irq/%d/smp_affinity_list" % irq, value)
    except Exception as e:  # the Host wraps OSError; EIO means a kernel-managed IRQ
        if "Input/output error" in str(e) or "Permission denied" in str(e):
            raise _refused("kernel refused affinity %s for %s (IRQ %d): %s" % (value, name, irq, e))
        raise


def same(actual: Any, wanted: Any) -> bool:
    if actual is None or wanted is None:
        return actual is wanted
    return parse_cpulist(actual) == parse_cpulist(wanted)


# the domain contract (_domain.CONTRACT): this file's read_value, write_value and same
DOMAINS = {"irq": sys.modules[__name__]}


def _host_error(msg: str) -> Exception:   # imported lazily: at boot this file runs alone, without the collection
    try:
        from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
    except ImportError:
        return RuntimeError(msg)
    return HostError(msg)


def _refused(msg: str) -> Exception:
    """The kernel refused the new affinity (managed IRQs answer EIO); nothing changed: ``_domain.Refused`` at tune
    time (a named result); at boot this file runs alone and the applier reports it like any other error."""
    try:
        from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._domain import Refused
    except ImportError:
        return RuntimeError(msg)
    return Refused(msg)
