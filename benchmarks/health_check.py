# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The node health check's speed (issue 27): wall and CPU time of `hpcnet-rdma-check --json`, median of
--runs (default 20) runs, and its budget overrun - a tiny --budget must end in the named finding
budget.exceeded within the watchdog's 2 x budget + 0.5 s, never a hang.  Target: <= 1 s wall on a lab VM.

Where it runs (one of):

  --local [--root DIR]        the worktree's program, run directly on this machine against DIR (default /:
                              this machine's own sysfs), with the worktree's module_utils
  --local --fake              the same against a small fake soft-RoCE node tree made in a temp directory
  --container NAME            the check installed in a lab container (docker exec -i NAME ...)
  --vm NAME [--vm-run RUN]    the check installed in a lab VM, through `lab/labctl.py vm ssh` (the lab's key)

On a node the check is --check (default /usr/local/sbin/hpcnet-rdma-check, where role hpcnet.rdma.rdma_health
puts it); --ship copies the worktree's program (with the first line the role gives it) and the module_utils files
the role would install to /tmp/hpcnet-rdma-bench on the node first and runs that copy, as Slurm runs it (a node the
role never ran on).  --baseline REF (with --ship or --local) puts the program of git commit REF beside it and
alternates the runs of both, so the ratio is measured side by side on the same node in the same minute.

Timing happens on the node: a small python3 timer (sent on stdin) runs the check --runs times and reports each
run's wall time (monotonic) and CPU time (its children's user + system rusage), so the transport (docker exec,
ssh) is not in the figures.  The check keeps its counters in /tmp/hpcnet-rdma-bench/state.json and writes its
metrics into /tmp/hpcnet-rdma-bench/metrics - never the node's own /run state or textfile directory.

    python3 benchmarks/health_check.py --local --fake
    python3 benchmarks/health_check.py --container health-n1 [--json FILE]
    python3 benchmarks/health_check.py --vm vm1 --ship [--baseline 9aaa8e5]
