# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A rollback with keys it cannot restore: it restores all the rest, re-applies nothing, keeps
exactly the unrestored originals in the journal, and a later rollback finishes the job."""
from __future__ import annotations

import json
import os
import shutil

from rlib import ROLLBACK, STATUS, TUNE, clone, forked, journal_entries, read_journal, snapshot


def _sabotage(node: str) -> None:
    # someone else's file in the directory the tune created
    with open(os.path.join(node, "etc/ucx/site.conf"), "w") as f:
        f.write("UCX_NET_DEVICES=mlx5_0:1\n")
    # a sysctl that is gone (its module unloaded): reading it fails
    swap = os.path.join(node, "proc/sys/vm/swappiness")
    os.unlink(swap)
    os.mkdir(swap)
    # a sysctl the kernel silently ignores: the write is accepted, the value reads back empty
    sack = os.path.join(node, "proc/sys/net/ipv4/tcp_sack")
    os.unlink(sack)
    os.symlink("/dev/null", sack)


def _repair(node: str) -> None:
    os.unlink(os.path.join(node, "etc/ucx/site.conf"))
    swap = os.path.join(node, "proc/sys/vm/swappiness")
    os.rmdir(swap)
    with open(swap, "w") as f:
        f.write("10\n")
    os.chmod(swap, 0o644)
    sack = os.path.join(node, "proc/sys/net/ipv4/tcp_sack")
    os.unlink(sack)
    with open(sack, "w") as f:
        f.write("0\n")
    os.chmod(sack, 0o644)


def test_rollback_with_unrestorable_keys_restores_the_rest_and_keeps_them(pristine, work):
    out = os.path.join(work, "out.json")
    node = clone(pristine, os.path.join(work, "node"))
    before = snapshot(node)
    status, results = forked(node, TUNE, out)
    assert status == 0 and [r["rc"] for r in results] == [0, 0]
    _sabotage(node)
    sabotaged = snapshot(node)

    # 1. default on_unrestorable=fail: everything else restored, then the task fails naming each key
    status, (done, state) = forked(node, ROLLBACK + STATUS, out)
    assert done["rc"] == 1 and done["failed"] is True and done["changed"] is True
    unrestorable = dict((u["key"], u["reason"]) for u in done["unrestorable"])
    assert sorted(unrestorable) == ["sysctl:net.ipv4.tcp_sack", "sysctl:vm.swappiness"]
    assert unrestorable["sysctl:vm.swappiness"].startswith("cannot read it: cannot read /proc/sys/vm/swappiness")
    assert unrestorable["sysctl:net.ipv4.tcp_sack"] == "read back '' after writing '1'"
    assert done["msg"].startswith("rollback could not restore 2 key(s), kept in the journal for a later rollback")
    assert "sysctl:vm.swappiness: cannot read it" in done["msg"] and "sysctl:net.ipv4.tcp_sack: read back" in done["msg"]
    assert [r["key"] for r in done["refused"]] == ["dir:/etc/ucx"]
    assert "now holds files it did not write (site.conf); left in place" in done["refused"][0]["reason"]
    restored = sorted(c["key"] for c in done["changes"])
    assert restored == ["file:/etc/old-rdma.conf", "file:/etc/security/limits.d/90-rdma.conf",
                        "file:/etc/sysctl.d/90-hpcnet-rdma.conf", "file:/etc/ucx/ucx.conf",
                        "sysctl:net.ipv4.tcp_rmem"]
    # the node: pristine except what could not be restored (which is as the sabotage left it)
    now = snapshot(node)
    differs = sorted(k for k in set(now) | set(before) if now.get(k) != before.get(k))
    assert differs == ["etc/ucx", "etc/ucx/site.conf", "proc/sys/net/ipv4/tcp_sack", "proc/sys/vm/swappiness"]
    assert all(now[k] == sabotaged[k] for k in differs)
    # the journal keeps exactly the unrestored originals (refused ones included), and says so
    journal = read_journal(node)
    assert dict((k, v["value"]) for k, v in journal["originals"].items()) == {
        "sysctl:vm.swappiness": "60", "sysctl:net.ipv4.tcp_sack": "1", "dir:/etc/ucx": False}
    assert sorted(c["key"] for g in journal["generations"] for c in g["changes"]) == [
        "dir:/etc/ucx", "sysctl:net.ipv4.tcp_sack", "sysctl:vm.swappiness"]
    assert sorted(state["tuned"]) == ["dir:/etc/ucx", "sysctl:net.ipv4.tcp_sack", "sysctl:vm.swappiness"]

    # 2. on_unrestorable=warn: the same keys reported, the task succeeds, nothing re-applied
    warn = [{"module": "tuning_state", "params": {"action": "rollback", "on_unrestorable": "warn"}}]
    status, (done,) = forked(node, warn, out)
    assert done["rc"] == 0 and done["changed"] is False
    assert sorted(u["key"] for u in done["unrestorable"]) == ["sysctl:net.ipv4.tcp_sack", "sysctl:vm.swappiness"]
    assert "rollback could not restore 2 key(s)" in json.dumps(done["warnings"])
    assert snapshot(node) == now and read_journal(node) == journal

    # 3. the node is repaired: the next rollback restores the rest and the journal goes away
    _repair(node)
    status, (done, state) = forked(node, ROLLBACK + STATUS, out)
    assert done["rc"] == 0 and done["unrestorable"] == [] and done["refused"] == []
    assert sorted(c["key"] for c in done["changes"]) == ["dir:/etc/ucx", "sysctl:net.ipv4.tcp_sack", "sysctl:vm.swappiness"]
    assert snapshot(node) == before
    assert journal_entries(node) == ["lock"] and state["tuned"] == {} and state["generations"] == []


def test_rollback_last_with_an_unrestorable_key_keeps_it_in_that_generation(pristine, work):
    out = os.path.join(work, "out.json")
    node = clone(pristine, os.path.join(work, "node"))
    status, results = forked(node, TUNE, out)
    assert status == 0
    shutil.rmtree(os.path.join(node, "etc/security/limits.d"))
    os.makedirs(os.path.join(node, "etc/security/limits.d/90-rdma.conf"))   # now a directory: unreadable
    last = [{"module": "tuning_state", "params": {"action": "rollback", "scope": "last", "on_unrestorable": "warn"}}]
    status, (done,) = forked(node, last, out)
    assert done["rc"] == 0
    assert [u["key"] for u in done["unrestorable"]] == ["file:/etc/security/limits.d/90-rdma.conf"]
    journal = read_journal(node)
    # generation 1 (sysctl_tuning) untouched; generation 2 keeps only the unrestored key
    assert [(g["id"], [c["key"] for c in g["changes"]]) for g in journal["generations"]] == [
        (1, ["sysctl:net.ipv4.tcp_rmem", "sysctl:net.ipv4.tcp_sack", "sysctl:vm.swappiness",
             "file:/etc/sysctl.d/90-hpcnet-rdma.conf"]),
        (2, ["file:/etc/security/limits.d/90-rdma.conf"])]
    assert not os.path.exists(os.path.join(node, "etc/ucx"))   # the rest of generation 2 is undone


def test_rollback_with_no_journal_says_nothing_to_roll_back(pristine, work):
    node = clone(pristine, os.path.join(work, "node"))
    before = snapshot(node)
    status, (done,) = forked(node, ROLLBACK, os.path.join(work, "out.json"))
    assert done["rc"] == 0 and done["changed"] is False
    assert done["msg"] == "nothing to roll back: the journal in /var/lib/hpcnet-rdma records no change"
    assert snapshot(node) == before and journal_entries(node) == []
