# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The collection's own speed against the usual way, on lab container nodes (issue 15, item 5).

For each node count (default 2; e.g. --nodes 2,4,8,16), ROUNDS times, interleaved so drift in the
machine's load hits every variant alike, each variant on freshly started lab nodes (pristine):

    baseline    benchmarks/baseline_tune.yml   (one ansible.posix.sysctl task per key, `command: ip`
                per NIC, lineinfile persistence) - converge from pristine, then a no-change rerun
    tune_rdma   playbooks/tune_rdma.yml -e rdma_profile=PROFILE - converge, then a no-change rerun
    floor       benchmarks/ping_floor.yml      (one ping task)

Each run is timed with /usr/bin/time (wall seconds, max RSS of ansible-playbook) - or hyperfine's
single-run JSON when --hyperfine is given and hyperfine is installed.  Prints the medians, the ratios
against the targets (converge <= 1/4 of the baseline's; no-change rerun <= 2x the floor) and the series
over the node counts (wall time per node: flat = linear growth).  Writes everything to --json.

    python3 benchmarks/collection_speed.py [--nodes 2,4,8,16] [--rounds 3] [--profile mpi] [--shared-lab] [--json FILE]

--shared-lab starts the lab once per round and node count (floor, tune_rdma converge + rerun, rollback_rdma,
then the baseline) instead of once per variant: quicker, and the baseline then starts from what rollback restored.

Needs the lab image (make image) and Docker; it starts and removes its own lab nodes
(lab/labctl.py up/down) and refuses to run when other lab containers are up.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VENV_BIN = os.path.join(ROOT, ".venv", "bin")
PLAYBOOK = os.path.join(VENV_BIN, "ansible-playbook")
INVENTORY = os.path.join(ROOT, "inventories", "lab")
LABCTL = [sys.executable, os.path.join(ROOT, "lab", "labctl.py")]
VARIANTS = ("baseline", "tune_rdma", "floor")
TARGET_CONVERGE = 0.25      # our converge <= 1/4 of the baseline's
TARGET_RERUN = 2.0          # our no-change rerun <= 2x the floor


def env() -> Dict[str, str]:
    return dict(os.environ, PATH=VENV_BIN + os.pathsep + os.environ.get("PATH", ""),
                ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, "build", "collections"),
                ANSIBLE_DISPLAY_SKIPPED_HOSTS="false", ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="0")


def lab_containers() -> List[str]:
    out = subprocess.run(["docker", "ps", "--filter", "label=hpcnet-rdma-lab", "--format", "{{.Names}}"],
                         capture_output=True, text=True, check=False)
    return [n for n in out.stdout.split() if n]


def timed(argv: List[str], use_hyperfine: bool) -> Dict[str, Any]:
    """Run argv once; wall seconds, max RSS (KiB) and the PLAY RECAP's changed/failed/ok counts."""
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "out.log")
        if use_hyperfine:
            export = os.path.join(tmp, "h.json")
            cmd = ["hyperfine", "--runs", "1", "--show-output", "--export-json", export,
                   " ".join(_quote(a) for a in argv)]
            with open(log, "w") as f:
                proc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env(), cwd=ROOT, check=False)
            seconds = json.load(open(export))["results"][0]["mean"] if os.path.exists(export) else None
            rss = None
        else:
            fmt = os.path.join(tmp, "time")
            with open(log, "w") as f:
                proc = subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", fmt] + argv, stdout=f,
                                      stderr=subprocess.STDOUT, env=env(), cwd=ROOT, check=False)
            fields = open(fmt).read().split()[-2:] if os.path.exists(fmt) else [None, None]
            seconds, rss = (float(fields[0]), int(fields[1])) if fields[0] else (None, None)
        text = open(log).read()
    changed = sum(int(x) for x in _recap(text, "changed"))
    failed = sum(int(x) for x in _recap(text, "failed")) + sum(int(x) for x in _recap(text, "unreachable"))
    return {"seconds": seconds, "max_rss_kib": rss, "rc": proc.returncode, "changed": changed, "failed": failed,
            "ok": sum(int(x) for x in _recap(text, "ok")),
            "tail": text[-600:] if proc.returncode else ""}