"""
from __future__ import annotations

import argparse
import io
import json
import os
import shlex
import statistics
import subprocess
import sys
import tarfile
import tempfile
from typing import Any, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROGRAM = os.path.join(ROOT, "roles", "rdma_health", "files", "hpcnet-rdma-check.py")
LABCTL = os.path.join(ROOT, "lab", "labctl.py")
INSTALLED = "/usr/local/sbin/hpcnet-rdma-check"
WORK = "/tmp/hpcnet-rdma-bench"
PACKAGE = "ansible_collections/hpcnet/rdma/plugins/module_utils"

# Runs on the node (python3 standard library only): the spec is one JSON argument.
TIMER = r'''
import json, os, resource, subprocess, sys, time
spec = json.loads(sys.argv[1])
env = dict(os.environ, **spec.get("env", {}))
for d in spec.get("mkdir", []):
    os.makedirs(d, exist_ok=True)
out = [[] for _v in spec["variants"]]
for i in range(spec["runs"]):
    for argv, runs in zip(spec["variants"], out):   # alternated: both see the same node, load and minute
        r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, universal_newlines=True,
                           timeout=spec.get("timeout", 120))
        t1, r1 = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
        runs.append({"wall": t1 - t0, "cpu": (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime),
                     "rc": p.returncode, "stdout": p.stdout if i == spec["runs"] - 1 else "", "stderr": p.stderr[-2000:]})
print(json.dumps(out))
'''
UNPACK = "import sys, tarfile; tarfile.open(fileobj=sys.stdin.buffer, mode='r|').extractall(sys.argv[1])"

FAKE = {   # a soft-RoCE node: one data netdev, one ACTIVE RoCE v2 port, memlock unlimited
    "sys/class/net/data0/mtu": "1500\n", "sys/class/net/data0/operstate": "up\n",
    "sys/class/net/data0/carrier_changes": "2\n", "sys/class/net/data0/statistics/rx_errors": "0\n",
    "sys/class/infiniband/rxe0/ports/1/state": "4: ACTIVE\n", "sys/class/infiniband/rxe0/ports/1/phys_state": "5: LinkUp\n",
    "sys/class/infiniband/rxe0/ports/1/link_layer": "Ethernet\n",
    "sys/class/infiniband/rxe0/ports/1/gids/1": "0000:0000:0000:0000:0000:ffff:0a4d:0001\n",
    "sys/class/infiniband/rxe0/ports/1/gid_attrs/types/1": "RoCE v2\n",
    "sys/class/infiniband/rxe0/ports/1/gid_attrs/ndevs/1": "data0\n",
    "sys/class/infiniband/rxe0/ports/1/counters/link_downed": "0\n",
    "proc/sys/kernel/osrelease": "6.1.0-28-amd64\n",
    "proc/sys/net/ipv4/neigh/default/gc_thresh2": "512\n", "proc/sys/net/ipv4/neigh/default/gc_thresh3": "1024\n",
    "etc/security/limits.d/rdma.conf": "@rdma - memlock unlimited\n",
    "etc/hpcnet-rdma/health.json": json.dumps({"tools": [], "fleet_size": 2}),
    "etc/nccl.conf": "NCCL_IB_GID_INDEX=1\n",
}


def source(rel: str, ref: Optional[str] = None) -> bytes:
    """A file of this checkout (``rel`` from its root), or as git commit ``ref`` has it."""
    if ref is None:
        with open(os.path.join(ROOT, rel), "rb") as f:
            return f.read()
    proc = subprocess.run(["git", "-C", ROOT, "show", "%s:%s" % (ref, rel)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, check=False)
    if proc.returncode != 0:
        sys.exit("--baseline %s: %s" % (ref, proc.stderr.decode(errors="replace").strip()))
    return proc.stdout


def role_vars(ref: Optional[str] = None) -> Dict[str, Any]:
    import yaml   # the project's venv has it; only --ship and --baseline need it
    return yaml.safe_load(source("roles/rdma_health/vars/main.yml", ref))


def module_utils_files(ref: Optional[str] = None) -> List[str]:
    """What role rdma_health installs (its vars/main.yml list), as paths under plugins/module_utils."""
    return [name + ".py" for name in role_vars(ref)["__rdma_health_module_utils"]]


def program_text(lib: str, ref: Optional[str] = None) -> bytes:
    """The program as the role installs it: its first line (the role's __rdma_health_shebang; before it was a
    variable, "#!/usr/bin/python3"), then the file with its LIB default replaced by ``lib``."""
    shebang = role_vars(ref).get("__rdma_health_shebang", "#!/usr/bin/python3")
    text = source(os.path.relpath(PROGRAM, ROOT), ref).replace(b'"/usr/lib/hpcnet-rdma/lib"', json.dumps(lib).encode())
    return shebang.encode() + b"\n" + text


def ship_tar(work: str = WORK, ref: Optional[str] = None, prefix: str = "") -> bytes:
    """The program (mode 0755, its LIB ``work/prefix/lib``) and the module_utils it imports, under ``prefix``
    in the tar (unpacked into ``work``)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        def add(name: str, data: bytes, mode: int = 0o644) -> None:
            info = tarfile.TarInfo(prefix + name)
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))
        add("hpcnet-rdma-check", program_text(os.path.join(work, prefix, "lib"), ref), 0o755)
        for rel in module_utils_files(ref):
            add("lib/%s/%s" % (PACKAGE, rel), source("plugins/module_utils/" + rel, ref))
    return buf.getvalue()


def make_fake(root: str) -> None:
    for rel, text in FAKE.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def local_lib(tmp: str) -> str:
    """A directory whose ansible_collections/hpcnet/rdma is this checkout (as the role installs it)."""
    lib = os.path.join(tmp, "lib")
    os.makedirs(os.path.join(lib, "ansible_collections", "hpcnet"))
    os.symlink(ROOT, os.path.join(lib, "ansible_collections", "hpcnet", "rdma"))
    return lib


def transport(args: argparse.Namespace) -> List[str]:
    """The argv prefix that runs a command on the target and passes stdin through."""
    if args.container:
        return ["docker", "exec", "-i", args.container]
    if args.vm:
        return [sys.executable, LABCTL, "vm", "ssh", "--run", args.vm_run, args.vm]
    return []


def on_target(args: argparse.Namespace, argv: List[str], stdin: bytes) -> subprocess.CompletedProcess:
    prefix = transport(args)
    if args.vm:             # ssh hands the remote shell one command line
        argv = [" ".join(shlex.quote(a) for a in argv)]
    return subprocess.run(prefix + argv, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False,
                          timeout=args.timeout)


