# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the ``offpeak`` profile saves: interrupts per second and softirq CPU under the same load.

On two lab VMs (lab/labctl.py vm up, run ``offpeak-bench``): tune with the peak profile, measure,
switch to ``offpeak`` with playbooks/switch_profile.yml, measure, and alternate for ``--rounds``.
Each measurement offers the same TCP load (``iperf3 -b`` at a fixed rate, by default half of what
one unbounded 5 s run under the peak profile carried, so both profiles move the same bytes) from
vm1 to vm2's data address, and reads ``/proc/stat`` on both VMs at the start and end of a window
inside the load: interrupts per second (the ``intr`` total) and the softirq share of CPU time.
Ends with ``rollback_rdma.yml`` and stops the VMs it started (by their recorded PIDs).

    python3 benchmarks/offpeak_savings.py [--peak low_latency] [--seconds 20] [--rounds 2] [--keep]

Prints a table of medians and writes build/bench/offpeak.json.  Traffic goes only between the two
lab VMs this script boots.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lab"))

from lablib import vmrun  # noqa: E402  (lab/lablib, standard library only)
from lablib.vmstate import load_state, ssh_base  # noqa: E402

RUN = "offpeak-bench"
BIN = ROOT / ".venv" / "bin"
ENV = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(ROOT / "build" / "collections"),
           PATH=f"{BIN}:{os.environ.get('PATH', '')}", ANSIBLE_STDOUT_CALLBACK="default",
           ANSIBLE_DISPLAY_OK_HOSTS="false", ANSIBLE_DISPLAY_SKIPPED_HOSTS="false")
SAMPLE = "grep -E '^(cpu |intr )' /proc/stat | cut -d' ' -f1-12"


def sh(node: dict, cmd: str, timeout: float = 120) -> str:
    res = subprocess.run(ssh_base(node["ssh_port"]) + [cmd], capture_output=True, text=True, timeout=timeout,
                         check=False)
    if res.returncode != 0:
        raise RuntimeError(f"{node['name']}: {cmd!r} exited {res.returncode}: {res.stderr.strip()}")
    return res.stdout


