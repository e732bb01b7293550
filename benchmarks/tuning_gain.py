# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the ``mpi`` profile buys on the lab VM pair: the same benchmarks untuned and tuned.

On two lab VMs (lab/labctl.py vm up, run ``tuning-gain``) with the RDMA stack only (soft-RoCE rxe0
on data0 through ``tune_rdma.yml --tags stack``: the RDMA tests need a device, nothing else is
tuned), ``playbooks/bench_rdma.yml`` runs iperf3 -J, sockperf ping-pong, ib_write_bw, ib_send_lat
and the mpi test (mpirun over UCX: ping-pong and Allreduce per message size) between the VMs
("untuned"); then ``tune_rdma.yml -e rdma_profile=mpi`` (jumbo frames, buffers, rings, IRQ pinning)
and the same benchmarks again ("mpi"), ``--rounds`` times interleaved
(a rollback between rounds).  The stored runs go to build/bench/tuning-gain/, the before/after
report (Markdown, HTML, PNG plots) from ``hpcnet.rdma`` 's bench_report to
build/bench/tuning-gain/report/; the Markdown table is printed.  Ends with ``rollback_rdma.yml`` and
stops the VMs it started (by their recorded PIDs).  Traffic goes only between the two lab VMs.

    python3 benchmarks/tuning_gain.py [--rounds 1] [--duration 10] [--keep]      (make bench)
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lab"))

from lablib import vmrun  # noqa: E402  (lab/lablib, standard library only)
from lablib.vmstate import load_state  # noqa: E402

RUN = "tuning-gain"
BIN = ROOT / ".venv" / "bin"
OUT = ROOT / "build" / "bench" / "tuning-gain"
ENV = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(ROOT / "build" / "collections"), ANSIBLE_FORCE_COLOR="false",
           PYTHONPATH=str(ROOT / "build" / "collections"))
# The RDMA stack of the VM tier (molecule/vm/molecule.yml, group rdma_nodes): soft-RoCE on data0.
STACK = {"rdma_stack": True, "rdma_core_modules": ["ib_umad", "rdma_ucm"],
         "rdma_core_soft_roce": [{"netdev": "data0", "name": "rxe0"}], "rdma_core_devices": ["uverbs", "rdma_cm", "umad"],
         "rdma_irq_interfaces": [{"name": "data0"}],
         "rdma_interfaces": [{"name": "data0", "mtu": 9000, "rings": {"rx": 1024, "tx": 256}}]}


# ib_send_lat on soft-RoCE in a TCG guest takes ~25 ms a round trip: the default 10000 iterations would
# take 4 minutes a run; 1000 samples still give p50/p90/p99 (p99.9 is then the second-largest sample).
LAT_ITERATIONS = 1000
TESTS = ["iperf3", "sockperf", "ib_write_bw", "ib_send_lat", "mpi"]
# The mpi test: MPI over soft-RoCE (or UCX's TCP transport) between TCG guests is as slow a round trip as
# ib_send_lat; 200 samples per op and size (plus 20 warm-up) keep its six series to about a minute.
MPI_ITERATIONS = 200
MPI_TIMEOUT = 600
# MPI over soft-RoCE, as on the fabric: UCX on rxe0 only, with the link-local RoCE v2 GID (index 0).  With UCX's own
# choice, the IPv4-mapped GID, UCX 1.13's UD wireup times out between these guests although rxe counts the packets
# both ways (tests/unit/fixtures/mpirun.rxe-ud-timeout.captured.stderr.txt; docs/topology.md measured the same), and
# UCX's TCP transport would also see mgmt0, whose NAT address both VMs share.  Both runs get these UCX settings from
# the command line (the environment beats /etc/ucx/ucx.conf), so the untuned run, which has no ucx.conf, runs at all.
MPI_ARGS = ["-x", "UCX_NET_DEVICES=rxe0:1", "-x", "UCX_IB_GID_INDEX=0"]


def bench_vars(label: str, duration: int) -> dict:
    """The extra vars of one bench_rdma.yml run."""
    return {"rdma_bench_label": label, "rdma_bench_install": False, "rdma_bench_publish": False,
            "rdma_bench_tests": TESTS, "rdma_bench_duration": duration, "rdma_bench_lat_iterations": LAT_ITERATIONS,
            "rdma_bench_mpi_iterations": MPI_ITERATIONS, "rdma_bench_mpi_timeout": MPI_TIMEOUT, "rdma_bench_mpi_args": MPI_ARGS,
            "rdma_bench_results_dir": str(OUT), "rdma_bench_interfaces": ["data0"]}