def _recap(text: str, what: str) -> List[str]:
    import re
    return re.findall(r"\b%s=(\d+)" % what, text.split("PLAY RECAP")[-1]) if "PLAY RECAP" in text else []


def _quote(a: str) -> str:
    return a if a and all(c.isalnum() or c in "-_./=,:" for c in a) else "'%s'" % a.replace("'", "'\\''")


def lab_up(n: int) -> None:
    subprocess.run(LABCTL + ["up", "--nodes", str(n)], check=True, stdout=subprocess.DEVNULL, cwd=ROOT)


def lab_down() -> None:
    subprocess.run(LABCTL + ["down"], check=False, stdout=subprocess.DEVNULL, cwd=ROOT)


def one_round(n: int, profile: str, use_hyperfine: bool, shared_lab: bool = False) -> Dict[str, Dict[str, Any]]:
    books = {"baseline": [PLAYBOOK, "-i", INVENTORY, os.path.join(HERE, "baseline_tune.yml"),
                          "-e", "rdma_profile=%s" % profile],
             "tune_rdma": [PLAYBOOK, "-i", INVENTORY, os.path.join(ROOT, "playbooks", "tune_rdma.yml"),
                           "-e", "rdma_profile=%s" % profile],
             "floor": [PLAYBOOK, "-i", INVENTORY, os.path.join(HERE, "ping_floor.yml")]}
    out: Dict[str, Dict[str, Any]] = {}
    if shared_lab:
        # one lab start: floor, tune_rdma converge + rerun, rollback_rdma (untimed, back to pristine), baseline
        lab_up(n)
        try:
            out["floor"] = timed(books["floor"], use_hyperfine)
            out["tune_rdma.converge"] = timed(books["tune_rdma"], use_hyperfine)
            out["tune_rdma.rerun"] = timed(books["tune_rdma"], use_hyperfine)
            out["rollback"] = timed([PLAYBOOK, "-i", INVENTORY, os.path.join(ROOT, "playbooks", "rollback_rdma.yml")],
                                    use_hyperfine)
            out["baseline.converge"] = timed(books["baseline"], use_hyperfine)
            out["baseline.rerun"] = timed(books["baseline"], use_hyperfine)
        finally:
            lab_down()
        return out
    for variant in VARIANTS:
        lab_up(n)
        try:
            if variant == "floor":
                out["floor"] = timed(books["floor"], use_hyperfine)
            else:
                out[variant + ".converge"] = timed(books[variant], use_hyperfine)
                out[variant + ".rerun"] = timed(books[variant], use_hyperfine)
        finally:
            lab_down()
    return out


def median(values: List[float]) -> float:
    return round(statistics.median(values), 3) if values else float("nan")


def summarize(rounds: Dict[int, List[Dict[str, Dict[str, Any]]]]) -> Dict[str, Any]:
    table: Dict[str, Any] = {}
    for n, runs in sorted(rounds.items()):
        keys = sorted(set(k for r in runs for k in r))
        med = dict((k, median([r[k]["seconds"] for r in runs if r.get(k, {}).get("seconds") is not None])) for k in keys)
        table[n] = {"median_seconds": med,
                    "converge_ratio": round(med["tune_rdma.converge"] / med["baseline.converge"], 3),
                    "rerun_over_floor": round(med["tune_rdma.rerun"] / med["floor"], 3),
                    "rerun_changed": [r["tune_rdma.rerun"]["changed"] for r in runs],
                    "failed": sum(r[k]["failed"] + (1 if r[k]["rc"] else 0) for r in runs for k in r),
                    "failed_runs": sorted(set(k for r in runs for k in r if r[k]["failed"] or r[k]["rc"]))}
    return table


