# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""kill -9 at every write of a tune + rollback, then a rerun and an exact rollback.

A clean run of sysctl_tuning + managed_files + tuning_state rollback counts its durable writes
(N).  For each k in 1..N a fresh copy of the pristine node runs the same steps and is SIGKILLed
right before its k-th write.  Then, on two copies of what the kill left:

* rerun: the tune again (the node must equal a cleanly tuned node, no generation may stay
  ``applying``), then rollback (the node must equal the pristine node byte for byte, modes
  included, and the journal directory must hold nothing but its lock);
* rollback straight away: the same exact pristine node — no original may be lost by a kill.
"""
from __future__ import annotations

import os
import shutil
from typing import Any, Dict, List

from rlib import ROLLBACK, STATUS, TUNE, clone, forked, journal_entries, killed, parallel, snapshot


def _ok(results: List[Any], steps: int) -> bool:
    return len(results) == steps and all(r["rc"] == 0 for r in results)


def _diff(a: Dict[str, Any], b: Dict[str, Any]) -> List[str]:
    return sorted("%s: %r != %r" % (k, a.get(k), b.get(k)) for k in set(a) | set(b) if a.get(k) != b.get(k))[:4]


def _after_kill(pristine: str, work: str, k: int, tuned: Dict[str, Any], before: Dict[str, Any]) -> Dict[str, Any]:
    """Kill at write k, recover both ways; the problems found and whether a rerun reconciled."""
    problems: List[str] = []
    out = os.path.join(work, "out-%d.json" % k)
    node = clone(pristine, os.path.join(work, "k%d" % k))
    status, _results = forked(node, TUNE + ROLLBACK, out, kill_at=k)
    if not killed(status):
        return {"problems": ["k=%d: the run was not killed (status %d)" % (k, status)], "reconciled": 0}
    direct = clone(node, node + "-direct")

    status, results = forked(node, TUNE + STATUS, out)
    if status != 0 or not _ok(results, 3):
        return {"problems": ["k=%d: rerun failed: %s" % (k, [r.get("msg") for r in results])], "reconciled": 0}
    reconciled = sum(1 for r in results if r.get("reconciled"))
    if snapshot(node) != tuned:
        problems.append("k=%d: the rerun did not leave the node tuned: %s" % (k, _diff(snapshot(node), tuned)))
    if results[-1]["interrupted"] or any(g["status"] != "applied" for g in results[-1]["generations"]):
        problems.append("k=%d: a generation stayed applying: %s" % (k, results[-1]["generations"]))

    for name, path in (("rerun + rollback", node), ("rollback right after the kill", direct)):
        status, results = forked(path, ROLLBACK + STATUS, out)
        if status != 0 or not _ok(results, 2):
            problems.append("k=%d, %s: failed: %s" % (k, name, [r.get("msg") for r in results]))
            continue
        if snapshot(path) != before:
            problems.append("k=%d, %s: node differs from pristine: %s" % (k, name, _diff(snapshot(path), before)))
        if journal_entries(path) not in ([], ["lock"]):   # [] when killed before the lock existed
            problems.append("k=%d, %s: journal directory holds %s" % (k, name, journal_entries(path)))
        if results[-1]["tuned"] or results[-1]["generations"]:
            problems.append("k=%d, %s: the journal still records %s" % (k, name, results[-1]["tuned"]))
    shutil.rmtree(node)
    shutil.rmtree(direct)
    return {"problems": problems, "reconciled": reconciled}


def test_kill_at_every_write_then_rerun_and_exact_rollback(pristine, work):
    out = os.path.join(work, "out.json")
    before = snapshot(pristine)

    ref = clone(pristine, os.path.join(work, "ref"))
    status, results = forked(ref, TUNE, out)
    assert status == 0 and _ok(results, 2), results
    assert all(r["changed"] for r in results)
    tuned = snapshot(ref)
    assert tuned != before

    counted = clone(pristine, os.path.join(work, "counted"))
    count_file = os.path.join(work, "count")
    status, results = forked(counted, TUNE + ROLLBACK, out, count_file=count_file)
    assert status == 0 and _ok(results, 3), results
    assert snapshot(counted) == before and journal_entries(counted) == ["lock"]
    with open(count_file) as f:
        writes = int(f.read())
    assert writes > 20, "the run made only %d writes: the wrapper does not see them" % writes

    found = parallel(lambda k: _after_kill(pristine, work, k, tuned, before), list(range(1, writes + 1)))
    problems = [p for f in found for p in f["problems"]]
    assert problems == [], "\n".join(problems)
    # kills between a generation's start and its commit happened, and the reruns settled them
    assert sum(f["reconciled"] for f in found) > 0
