# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Node-side cost of one tune call against the node's size (issue 26, item 4).

One hpcnet.rdma.node_tuning call - the tuning role's steps for the mpi profile: sysctls, every NIC's
MTU, every NIC's queue IRQs pinned spread-local, the profile record - run in-process (the module's
``run(module, host)``, as tests/unit run it) on a fake node: the /proc, /sys and /etc tree of
tests/unit/conftest.py's FakeNode under a temporary root, with NICS mlx5 NICs of QUEUES queue IRQs
each (plus each NIC's async vector) and 256 online CPUs in two NUMA nodes; /proc/interrupts has a
count column per CPU, as the kernel prints it.

For each size it times the converge (first call) and the no-change rerun (the same call again) with
time.process_time (the node's CPU seconds) and wall time, and prints the cost per queue IRQ: flat
per-IRQ figures mean the call grows linearly with the work.  The target: under 1.5 CPU-s per call
at 512 IRQs (8 NICs x 64 queues).

    PYTHONPATH=build/collections .venv/bin/python benchmarks/node_scale.py [--nics 1,2,4,8] [--queues 8,16,32,64]
        [--cpus 256] [--repeat 3] [--profile converge|rerun --at NICSxQUEUES]

--profile runs cProfile on one call at one size and prints the top functions by cumulative time.
The numbers are the call's own: no Ansible, no Python start, no payload (those are the same at
every size).
"""
from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import shutil
import sys
import tempfile
import time
from typing import Any, Dict, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
COLLECTIONS = os.path.join(ROOT, "build", "collections")
if COLLECTIONS not in sys.path:
    sys.path.insert(0, COLLECTIONS)

from ansible_collections.hpcnet.rdma.plugins.modules import node_tuning  # noqa: E402
from ansible_collections.hpcnet.rdma.tests.unit.conftest import FakeModule, FakeNic, FakeNode  # noqa: E402

TARGET_SECONDS = 1.5     # node CPU seconds per call at 512 IRQs
SYSCTLS = {"net.ipv4.tcp_rmem": "4096 87380 268435456", "net.ipv4.tcp_wmem": "4096 65536 268435456",
           "net.ipv4.tcp_mtu_probing": 1, "net.ipv4.tcp_timestamps": 0, "net.ipv4.tcp_sack": 1,
           "vm.zone_reclaim_mode": 0, "kernel.numa_balancing": 0}
PRISTINE = {"net.ipv4.tcp_rmem": "4096\t131072\t6291456", "net.ipv4.tcp_wmem": "4096\t16384\t4194304",
            "net.ipv4.tcp_mtu_probing": "0", "net.ipv4.tcp_timestamps": "1", "net.ipv4.tcp_sack": "1",
            "vm.zone_reclaim_mode": "0", "kernel.numa_balancing": "1"}


def nic_name(k: int) -> str:
    return "ens%df0np0" % (k + 1)


def pci_of(k: int) -> str:
    return "0000:%02x:00.0" % (0x3b + k)


def build_node(root: str, nics: int, queues: int, cpus: int = 256) -> FakeNode:
    """A fake node under ``root``: ``nics`` mlx5 NICs with ``queues`` queue IRQs each (mlx5_compN) and
    an async vector, on ``cpus`` online CPUs in two NUMA nodes (NIC k on node k % 2)."""
    node = FakeNode(root)
    os.makedirs(root, exist_ok=True)
    for key, value in PRISTINE.items():
        node.sysctl(key, value)
    half = cpus // 2
    local = ("0-%d" % (half - 1), "%d-%d" % (half, cpus - 1))
    lines = ["     " + "".join("%-11s" % ("CPU%d" % c) for c in range(cpus))]
    counts = "".join("%10d " % 0 for _cpu in range(cpus))
    for k in range(nics):
        ifname, pci = nic_name(k), pci_of(k)
        node.add_nic(FakeNic(ifname, "mlx5_core", max_mtu=9978,
                             rings={"max": {"rx": 8192, "tx": 8192}, "current": {"rx": 1024, "tx": 1024}},
                             channels={"max": {"other": None, "combined": 64}, "current": {"combined": queues}},
                             coalesce={"adaptive_rx": True, "adaptive_tx": True, "rx_usecs": 8, "tx_usecs": 16},
                             mac="b8:ce:f6:00:%02x:01" % k, addresses=[("10.77.%d.1" % k, 24)]))
        # the NIC's PCI device in sysfs: msi_irqs, NUMA node, local CPUs; device/ points at it
        dev = "/sys/devices/pci0000:00/%s" % pci
        first = 200 + k * 100
        for irq in range(first, first + queues + 1):
            node.write("%s/msi_irqs/%d" % (dev, irq), "msix\n")
            name = ("mlx5_async0@pci:%s" % pci) if irq == first else ("mlx5_comp%d@pci:%s" % (irq - first - 1, pci))
            lines.append("%4d: %s IR-PCI-MSIX-%s %d-edge      %s" % (irq, counts, pci, irq - first, name))
            node.write("/proc/irq/%d/smp_affinity_list" % irq, "0-%d\n" % (cpus - 1))
            node.write("/proc/irq/%d/effective_affinity_list" % irq, "0\n")
            node.write("/proc/irq/%d/affinity_hint" % irq, "0\n")
            os.makedirs(node.path("/proc/irq/%d/%s" % (irq, name)))   # the kernel's directory per named handler
        node.write(dev + "/numa_node", "%d\n" % (k % 2))
        node.write(dev + "/local_cpulist", local[k % 2] + "\n")
        node.write(dev + "/vendor", "0x15b3\n")
        device = node.path("/sys/class/net/%s/device" % ifname)
        shutil.rmtree(device)   # FakeNode.add_nic made a plain directory; the kernel's is a link to the PCI device
        os.symlink(node.path(dev), device)
        os.symlink(node.path("/sys/bus/pci/drivers/mlx5_core"), node.path(dev + "/driver"))
    node.write("/proc/interrupts", "\n".join(lines) + "\n")
    node.write("/sys/devices/system/cpu/online", "0-%d\n" % (cpus - 1))
    return node


def steps(nics: int) -> List[Dict[str, Any]]:
    """The tuning role's node_tuning steps for the mpi profile on these NICs (no QoS, no services)."""
    names = [nic_name(k) for k in range(nics)]
    return [
        {"name": "sysctl", "module": "sysctl_tuning",
         "args": {"sysctls": SYSCTLS, "context": "host", "release_scope": "tuning.sysctl"}},
        {"name": "nic", "module": "nic_tuning",
         "args": {"interfaces": [{"name": n, "mtu": 9000} for n in names], "management_connection": "none",
                  "release_scope": "tuning.nic"}},
        {"name": "irq", "module": "irq_affinity",
         "args": {"interfaces": [{"name": n} for n in names], "policy": "spread-local", "irqbalance": "leave",
                  "release_scope": "tuning.irq"}},
        {"name": "record", "module": "managed_files",
         "args": {"release_scope": "tuning.record", "files": [
             {"path": "/etc/hpcnet-rdma/profile.json", "content": json.dumps({"name": "mpi", "sysctls": SYSCTLS}) + "\n"}]}},
    ]


def call(node: FakeNode, nics: int) -> Dict[str, Any]:
    """One node_tuning call, as the module runs it on the node."""
    module = FakeModule(node_tuning.ARGUMENT_SPEC, {"steps": steps(nics), "journal_run": "bench"}, diff=False)
    return node_tuning.run(module, node.host())


def timed(node: FakeNode, nics: int) -> Tuple[float, float, Dict[str, Any]]:
    cpu, wall = time.process_time(), time.perf_counter()
    out = call(node, nics)
    return time.process_time() - cpu, time.perf_counter() - wall, out


def measure(nics: int, queues: int, cpus: int, repeat: int) -> Dict[str, Any]:
    """Converge and no-change rerun at one size, best of ``repeat`` fresh nodes (CPU and wall seconds)."""
    best: Dict[str, Any] = {}
    for _round in range(repeat):
        tmp = tempfile.mkdtemp(prefix="node-scale-")
        try:
            node = build_node(os.path.join(tmp, "root"), nics, queues, cpus)
            for phase in ("converge", "rerun"):
                cpu, wall, out = timed(node, nics)
                if out["changed"] is not (phase == "converge"):
                    raise SystemExit("node_scale: %dx%d %s: changed=%s" % (nics, queues, phase, out["changed"]))
                if phase not in best or cpu < best[phase][0]:
                    best[phase] = (cpu, wall)
        finally:
            shutil.rmtree(tmp)
    return {"nics": nics, "queues": queues, "irqs": nics * queues, "converge": best["converge"], "rerun": best["rerun"]}


def report(rows: List[Dict[str, Any]], cpus: int) -> str:
    lines = ["one node_tuning call (sysctl, nic, irq, record) on a fake node with %d CPUs; best of the repeats" % cpus,
             "%4s %6s %5s  %9s %9s %13s  %9s %9s %13s" % ("nics", "queues", "irqs", "conv cpu", "conv wall",
                                                          "conv ms/irq", "rerun cpu", "rerun wall", "rerun ms/irq")]
    for r in rows:
        (cc, cw), (rc, rw) = r["converge"], r["rerun"]
        lines.append("%4d %6d %5d  %8.3fs %8.3fs %13.2f  %8.3fs %8.3fs %13.2f" % (
            r["nics"], r["queues"], r["irqs"], cc, cw, 1000 * cc / r["irqs"], rc, rw, 1000 * rc / r["irqs"]))
    big = [r for r in rows if r["irqs"] >= 512]
    if big:
        worst = max(max(r["converge"][0], r["rerun"][0]) for r in big)
        lines.append("at %d IRQs: %.3f CPU-s per call at most (target < %.1f s): %s"
                     % (big[0]["irqs"], worst, TARGET_SECONDS, "OK" if worst < TARGET_SECONDS else "MISSES"))
    return "\n".join(lines)


def profile(nics: int, queues: int, cpus: int, phase: str, top: int = 25) -> None:
    tmp = tempfile.mkdtemp(prefix="node-scale-")
    try:
        node = build_node(os.path.join(tmp, "root"), nics, queues, cpus)
        if phase == "rerun":
            call(node, nics)
        prof = cProfile.Profile()
        prof.runcall(call, node, nics)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(top)
    finally:
        shutil.rmtree(tmp)


def main(argv: List[str] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    p.add_argument("--nics", default="1,2,4,8")
    p.add_argument("--queues", default="8,16,32,64")
    p.add_argument("--cpus", type=int, default=256)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--profile", choices=["converge", "rerun"], help="cProfile one call (at --at) instead")
    p.add_argument("--at", default="8x64", help="NICSxQUEUES for --profile")
    a = p.parse_args(argv)
    if a.profile:
        nics, queues = (int(x) for x in a.at.split("x"))
        profile(nics, queues, a.cpus, a.profile)
        return 0
    rows = [measure(n, q, a.cpus, a.repeat) for n in (int(x) for x in a.nics.split(","))
            for q in (int(x) for x in a.queues.split(","))]
    print(report(rows, a.cpus))
    return 0


if __name__ == "__main__":
    sys.exit(main())
