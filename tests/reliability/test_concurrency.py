# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""16 module runs at once against one node and one journal, each in its own interpreter.

Half of them set the same sysctls to different values (and rewrite the same sysctl.d file), half
write their own file into a directory none of them has created yet.  Every run must succeed (the
lock serializes them), the journal must be valid with one applied generation per run and the
pristine originals, and one rollback must bring the node back byte for byte.
"""
from __future__ import annotations

import json
import os

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._journal import Journal

from rlib import JDIR, ROLLBACK, clone, forked, journal_entries, snapshot, spawn

RUNS = 16


def _steps(i: int):
    if i % 2:
        return [{"module": "managed_files", "params": {"files": [
            {"path": "/etc/hpc/run%02d.conf" % i, "content": "run = %d\n" % i, "mode": "0640"}]}}]
    return [{"module": "sysctl_tuning", "params": {
        "sysctls": {"vm.swappiness": 10 + i, "net.ipv4.tcp_sack": 0}, "context": "host"}}]


def test_sixteen_concurrent_runs_on_one_journal(pristine, work):
    node = clone(pristine, os.path.join(work, "node"))
    before = snapshot(node)
    procs = [spawn(node, _steps(i), os.path.join(work, "job%02d.json" % i)) for i in range(RUNS)]
    results = []
    for i, proc in enumerate(procs):
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, "run %d: %s" % (i, err[-2000:])
        (result,) = [json.loads(line) for line in out.splitlines() if line.strip()]
        assert result["rc"] == 0 and result["changed"] is True, "run %d: %s" % (i, result.get("msg"))
        results.append(result)

    journal = Journal(Host(root=node), JDIR)
    data = journal.load()                      # valid: trusted, every key and value checked
    gens = journal.generations()
    assert len(gens) == RUNS and all(g["status"] == "applied" for g in gens)
    assert sorted(g["id"] for g in gens) == list(range(1, RUNS + 1))
    assert sorted(r["generation"] for r in results) == list(range(1, RUNS + 1))
    assert data["next_generation"] == RUNS + 1
    originals = journal.originals()
    assert originals["sysctl:vm.swappiness"] == "60" and originals["sysctl:net.ipv4.tcp_sack"] == "1"
    assert originals["dir:/etc/hpc"] is False
    assert originals["file:/etc/sysctl.d/90-hpcnet-rdma.conf"]["content"].startswith("# a file that was here before")
    assert sorted(k for k in originals if k.startswith("file:/etc/hpc/")) == \
        ["file:/etc/hpc/run%02d.conf" % i for i in range(1, RUNS, 2)]
    # the node holds the last sysctl run's value: the one of the newest sysctl generation
    last = [g for g in gens if g["module"] == "sysctl_tuning"][-1]
    swap = [c["after"] for c in last["changes"] if c["key"] == "sysctl:vm.swappiness"][0]
    with open(os.path.join(node, "proc/sys/vm/swappiness")) as f:
        assert f.read().strip() == swap
    assert journal_entries(node) == ["journal.json", "lock"]

    status, done = forked(node, ROLLBACK, os.path.join(work, "out.json"))
    assert status == 0 and done[0]["rc"] == 0 and done[0]["unrestorable"] == []
    assert snapshot(node) == before
    assert journal_entries(node) == ["lock"]