def timed(args: argparse.Namespace, checks: List[List[str]], env: Dict[str, str], runs: int, extra: List[str],
          root: str) -> List[List[Dict[str, Any]]]:
    """``runs`` runs of each check, alternated; one list of runs per check.  Each check keeps its own
    counters (state file), so the baseline never judges the counters the other one kept."""
    work = os.path.join(root, WORK.lstrip("/"))
    variants = []
    for index, check in enumerate(checks):
        state = WORK + ("/state.json" if index == 0 else "/state-%d.json" % index)
        argv = check + ["--json", "--state", state, "--metrics-dir", WORK + "/metrics"] + extra
        variants.append(argv + (["--root", root] if root != "/" else []))
    spec = {"runs": runs, "variants": variants, "env": env, "mkdir": [work + "/metrics"]}
    python = sys.executable if not (args.container or args.vm) else "python3"
    proc = on_target(args, [python, "-", json.dumps(spec)], TIMER.encode())
    if proc.returncode != 0:
        sys.exit("the timer failed on the target (rc %d): %s" % (proc.returncode, proc.stderr.decode(errors="replace")[-2000:]))
    return json.loads(proc.stdout.decode())


def summary(runs: List[Dict[str, Any]]) -> Dict[str, Any]:
    walls = sorted(r["wall"] for r in runs)
    cpus = sorted(r["cpu"] for r in runs)
    doc = json.loads(runs[-1]["stdout"] or "{}")
    return {"runs": len(runs), "wall_median_s": statistics.median(walls), "wall_max_s": walls[-1],
            "wall_p90_s": walls[min(len(walls) - 1, int(0.9 * len(walls)))],
            "cpu_median_s": statistics.median(cpus), "rcs": sorted(set(r["rc"] for r in runs)),
            "findings": [(f["code"], f["severity"]) for f in doc.get("findings") or []], "stages": doc.get("stages"),
            "stderr": sorted(set(r["stderr"].strip() for r in runs if r["stderr"].strip()))[:3]}


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--local", action="store_true", help="run the worktree's check on this machine")
    where.add_argument("--container", metavar="NAME", help="a lab container (docker exec)")
    where.add_argument("--vm", metavar="NAME", help="a lab VM (lab/labctl.py vm ssh)")
    p.add_argument("--root", default="/", help="--local: the tree the check reads (default /, this machine)")
    p.add_argument("--fake", action="store_true", help="--local: a fake soft-RoCE node tree in a temp directory")
    p.add_argument("--vm-run", default="lab", help="the lab VM run (lab/labctl.py vm --run; default lab)")
    p.add_argument("--check", default=INSTALLED, help="the installed check on the node (default %(default)s)")
    p.add_argument("--ship", action="store_true", help="copy this worktree's check to %s on the node and run it" % WORK)
    p.add_argument("--baseline", metavar="REF", help="--ship/--local: also the check of git commit REF, runs alternated")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--budget", type=float, default=None, help="--budget for the timed runs (default: the config's, else 2)")
    p.add_argument("--overrun-budget", type=float, default=0.001, help="the tiny budget of the overrun run")
    p.add_argument("--timeout", type=float, default=900, help="seconds for everything on the target")
    p.add_argument("--json", metavar="FILE", help="also write the figures here")
    args = p.parse_args(argv)
    if (args.fake or args.root != "/") and not args.local:
        p.error("--fake and --root are for --local")
    if args.baseline and not (args.ship or args.local):
        p.error("--baseline compares shipped programs: give --ship (or --local)")

    with tempfile.TemporaryDirectory(prefix="hpcnet-health-bench.") as tmp:
        env: Dict[str, str] = {}
        root = "/"
        checks: List[List[str]] = []
        if args.local:
            root = os.path.join(tmp, "node") if args.fake else args.root
            if args.fake:
                make_fake(root)
            target = "local (%s)" % ("fake node " + root if args.fake else "root " + root)
            if args.baseline:       # both shipped into tmp, each with its own LIB, run through their first line
                work = os.path.join(tmp, "ship")
                with tarfile.open(fileobj=io.BytesIO(ship_tar(work)), mode="r") as tar:
                    tar.extractall(work)
                with tarfile.open(fileobj=io.BytesIO(ship_tar(work, args.baseline, "base/")), mode="r") as tar:
                    tar.extractall(work)
                checks = [[work + "/hpcnet-rdma-check"], [work + "/base/hpcnet-rdma-check"]]
            else:
                checks = [[sys.executable, PROGRAM]]
                env["HPCNET_RDMA_LIB"] = local_lib(tmp)
        else:
            checks = [[args.check]]
            if args.ship:
                for ref, prefix in [(None, "")] + ([(args.baseline, "base/")] if args.baseline else []):
                    proc = on_target(args, ["python3", "-c", UNPACK, WORK], ship_tar(WORK, ref, prefix))
                    if proc.returncode != 0:
                        sys.exit("--ship failed: %s" % proc.stderr.decode(errors="replace")[-2000:])
                checks = [[WORK + "/hpcnet-rdma-check"]] + ([[WORK + "/base/hpcnet-rdma-check"]] if args.baseline else [])
            target = ("container " + args.container) if args.container else "VM %s (run %s)" % (args.vm, args.vm_run)
        extra = ["--budget", str(args.budget)] if args.budget else []
        timed(args, checks, env, 1, extra, root)                      # warm-up: bytecode, page cache, first counters
        alternated = timed(args, checks, env, args.runs, extra, root)
        over = timed(args, checks[:1], env, 1, ["--budget", str(args.overrun_budget)], root)[0][0]

    runs = alternated[0]
    figures = summary(runs)
    check = checks[0]
    doc = json.loads(over["stdout"] or "{}")
    named = [f for f in doc.get("findings") or [] if f["code"] == "budget.exceeded"]
    limit = 2 * args.overrun_budget + 0.5 + 1.0        # the watchdog, plus a python start-up
    overrun = {"budget_s": args.overrun_budget, "wall_s": over["wall"], "cpu_s": over["cpu"], "rc": over["rc"],
               "finding": named[0]["evidence"] if named else None, "skipped": doc.get("skipped"),
               "ok": bool(named) and over["wall"] < limit}
    print("hpcnet-rdma-check on %s, %s" % (target, " ".join(check)))
    print("  %d runs: wall median %.3f s (p90 %.3f, max %.3f), CPU median %.3f s; exit %s" % (
        figures["runs"], figures["wall_median_s"], figures["wall_p90_s"], figures["wall_max_s"], figures["cpu_median_s"],
        "/".join(str(rc) for rc in figures["rcs"])))
    print("  stages of the last run (s): %s" % json.dumps(figures["stages"], sort_keys=True))
    print("  findings of the last run: %s" % (", ".join("%s (%s)" % f for f in figures["findings"]) or "none"))
    for line in figures["stderr"]:
        print("  stderr: %s" % line[:300])
    print("  target <= 1 s wall on a lab VM: %s" % ("met" if figures["wall_median_s"] <= 1.0 else "MISSED"))
    base = None
    if args.baseline:
        base = summary(alternated[1])
        base["ratio_wall"] = figures["wall_median_s"] / base["wall_median_s"]
        base["ratio_cpu"] = figures["cpu_median_s"] / base["cpu_median_s"]
        print("  baseline %s, alternated with it: wall median %.3f s (p90 %.3f), CPU median %.3f s; exit %s" % (
            args.baseline, base["wall_median_s"], base["wall_p90_s"], base["cpu_median_s"],
            "/".join(str(rc) for rc in base["rcs"])))
        print("  this / baseline: wall %.2f, CPU %.2f" % (base["ratio_wall"], base["ratio_cpu"]))
    print("  overrun, --budget %g: %.3f s wall, exit %d, %s -> %s" % (
        args.overrun_budget, over["wall"], over["rc"],
        "budget.exceeded: " + overrun["finding"] if named else "NO budget.exceeded finding",
        "named, no hang" if overrun["ok"] else "FAILED (limit %.1f s)" % limit))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"target": target, "check": check, "timed": figures, "overrun": overrun,
                       "baseline": dict(base, ref=args.baseline) if base else None}, f, indent=1, sort_keys=True)
    return 0 if overrun["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
