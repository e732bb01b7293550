# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The node's devices as a planner sees them, in a few short digests: what a journaled call's
targets were planned against.

A call's plan depends on its inputs, on the live values of the keys it manages, and on which
devices there are: the interfaces a glob, driver or subnet selects, the queue IRQs of an interface
(by name), the online CPUs a policy spreads them over, the RDMA devices QoS and the app config name,
the kernel release whose modules the stack loads, and the context that decides what the kernel
lets a call set (a container; /proc/sys mounted read-only or remounted writable).  The live values are compared key by key
(``node_tuning``'s ``sync``); this fingerprint covers the rest, so a NIC, an address, a queue
or a CPU that came or went since the targets were stored is never taken for "in sync".

Each section is a string (a digest, or the cpulist), so ``in_sync`` can name what changed.  A
section that cannot be read is ``unreadable: REASON`` - equal on two reads of the same node, and
never equal to a readable section.
"""
from __future__ import annotations

import json
import os

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _iproute
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Callable, Dict, List

# Read here, not through _irq: every engine imports this, and a module ships only its own domains.
INTERRUPTS = "/proc/interrupts"
ONLINE = "/sys/devices/system/cpu/online"
NET = "/sys/class/net"
RDMA = "/sys/class/infiniband"
SECTIONS = ("netdevs", "addresses", "irqs", "cpus", "rdma", "kernel", "context")


def _digest(value: Any) -> str:
    import hashlib  # here: loading OpenSSL is a tenth of the node health check's start on a slow node
    return "sha256:" + hashlib.sha256(json.dumps(value, sort_keys=True).encode("utf-8")).hexdigest()[:16]


def _base(host: Host, link: str) -> Any:
    target = host.readlink(link)
    return os.path.basename(target) if target else None


def _devtype(host: Host, ifname: str) -> Any:
    for line in (host.read("%s/%s/uevent" % (NET, ifname)) or "").splitlines():
        if line.startswith("DEVTYPE="):
            return line.split("=", 1)[1]
    return None


def netdevs(host: Host) -> Dict[str, Any]:
    """Per interface: its driver, device type, master and lower devices (sysfs)."""
    out = {}
    for name in host.listdir(NET):
        base = "%s/%s" % (NET, name)
        out[name] = {"driver": _base(host, base + "/device/driver"), "devtype": _devtype(host, name),
                     "master": _base(host, base + "/master"),
                     "lower": sorted(n for n in host.listdir(base) if n.startswith("lower_"))}
    return out


def interrupt_names(text: str) -> Dict[int, str]:
    """/proc/interrupts → {irq: name} for numbered IRQs (the name is the last field, after the
    per-CPU counts)."""
    lines = text.splitlines()
    ncpu = len(lines[0].split()) if lines else 0
    out = {}
    for line in lines[1:]:
        head, _sep, rest = line.partition(":")
        fields = rest.split()
        if head.strip().isdigit():
            out[int(head)] = fields[-1] if len(fields) > ncpu else ""
    return out


def irqs(host: Host) -> Dict[str, List[str]]:
    """Per interface with MSI/MSI-X vectors: the names of its IRQs (what irq_affinity keys on)."""
    names = interrupt_names(host.read(INTERRUPTS) or "")
    out = {}
    for name in host.listdir(NET):
        for d in ("%s/%s/device" % (NET, name), "%s/%s/device/.." % (NET, name)):
            if host.exists(d + "/msi_irqs"):
                out[name] = sorted(names.get(int(e), "?") for e in host.listdir(d + "/msi_irqs") if e.isdigit())
                break
    return out


def rdma(host: Host) -> Dict[str, Any]:
    """Per RDMA device: its ports and its netdevs - the ``parent`` of a software device (soft-RoCE,
    siw), else the device's ``device/net`` (an HCA).  Not the GID table: the kernel fills it a
    moment after a soft-RoCE link appears, so a call that created rxe0 would store a fingerprint
    the next run no longer sees."""
    out = {}
    for dev in host.listdir(RDMA):
        base = "%s/%s" % (RDMA, dev)
        parent = (host.read(base + "/parent") or "").strip()
        out[dev] = {"ports": host.listdir(base + "/ports"),
                    "netdevs": [parent] if parent else host.listdir(base + "/device/net")}
    return out


def context(host: Host) -> Dict[str, Any]:
    """Inside a container or not, and the mount options of /proc/sys (and /sys) as mounted now:
    what decides which keys a call may set (a key it could not set is in no target)."""
    mounts = {}
    for line in (host.read("/proc/self/mounts") or "").splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[1] in ("/proc/sys", "/sys", "/proc"):
            mounts[fields[1]] = fields[3].split(",")[0]
    return {"container": host.in_container(), "mounts": mounts}


def cpus(host: Host) -> str:
    return (host.read(ONLINE) or "").strip()


def kernel(host: Host) -> str:
    return (host.read("/proc/sys/kernel/osrelease") or "").strip()


def _section(read: Callable[[Host], Any], host: Host, digest: bool = True) -> str:
    try:
        value = read(host)
    except Exception as e:  # noqa: BLE001 - an unreadable section is a stable, named value
        return "unreadable: %s" % e
    return _digest(value) if digest else str(value)


def fingerprint(host: Host) -> Dict[str, str]:
    """``{section: digest}`` for :data:`SECTIONS` (cpus and kernel as they read)."""
    return {
        "netdevs": _section(netdevs, host),
        "addresses": _section(_iproute.addrs, host),
        "irqs": _section(irqs, host),
        "cpus": _section(cpus, host, digest=False),
        "rdma": _section(rdma, host),
        "kernel": _section(kernel, host, digest=False),
        "context": _section(context, host),
    }


def differences(stored: Dict[str, str], live: Dict[str, str]) -> List[str]:
    """The sections whose stored and live values differ (a section missing on one side differs)."""
    return [s for s in sorted(set(stored) | set(live)) if stored.get(s) != live.get(s)]