def report(table: Dict[int, Dict[str, Any]]) -> str:
    lines = ["%5s  %12s %12s %12s %12s %8s  %9s %9s" % ("nodes", "baseline", "base rerun", "tune_rdma", "our rerun",
                                                        "floor", "conv/base", "rerun/flr")]
    for n, row in sorted(table.items()):
        m = row["median_seconds"]
        lines.append("%5d  %11.2fs %11.2fs %11.2fs %11.2fs %7.2fs  %9.3f %9.3f" % (
            n, m["baseline.converge"], m["baseline.rerun"], m["tune_rdma.converge"], m["tune_rdma.rerun"], m["floor"],
            row["converge_ratio"], row["rerun_over_floor"]))
    lines.append("targets: converge ratio <= %.2f, rerun/floor <= %.1f" % (TARGET_CONVERGE, TARGET_RERUN))
    for n, row in sorted(table.items()):
        verdict = []
        verdict.append("converge %s" % ("OK" if row["converge_ratio"] <= TARGET_CONVERGE else "MISSES"))
        verdict.append("rerun %s" % ("OK" if row["rerun_over_floor"] <= TARGET_RERUN else "MISSES"))
        if any(row["rerun_changed"]):
            verdict.append("rerun changed %s (not idempotent)" % row["rerun_changed"])
        if row["failed"]:
            verdict.append("failures in %s (see the JSON's tails)" % ", ".join(row["failed_runs"]))
        lines.append("  %d nodes: %s" % (n, ", ".join(verdict)))
    ns = sorted(table)
    if len(ns) > 1:
        lines.append("series (tune_rdma converge seconds per node, flat = linear): " + ", ".join(
            "%d: %.2f" % (n, table[n]["median_seconds"]["tune_rdma.converge"] / n) for n in ns))
    return "\n".join(lines)


def main(argv: List[str] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    p.add_argument("--nodes", default="2", help="node counts, comma-separated (2..16)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--profile", default="mpi")
    p.add_argument("--hyperfine", action="store_true", help="time with hyperfine (when installed)")
    p.add_argument("--shared-lab", action="store_true", help="one lab start per round and node count (tune_rdma "
                   "first, rolled back before the baseline) instead of a fresh lab per variant")
    p.add_argument("--json", default=os.path.join(ROOT, "build", "collection-speed.json"))
    a = p.parse_args(argv)
    counts = [int(x) for x in a.nodes.split(",") if x]
    if any(not 2 <= n <= 16 for n in counts) or a.rounds < 1:
        p.error("--nodes: each count in 2..16; --rounds >= 1")
    use_hyperfine = a.hyperfine and shutil.which("hyperfine") is not None
    if not use_hyperfine and not os.access("/usr/bin/time", os.X_OK):
        p.error("/usr/bin/time is not installed (Debian: apt-get install time), nor hyperfine")
    if lab_containers():
        print("collection_speed: lab containers are already up (%s); stop them first (make lab-down)"
              % ", ".join(lab_containers()), file=sys.stderr)
        return 2
    rounds: Dict[int, List[Dict[str, Dict[str, Any]]]] = dict((n, []) for n in counts)
    t0 = time.monotonic()
    for r in range(a.rounds):
        for n in counts:
            rounds[n].append(one_round(n, a.profile, use_hyperfine, a.shared_lab))
            print("round %d, %d nodes: done (%.0f s so far)" % (r + 1, n, time.monotonic() - t0), file=sys.stderr)
    table = summarize(rounds)
    os.makedirs(os.path.dirname(a.json), exist_ok=True)
    with open(a.json, "w") as f:
        json.dump({"rounds": rounds, "table": table, "profile": a.profile, "timer": "hyperfine" if use_hyperfine
                   else "/usr/bin/time"}, f, indent=1)
    print(report(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