def progress(line: str, started: float) -> Optional[str]:
    """The line ``make bench`` shows for one line of a playbook's output, None for the rest: each play and
    task as it starts, with the seconds since the playbook started (the whole output goes to the log)."""
    for head in ("PLAY [", "TASK [", "PLAY RECAP"):
        if line.startswith(head):
            return "    %5.0fs  %s" % (time.monotonic() - started, line.rstrip(" *\n"))
    return None


def playbook(inventory: Path, name: str, *extra: str) -> None:
    argv = [str(BIN / "ansible-playbook"), "-i", str(inventory), str(ROOT / "playbooks" / name), *extra]
    print("  $ " + " ".join(argv[1:]), flush=True)
    log = OUT / "ansible.log"
    started = time.monotonic()
    with open(log, "a", encoding="utf-8") as out, \
            subprocess.Popen(argv, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             errors="replace") as proc:
        for line in proc.stdout:
            out.write(line)
            shown = progress(line, started)
            if shown:
                print(shown, flush=True)
        rc = proc.wait()
    print("    %5.0fs  %s: exit %d" % (time.monotonic() - started, name, rc), flush=True)
    if rc != 0:
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-40:]
        raise SystemExit("\n".join(tail + [f"{name} failed (exit {rc}); its whole output: {log}"]))


def step(n: int, total: int, what: str) -> None:
    print(f"[{n}/{total}] {what}", flush=True)


def bench(inventory: Path, label: str, duration: int) -> Path:
    before = set(OUT.glob("*.json"))
    playbook(inventory, "bench_rdma.yml", "-e", json.dumps(bench_vars(label, duration)))
    new = sorted(set(OUT.glob("*.json")) - before)
    if len(new) != 1:
        raise SystemExit(f"bench_rdma.yml ({label}) stored {len(new)} run files in {OUT}, expected 1")
    return new[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--rounds", type=int, default=1, help="untuned/mpi pairs, interleaved (default 1)")
    ap.add_argument("--duration", type=int, default=10, help="seconds per iperf3/ib_write_bw test (default 10)")
    ap.add_argument("--profile", default="mpi", help="the tuned side (default mpi)")
    ap.add_argument("--keep", action="store_true", help="leave the VMs up (tuned) at the end")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    print(f"make bench: two lab VMs, {args.rounds} round(s); each playbook's plays and tasks are listed as they "
          f"start, their whole output goes to {OUT / 'ansible.log'}", flush=True)
    subprocess.run([sys.executable, str(ROOT / "lab" / "labctl.py"), "vm", "up", "--run", RUN, "--nodes", "2",
                    "--no-inventory"], check=True)
    work = Path(tempfile.mkdtemp(prefix="hpcnet-tuning-gain-"))
    inventory = work / "hosts.yml"
    inventory.write_text(vmrun.inventory_text(load_state(RUN)))
    shutil.copytree(ROOT / "inventories" / "lab-vm" / "group_vars", work / "group_vars")
    stack = work / "stack.json"
    stack.write_text(json.dumps(STACK))
    runs: list = []
    steps = 4 * args.rounds
    try:
        for r in range(args.rounds):
            step(4 * r + 1, steps, f"round {r + 1}: the RDMA stack only (soft-RoCE rxe0 on data0)")
            playbook(inventory, "tune_rdma.yml", "-e", "@" + str(stack), "--tags", "stack")
            step(4 * r + 2, steps, f"round {r + 1}: benchmarks, untuned")
            runs.append(bench(inventory, "untuned", args.duration))
            step(4 * r + 3, steps, f"round {r + 1}: tune with profile {args.profile}, then its benchmarks")
            playbook(inventory, "tune_rdma.yml", "-e", "@" + str(stack), "-e", f"rdma_profile={args.profile}")
            runs.append(bench(inventory, args.profile, args.duration))
            step(4 * r + 4, steps, f"round {r + 1}: roll back")
            playbook(inventory, "rollback_rdma.yml")
    finally:
        if not args.keep:
            subprocess.run([sys.executable, str(ROOT / "lab" / "labctl.py"), "vm", "down", "--run", RUN], check=False)
        shutil.rmtree(work, ignore_errors=True)
    report = OUT / "report"
    subprocess.run([str(BIN / "python"), "-m", "ansible_collections.hpcnet.rdma.plugins.plugin_utils._benchreport",
                    *map(str, runs), "-o", str(report)], check=True, env=ENV)
    for md in sorted(report.glob("*.md")):
        print(md.read_text(encoding="utf-8"))
    print(f"runs: {', '.join(p.name for p in runs)}; report: {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