def playbook(inventory: Path, name: str, *extra: str) -> None:
    argv = [str(BIN / "ansible-playbook"), "-i", str(inventory), str(ROOT / "playbooks" / name), *extra]
    t = time.monotonic()
    res = subprocess.run(argv, cwd=ROOT, env=ENV, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        sys.stdout.write(res.stdout[-4000:] + res.stderr[-2000:])
        raise RuntimeError(f"{name} {' '.join(extra)} failed (rc {res.returncode})")
    print(f"  {name} {' '.join(extra)}: ok in {time.monotonic() - t:.0f}s", flush=True)


def parse_stat(text: str) -> dict:
    """``cpu`` jiffies (user nice system idle iowait irq softirq steal) and the ``intr`` total."""
    out = {}
    for line in text.splitlines():
        f = line.split()
        if f and f[0] == "cpu":
            out["cpu"] = [int(x) for x in f[1:9]]
        elif f and f[0] == "intr":
            out["intr"] = int(f[1])
    return out


def load(vm1: dict, vm2: dict, seconds: int, rate: str | None) -> dict:
    """One measurement: vm1 -> vm2 iperf3 for ``seconds``; /proc/stat on both over the middle."""
    server_pid = "/run/hpcnet-bench-iperf3.pid"
    addr = vm1["peer_address"]   # vm2's data0 address
    sh(vm2, f"iperf3 -s -1 -D -B {addr} -I {server_pid}")
    time.sleep(0.5)
    window = max(seconds - 4, 1)
    samplers = [subprocess.Popen(ssh_base(n["ssh_port"]) + [f"sleep 2; {SAMPLE}; sleep {window}; {SAMPLE}"],
                                 stdout=subprocess.PIPE, text=True) for n in (vm1, vm2)]
    try:
        client = sh(vm1, f"iperf3 -c {addr} -t {seconds} -J" + (f" -b {rate}" if rate else ""),
                    timeout=seconds + 60)
    finally:
        # -1: the server exits after its one client; stop it by its PID if it did not
        sh(vm2, f"test ! -e {server_pid} || {{ kill $(cat {server_pid}) 2>/dev/null; rm -f {server_pid}; }}; true")
    out = {"bits_per_second": json.loads(client)["end"]["sum_received"]["bits_per_second"], "window": window}
    for name, p in zip(("vm1", "vm2"), samplers):
        text, _err = p.communicate(timeout=seconds + 30)
        lines = text.strip().splitlines()
        a, b = parse_stat("\n".join(lines[:2])), parse_stat("\n".join(lines[2:]))
        d = [y - x for x, y in zip(a["cpu"], b["cpu"])]
        out[name] = {"interrupts_per_s": (b["intr"] - a["intr"]) / window,
                     "softirq_pct": 100.0 * d[6] / sum(d), "busy_pct": 100.0 * (sum(d) - d[3] - d[4]) / sum(d)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--peak", default="low_latency", help="the profile run at peak (default low_latency)")
    ap.add_argument("--offpeak", default="offpeak")
    ap.add_argument("--seconds", type=int, default=20, help="iperf3 duration per measurement")
    ap.add_argument("--rounds", type=int, default=2, help="peak/offpeak pairs, interleaved")
    ap.add_argument("--rate", help="iperf3 -b for every run (default: half of an unbounded run at peak)")
    ap.add_argument("--keep", action="store_true", help="leave the VMs up (tuned as the last profile)")
    args = ap.parse_args()

    subprocess.run([sys.executable, str(ROOT / "lab" / "labctl.py"), "vm", "up", "--run", RUN, "--nodes", "2",
                    "--no-inventory"], check=True)
    state = load_state(RUN)
    vm1, vm2 = state["nodes"][0], state["nodes"][1]
    work = Path(tempfile.mkdtemp(prefix="hpcnet-offpeak-"))
    inventory = work / "hosts.yml"
    inventory.write_text(vmrun.inventory_text(state))
    shutil.copytree(ROOT / "inventories" / "lab-vm" / "group_vars", work / "group_vars")
    results: dict = {"peak": args.peak, "offpeak": args.offpeak, "seconds": args.seconds, "runs": []}
    try:
        playbook(inventory, "tune_rdma.yml", "-e", f"rdma_profile={args.peak}")
        rate = args.rate
        if not rate:
            free = load(vm1, vm2, 5, None)["bits_per_second"]
            rate = f"{int(free / 2 / 1e6)}M"
            print(f"  unbounded 5 s run at {args.peak}: {free / 1e9:.2f} Gbit/s; offered load: {rate}bit/s")
        results["rate"] = rate
        current = args.peak
        for r in range(args.rounds):
            for profile in (args.peak, args.offpeak):
                if profile != current:
                    playbook(inventory, "switch_profile.yml", "-e", f"rdma_profile={profile}")
                    current = profile
                m = load(vm1, vm2, args.seconds, rate)
                m.update(profile=profile, round=r + 1)
                results["runs"].append(m)
                print(f"  round {r + 1} {profile:12s} {m['bits_per_second'] / 1e9:6.2f} Gbit/s  "
                      f"vm2 {m['vm2']['interrupts_per_s']:9.0f} intr/s {m['vm2']['softirq_pct']:5.1f}% softirq  "
                      f"vm1 {m['vm1']['interrupts_per_s']:9.0f} intr/s {m['vm1']['softirq_pct']:5.1f}% softirq",
                      flush=True)
        if not args.keep:
            playbook(inventory, "rollback_rdma.yml")
    finally:
        if not args.keep:
            subprocess.run([sys.executable, str(ROOT / "lab" / "labctl.py"), "vm", "down", "--run", RUN,
                            "--no-inventory"], check=False)
        shutil.rmtree(work, ignore_errors=True)

    def med(profile: str, vm: str, what: str) -> float:
        return statistics.median(m[vm][what] for m in results["runs"] if m["profile"] == profile)

    print(f"\noffered load {results['rate']}bit/s vm1 -> vm2 for {args.seconds} s, medians of {args.rounds} "
          f"interleaved round(s), /proc/stat over the middle {args.seconds - 4} s")
    print(f"{'':26s}{args.peak:>14s}{args.offpeak:>14s}{'offpeak/peak':>14s}")
    rows = []
    for vm, role in (("vm2", "receiver"), ("vm1", "sender")):
        for what, label in (("interrupts_per_s", "interrupts/s"), ("softirq_pct", "softirq CPU %"),
                            ("busy_pct", "busy CPU %")):
            p, o = med(args.peak, vm, what), med(args.offpeak, vm, what)
            rows.append({"vm": vm, "what": what, "peak": p, "offpeak": o})
            print(f"{vm} {role:9s}{label:14s}{p:14.1f}{o:14.1f}{(o / p if p else float('nan')):14.2f}")
    gbps = [statistics.median(m["bits_per_second"] for m in results["runs"] if m["profile"] == pr) / 1e9
            for pr in (args.peak, args.offpeak)]
    print(f"{'throughput Gbit/s':26s}{gbps[0]:14.2f}{gbps[1]:14.2f}")
    results["medians"] = rows
    out = ROOT / "build" / "bench" / "offpeak.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"raw runs: {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
