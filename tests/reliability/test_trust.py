# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""An untrusted journal directory is refused before anything changes, by every module call.

Whoever can write the journal steers what rollback does as root, and a symlinked lock would
make the run overwrite the link's target.  The suite runs as root, so "another user" is uid 65534.
"""
from __future__ import annotations

import os
import re

import pytest

from rlib import JDIR, ROLLBACK, STATUS, TUNE, clone, forked, journal_entries, snapshot

VICTIM = "etc/shadow-of-the-node"


def _jdir(node: str) -> str:
    return os.path.join(node, JDIR.lstrip("/"))


def _setup(node: str, case: str) -> None:
    jdir = _jdir(node)
    os.makedirs(jdir, 0o700)
    victim = os.path.join(node, VICTIM)
    with open(victim, "w") as f:
        f.write("root:$6$secret:19000:0:99999:7:::\n")
    os.chmod(victim, 0o600)
    if case == "symlinked lock":
        os.symlink(victim, os.path.join(jdir, "lock"))
    elif case == "symlinked journal":
        os.symlink(victim, os.path.join(jdir, "journal.json"))
    elif case == "group-writable directory":
        os.chmod(jdir, 0o770)
    elif case == "directory of another uid":
        os.chown(jdir, 65534, 65534)
    elif case == "parent writable by others":
        os.chmod(os.path.dirname(jdir), 0o777)
    elif case == "journal of another uid":
        with open(os.path.join(jdir, "journal.json"), "w") as f:
            f.write('{"schema": 1, "originals": {}, "generations": [], "next_generation": 1}\n')
        os.chown(os.path.join(jdir, "journal.json"), 65534, 65534)


CASES = {
    "symlinked lock": r"lock .*/var/lib/hpcnet-rdma/lock is a symbolic link; refusing to follow it",
    "symlinked journal": r"journal /var/lib/hpcnet-rdma/journal.json is a symbolic link; refusing to follow it",
    "group-writable directory": r"journal_dir /var/lib/hpcnet-rdma is not trusted: .*/var/lib/hpcnet-rdma is "
                                r"writable by group or others \(mode 0770\)",
    "directory of another uid": r"journal_dir /var/lib/hpcnet-rdma is not trusted: .*/var/lib/hpcnet-rdma is "
                                r"owned by uid 65534, not by root",
    "parent writable by others": r"journal_dir /var/lib/hpcnet-rdma is not trusted: .*/var/lib is writable by "
                                 r"group or others \(mode 0777\) without the sticky bit",
    "journal of another uid": r"journal /var/lib/hpcnet-rdma/journal.json is not trusted: .* is owned by uid 65534",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_untrusted_journal_directory_is_refused_and_nothing_changes(pristine, work, case):
    node = clone(pristine, os.path.join(work, "node"))
    _setup(node, case)
    before = snapshot(node, skip=())
    steps = TUNE + ROLLBACK + STATUS + [dict(TUNE[0], check_mode=True)]
    status, results = forked(node, steps, os.path.join(work, "out.json"))
    assert status == 0 and len(results) == len(steps)
    for i, (step, result) in enumerate(zip(steps, results)):
        if case == "symlinked lock" and i >= len(TUNE):
            # the lock is only taken by a run that writes: a rollback of nothing, status and
            # check mode read a trusted directory and journal and never open it
            assert result["rc"] == 0, (step, result)
            continue
        assert result["rc"] == 1 and result["failed"] is True, (step, result)
        assert re.search(CASES[case], result["msg"]), (step, result["msg"])
    assert snapshot(node, skip=()) == before


def test_root_owned_journal_below_a_sticky_world_writable_directory_is_trusted(pristine, work):
    """/tmp-like: the sticky bit keeps others from renaming or replacing our root-owned entry."""
    node = clone(pristine, os.path.join(work, "node"))
    os.chmod(os.path.join(node, "var/lib"), 0o1777)
    before = snapshot(node)
    status, results = forked(node, TUNE + ROLLBACK, os.path.join(work, "out.json"))
    assert status == 0 and [r["rc"] for r in results] == [0, 0, 0], [r.get("msg") for r in results]
    assert oct(os.stat(_jdir(node)).st_mode & 0o7777) == "0o700"
    assert snapshot(node) == before and journal_entries(node) == ["lock"]
