# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The no-change rerun against the ping floor, with and without the fast path (issue 26, item 3).

For each node count (default 2,4,8,16): start that many lab container nodes (lab/labctl.py up), converge
them once with tune-rdma.yml -e rdma_profile=PROFILE (what `make demo` runs), then ROUNDS times, interleaved
(the order rotates each round, so drift in the machine's load hits every variant alike):

    floor          benchmarks/ping_floor.yml (one ansible.builtin.ping task, same inventory and settings)
    fast           tune-rdma.yml -e rdma_profile=PROFILE                          (fast path on: the default)
    full           tune-rdma.yml -e rdma_profile=PROFILE -e rdma_fast_rerun=false (every concern read and planned)

and take the lab down.  Each run is timed with /usr/bin/time (wall seconds); its PLAY RECAP's changed=
must be 0; the controller's CPU seconds (ansible-playbook and what it waited for) and the node containers'
(their cgroups) are kept too, less bent by other load on the machine than wall time.  Prints the medians
and full/floor, the figure item 3 decides on (the plain rerun within 2x the floor), and what the fast
path saves.

    python3 benchmarks/rerun_scale.py [--nodes 2,4,8,16] [--rounds 3] [--profile mpi] [--json FILE]

Needs the lab image (make image) and Docker; it starts and removes its own lab nodes and refuses to run
when labctl's nodes are already up.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from typing import Any, Dict, List

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collection_speed as cs  # noqa: E402  (benchmarks/ is no package: its helpers, next to this file)

VARIANTS = ("floor", "fast", "full")
TARGET = 2.0    # the plain no-change rerun <= 2x the floor


def lab_nodes() -> List[str]:
    """labctl's node containers (hpcnet-lab-nodeN) that are up: containers of other runs with the lab label
    (a Molecule scenario's) do not clash with them, they only share the CPU."""
    out = subprocess.run(["docker", "ps", "--filter", "name=^hpcnet-lab-node", "--format", "{{.Names}}"],
                         capture_output=True, text=True, check=False)
    return [n for n in out.stdout.split() if n]


def books(profile: str) -> Dict[str, List[str]]:
    tune = [cs.PLAYBOOK, "-i", cs.INVENTORY, os.path.join(cs.ROOT, "tune-rdma.yml"), "-e", "rdma_profile=%s" % profile]
    return {"floor": [cs.PLAYBOOK, "-i", cs.INVENTORY, os.path.join(cs.HERE, "ping_floor.yml")],
            "fast": tune,
            "full": tune + ["-e", "rdma_fast_rerun=false"]}


def cpu_files(names: List[str]) -> List[str]:
    """Each node container's cgroup CPU counter: cgroup v1 cpuacct.usage (ns), or v2 cpu.stat (usage_usec)."""
    out = []
    for name in names:
        cid = subprocess.run(["docker", "inspect", "-f", "{{.Id}}", name], capture_output=True, text=True,
                             check=False).stdout.strip()
        for path in ("/sys/fs/cgroup/cpuacct/docker/%s/cpuacct.usage" % cid, "/sys/fs/cgroup/docker/%s/cpu.stat" % cid,
                     "/sys/fs/cgroup/system.slice/docker-%s.scope/cpu.stat" % cid):
            if cid and os.path.exists(path):
                out.append(path)
                break
    return out


def node_cpu(files: List[str]) -> float:
    total = 0.0
    for path in files:
        with open(path) as f:
            text = f.read()
        if path.endswith("cpuacct.usage"):
            total += int(text) / 1e9
        else:
            total += int(dict(line.split() for line in text.splitlines())["usage_usec"]) / 1e6
    return total


def timed(argv: List[str], files: List[str]) -> Dict[str, Any]:
    """collection_speed.timed (wall seconds, recap counts) plus CPU seconds: the controller's (ansible-playbook
    and every process it waited for) and the node containers' (their cgroups) - less bent than wall time by
    other load on the machine."""
    ctl, node = resource.getrusage(resource.RUSAGE_CHILDREN), node_cpu(files)
    out = cs.timed(argv, use_hyperfine=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    out["controller_cpu"] = round(after.ru_utime + after.ru_stime - ctl.ru_utime - ctl.ru_stime, 3)
    out["node_cpu"] = round(node_cpu(files) - node, 3) if files else None
    return out


def measure(n: int, profile: str, rounds: int) -> Dict[str, Any]:
    cmds = books(profile)
    cs.lab_up(n)
    try:
        files = cpu_files(lab_nodes())
        converge = timed(cmds["fast"], files)
        runs: Dict[str, List[Dict[str, Any]]] = dict((v, []) for v in VARIANTS)
        for r in range(rounds):
            order = VARIANTS[r % len(VARIANTS):] + VARIANTS[:r % len(VARIANTS)]
            for v in order:
                runs[v].append(timed(cmds[v], files))
    finally:
        cs.lab_down()
    return {"converge": converge, "runs": runs}


def median(values: List[float]) -> float:
    return round(statistics.median(values), 3) if values else float("nan")


def summarize(results: Dict[int, Dict[str, Any]]) -> Dict[int, Dict[str, Any]]:
    table: Dict[int, Dict[str, Any]] = {}
    for n, res in sorted(results.items()):
        med = dict((v, median([x["seconds"] for x in res["runs"][v] if x["seconds"] is not None])) for v in VARIANTS)
        cpu = dict((v, median([x["controller_cpu"] + (x["node_cpu"] or 0) for x in res["runs"][v]])) for v in VARIANTS)
        table[n] = {"median_seconds": med,
                    "median_cpu_seconds": cpu,    # controller + nodes
                    "cpu_full_over_floor": round(cpu["full"] / cpu["floor"], 3),
                    "cpu_fast_over_floor": round(cpu["fast"] / cpu["floor"], 3),
                    "full_over_floor": round(med["full"] / med["floor"], 3),
                    "fast_over_floor": round(med["fast"] / med["floor"], 3),
                    "fast_saves": round(med["full"] - med["fast"], 3),
                    "seconds": dict((v, [x["seconds"] for x in res["runs"][v]]) for v in VARIANTS),
                    "changed": dict((v, [x["changed"] for x in res["runs"][v]]) for v in VARIANTS),
                    # the recap's ok= over all hosts: the fast path runs fewer tasks, so it shows it was taken
                    "ok": dict((v, [x.get("ok") for x in res["runs"][v]]) for v in VARIANTS),
                    "failed": sum(x["failed"] + (1 if x["rc"] else 0) for v in VARIANTS for x in res["runs"][v])
                    + res["converge"]["failed"] + (1 if res["converge"]["rc"] else 0)}
    return table


def report(table: Dict[int, Dict[str, Any]]) -> str:
    lines = ["%5s  %8s %10s %10s  %10s %10s %10s" % ("nodes", "floor", "with fast", "without", "without/fl",
                                                     "with/fl", "fast saves")]
    for n, row in sorted(table.items()):
        m = row["median_seconds"]
        lines.append("%5d  %7.2fs %9.2fs %9.2fs  %10.2f %10.2f %9.2fs" % (
            n, m["floor"], m["fast"], m["full"], row["full_over_floor"], row["fast_over_floor"], row["fast_saves"]))
    lines.append("CPU seconds (controller + nodes), medians:")
    lines.append("%5s  %8s %10s %10s  %10s %10s" % ("nodes", "floor", "with fast", "without", "without/fl", "with/fl"))
    for n, row in sorted(table.items()):
        c = row["median_cpu_seconds"]
        lines.append("%5d  %7.2fs %9.2fs %9.2fs  %10.2f %10.2f" % (
            n, c["floor"], c["fast"], c["full"], row["cpu_full_over_floor"], row["cpu_fast_over_floor"]))
    lines.append("target: the plain (no fast path) rerun <= %.1fx the floor" % TARGET)
    for n, row in sorted(table.items()):
        verdict = ["plain rerun %s" % ("within" if row["full_over_floor"] <= TARGET else "OVER")]
        verdict.append("runs " + "; ".join("%s %s" % (v, "/".join("%.2f" % s for s in row["seconds"][v] if s is not None))
                                           for v in VARIANTS))
        verdict.append("tasks ok fast %s, full %s" % (row["ok"]["fast"], row["ok"]["full"]))
        if any(c for v in ("fast", "full") for c in row["changed"][v]):
            verdict.append("a rerun CHANGED something: %s" % row["changed"])
        if row["failed"]:
            verdict.append("%d failed run(s) (see the JSON's tails)" % row["failed"])
        lines.append("  %d nodes: %s" % (n, ", ".join(verdict)))
    return "\n".join(lines)


def main(argv: List[str] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    p.add_argument("--nodes", default="2,4,8,16", help="node counts, comma-separated (2..16)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--profile", default="mpi")
    p.add_argument("--json", default=os.path.join(cs.ROOT, "build", "rerun-scale.json"))
    a = p.parse_args(argv)
    counts = [int(x) for x in a.nodes.split(",") if x]
    if any(not 2 <= n <= 16 for n in counts) or a.rounds < 1:
        p.error("--nodes: each count in 2..16; --rounds >= 1")
    if not os.access("/usr/bin/time", os.X_OK):
        p.error("/usr/bin/time is not installed (Debian: apt-get install time)")
    if lab_nodes():
        print("rerun_scale: lab nodes are already up (%s); stop them first (make lab-down)"
              % ", ".join(lab_nodes()), file=sys.stderr)
        return 2
    results: Dict[int, Dict[str, Any]] = {}
    t0 = time.monotonic()
    for n in counts:
        results[n] = measure(n, a.profile, a.rounds)
        print("%d nodes: done (%.0f s so far)" % (n, time.monotonic() - t0), file=sys.stderr)
        table = summarize(results)
        os.makedirs(os.path.dirname(a.json), exist_ok=True)
        with open(a.json, "w") as f:
            json.dump({"results": results, "table": table, "profile": a.profile, "rounds": a.rounds}, f, indent=1)
    print(report(summarize(results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
