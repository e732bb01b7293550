# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The journal on a full disk (issue 30): real module runs on a temp tree whose /var/lib is a small
tmpfs of its own (16 pages), filled to leave a given number of pages free.  tmpfs counts whole pages,
and directories and empty files take none, so "full" and "full at the commit" are exact: the lock
takes one page, the journal's first write one more, and its commit needs a third (the new journal is
written beside the old one before the rename).

A full disk fails naming the path and saying the disk is full (it was a raw ``[Errno 28]``); a disk
that fills between apply and commit reverts what the call applied and says so (it left the change
applied on a failed task); and a failed call that changed nothing leaves no journal directory and
no lock behind."""
from __future__ import annotations

import os
import subprocess
from typing import Iterator

import pytest

from rlib import ROLLBACK, TUNE, clone, forked, snapshot

PAGES = 16


@pytest.fixture
def node(pristine: str, work: str) -> Iterator[str]:
    assert os.geteuid() == 0, "the reliability tier runs as root (mount)"
    root = clone(pristine, os.path.join(work, "node"))
    varlib = os.path.join(root, "var/lib")
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dk,mode=0755" % (PAGES * 4), "tmpfs", varlib],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        pytest.skip("cannot mount a tmpfs here: %s" % proc.stderr.strip())
    try:
        yield root
    finally:
        subprocess.run(["umount", "-l", varlib], capture_output=True, check=False)


def _fill(root: str, free_pages: int) -> str:
    filler = os.path.join(root, "var/lib/filler")
    with open(filler, "wb") as f:
        f.write(b"x" * 4096 * (PAGES - free_pages))
    st = os.statvfs(os.path.join(root, "var/lib"))
    assert st.f_bfree == free_pages, (st.f_bfree, free_pages)
    return filler


def test_a_full_disk_names_the_path_says_it_is_full_and_leaves_nothing(node, work):
    _fill(node, 0)
    before = snapshot(node, skip=())
    status, results = forked(node, TUNE, os.path.join(work, "out.json"))
    assert status == 0 and [r["rc"] for r in results] == [1, 1], results
    for result in results:
        assert result["msg"].startswith("cannot write lock %s/var/lib/hpcnet-rdma/lock: No space left on device - "
                                        "the filesystem holding it is full; free space there and run again" % node), result
    # nothing changed, and no journal directory or lock left behind by the failed calls
    assert snapshot(node, skip=()) == before
    assert sorted(os.listdir(os.path.join(node, "var/lib"))) == ["filler"]


def test_a_disk_that_fills_before_the_commit_reverts_what_the_call_applied(node, work):
    filler = _fill(node, 2)
    before = snapshot(node, skip=())
    status, (result,) = forked(node, TUNE[:1], os.path.join(work, "out.json"))
    assert status == 0 and result["rc"] == 1, result
    msg = result["msg"]
    assert msg.startswith("sysctl_tuning failed and changed nothing: cannot write journal /var/lib/hpcnet-rdma/journal.json: "
                          "No space left on device - the filesystem holding it is full"), msg
    assert ("so the 4 change(s) this call applied were reverted (sysctl:net.ipv4.tcp_rmem, sysctl:net.ipv4.tcp_sack, "
            "sysctl:vm.swappiness, file:/etc/sysctl.d/90-hpcnet-rdma.conf)") in msg, msg
    # every value and file as before, and no journal, lock or directory left
    assert snapshot(node, skip=()) == before
    assert sorted(os.listdir(os.path.join(node, "var/lib"))) == ["filler"]
    # with space again, the same tune applies and rolls back exactly
    os.unlink(filler)
    pristine = snapshot(node, skip=())
    status, results = forked(node, TUNE + ROLLBACK, os.path.join(work, "out.json"))
    assert [r["rc"] for r in results] == [0, 0, 0], [r.get("msg") for r in results]
    assert snapshot(node) == dict((k, v) for k, v in pristine.items() if not k.startswith("var/lib/hpcnet-rdma"))
