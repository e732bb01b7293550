# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""fabric_info's reading cost, before and after a change, on one fake node built from the real captures
(tests/unit/fixtures/real/): the sysfs InfiniBand trees of hfi1, mlx4, mlx5 and i40iw, and the four
checklist tools answering with real ibstat / ibv_devinfo -v / rdma / nvidia-smi outputs (no process is
started: the tool time is the parsers' and the facts' own cost, not the tools').

    python3 benchmarks/fabric_read_cost.py [--before REV] [--repeat 200] [--rounds 5]

REV (default: the merge base with main) is exported with ``git archive`` into a temporary
ansible_collections tree; both trees read the same fake node; the median per-call time of each round
is printed side by side (ms), then the median of the rounds.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, ".."))
REAL = os.path.join(REPO, "tests", "unit", "fixtures", "real")
SEP = "# ttar - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -"

CHILD = r'''
import json, os, sys, time, statistics
sys.path.insert(0, sys.argv[1])
from ansible_collections.hpcnet.rdma.plugins.module_utils.facts import _fabric
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
root, answers, repeat = sys.argv[2], json.loads(open(sys.argv[3]).read()), int(sys.argv[4])
def runner(argv):
    name = os.path.basename(argv[0])
    key = name + ("_dev" if argv[1:3] == ["-j", "dev"] else "")
    return (0, answers[key], "") if key in answers else (1, "", "unknown")
host = Host(root=root, runner=runner, bin_path=lambda name: "/usr/bin/" + name)
tools = ["ibv_devinfo", "rdma", "ibstat", "nvidia-smi"]
_fabric.gather(host, [], tools, False)
times = []
for _ in range(repeat):
    t = time.perf_counter()
    facts = _fabric.gather(host, [], tools, False)
    times.append(time.perf_counter() - t)
ok = sorted(k for k, v in facts["tools"].items() if not (isinstance(v, dict) and "error" in v))
print(json.dumps({"median_ms": 1000 * statistics.median(times), "tools_read": ok, "devices": sorted(facts["devices"])}))
'''


def body(path: str) -> str:
    with open(os.path.join(REAL, path), encoding="utf-8") as f:
        lines = f.read().splitlines(True)
    start = 0
    while start < len(lines) and lines[start].startswith("#"):
        start += 1
    return "".join(lines[start:])


def build_node(root: str) -> None:
    for name in ("hfi1_0.procfs.ttar", "mlx4_0.procfs.ttar", "mlx5_0.procfs.ttar", "i40iw0.node_exporter.ttar"):
        for record in body(os.path.join("sysfs-infiniband", name)).split(SEP + "\n"):
            lines = record.splitlines()
            if not lines or not lines[0].startswith("Path: "):
                continue
            rel = lines[0].split(": ", 1)[1]
            rel = rel[len("fixtures/"):] if rel.startswith("fixtures/") else rel
            text = "".join(line + "\n" for line in lines[2:2 + int(lines[1].split(": ", 1)[1])])
            target = os.path.join(root, rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "w", encoding="utf-8") as f:
                f.write(text[:-4] if text.endswith("EOF\n") else text)
    os.makedirs(os.path.join(root, "sys", "module", "ib_core"), exist_ok=True)
    os.makedirs(os.path.join(root, "proc"), exist_ok=True)


def export(rev: str, dest: str) -> str:
    """``git archive REV`` of the collection under dest/ansible_collections/hpcnet/rdma."""
    target = os.path.join(dest, "ansible_collections", "hpcnet", "rdma")
    os.makedirs(target)
    archive = subprocess.run(["git", "-C", REPO, "archive", rev, "plugins"], check=True, stdout=subprocess.PIPE).stdout
    subprocess.run(["tar", "-x", "-C", target], input=archive, check=True)
    return dest


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", default=None, help="git revision to compare with (default: merge base with main)")
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    before = args.before or subprocess.run(["git", "-C", REPO, "merge-base", "HEAD", "main"], check=True,
                                           stdout=subprocess.PIPE, universal_newlines=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "node")
        build_node(root)
        answers = {"ibstat": body("ibstat/mlx4.cx3.ofed-5.0.ubuntu20.txt") + body("ibstat/mlx5.cx6dx.lshca-79.rate-2.5.txt"),
                   "ibv_devinfo": body("ibv_devinfo/rxe.k8s-62.verbose.txt"),
                   "rdma": body("rdma/link-json.mlx5.reconstructed.json"),
                   "rdma_dev": body("rdma/dev-json.mlx5.reconstructed.json"),
                   "nvidia-smi": body("nvidia-smi/topo-m.a100-nv12.no-gpu-numa-id.mpi-gpu-compress.tabs.txt")}
        answers_file = os.path.join(tmp, "answers.json")
        with open(answers_file, "w", encoding="utf-8") as f:
            json.dump(answers, f)
        trees = {"before (%s)" % before[:10]: export(before, os.path.join(tmp, "before")),
                 "after (worktree)": os.path.join(REPO, "build", "collections")}
        results = dict((label, []) for label in trees)
        for _round in range(args.rounds):   # interleaved, so drift of the machine hits both alike
            for label, path in trees.items():
                out = subprocess.run([sys.executable, "-c", CHILD, path, root, answers_file, str(args.repeat)],
                                     check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout
                results[label].append(json.loads(out))
        print("%-24s %s   %s" % ("", "  ".join("round %d" % (i + 1) for i in range(args.rounds)), "median (ms/call)"))
        for label, runs in results.items():
            print("%-24s %s   %.3f" % (label, "  ".join("%7.3f" % r["median_ms"] for r in runs),
                                       statistics.median(r["median_ms"] for r in runs)))
        for label, runs in results.items():
            print("%s: tools read without error: %s" % (label, ", ".join(runs[-1]["tools_read"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
