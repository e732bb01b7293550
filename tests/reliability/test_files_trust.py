# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""managed_files under hostile state and on targets it must never take (issue 30), real module runs
on a temp tree.  The journal's trust rule holds for every directory a file is written through: a
directory or symbolic link another user controls is refused (unless that user owns the file) and
nothing is written where it points; the collection's own journal and lock, /proc, /sys and /dev are
refused before anything changes.  The suite runs as root, so "another user" is uid 65534."""
from __future__ import annotations

import os

import pytest

from rlib import JDIR, ROLLBACK, TUNE, clone, forked, journal_entries, snapshot

NOBODY = 65534
VICTIM = "etc/victim"          # a root-only directory another user wants root to write into


def _files(path, content="UCX_TLS=rc,sm\n", **kw):
    return [{"module": "managed_files", "params": dict({"files": [dict({"path": path, "content": content}, **kw)]})}]


def _plant(node: str, case: str) -> str:
    """The hostile state of ``case``; returns the managed path that goes through it."""
    victim = os.path.join(node, VICTIM)
    os.makedirs(victim, 0o700)
    with open(os.path.join(victim, "ucx.conf"), "w") as f:
        f.write("root's own file\n")
    etc = os.path.join(node, "etc")
    if case == "symlink of another user":
        os.symlink(victim, os.path.join(etc, "ucx"))
        os.lchown(os.path.join(etc, "ucx"), NOBODY, NOBODY)
        return "/etc/ucx/ucx.conf"
    if case == "symlink of another user, deeper":
        os.makedirs(os.path.join(etc, "hpc"), 0o755)
        os.symlink("../victim", os.path.join(etc, "hpc", "conf.d"))
        os.lchown(os.path.join(etc, "hpc", "conf.d"), NOBODY, NOBODY)
        return "/etc/hpc/conf.d/ucx.conf"
    if case == "directory of another user":
        os.makedirs(os.path.join(etc, "ucx"), 0o755)
        os.chown(os.path.join(etc, "ucx"), NOBODY, NOBODY)
        return "/etc/ucx/ucx.conf"
    if case == "directory of another user above a missing one":
        os.makedirs(os.path.join(etc, "site"), 0o755)
        os.chown(os.path.join(etc, "site"), NOBODY, NOBODY)
        return "/etc/site/ucx/ucx.conf"
    if case == "group-writable directory":
        os.makedirs(os.path.join(etc, "ucx"), 0o775)
        os.chmod(os.path.join(etc, "ucx"), 0o775)
        return "/etc/ucx/ucx.conf"
    raise AssertionError(case)


CASES = {
    "symlink of another user": r"refusing to read /etc/ucx/ucx.conf: symbolic link .*/etc/ucx is owned by uid 65534, "
                               r"not by root; whoever can change a directory or symbolic link on the way",
    "symlink of another user, deeper": r"refusing to read /etc/hpc/conf.d/ucx.conf: symbolic link .*/etc/hpc/conf.d is "
                                       r"owned by uid 65534, not by root",
    "directory of another user": r"refusing to read /etc/ucx/ucx.conf: .*/etc/ucx is owned by uid 65534, not by root",
    "directory of another user above a missing one": r"refusing to read /etc/site/ucx/ucx.conf: .*/etc/site is owned "
                                                     r"by uid 65534, not by root",
    "group-writable directory": r"refusing to read /etc/ucx/ucx.conf: .*/etc/ucx is writable by group or others "
                                r"\(mode 0775\) without the sticky bit",
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("check", [False, True], ids=["apply", "check"])
def test_a_directory_another_user_controls_is_refused_and_nothing_is_written(pristine, work, case, check):
    import re
    node = clone(pristine, os.path.join(work, "node"))
    path = _plant(node, case)
    before = snapshot(node, skip=())
    steps = [dict(s, check_mode=check) for s in _files(path) + _files(path, state="absent", content=None)]
    status, results = forked(node, steps, os.path.join(work, "out.json"))
    assert status == 0 and [r["rc"] for r in results] == [1, 1], results
    for result in results:
        assert re.search(CASES[case], result["msg"]), result["msg"]
    assert snapshot(node, skip=()) == before       # the victim's file, every mode and owner, no journal
    assert journal_entries(node) == []


def test_a_symlink_of_root_is_followed_and_a_users_own_file_in_their_directory_is_managed(pristine, work):
    """The controls: the rule refuses what another user controls, not links or home directories."""
    node = clone(pristine, os.path.join(work, "node"))
    os.makedirs(os.path.join(node, "etc/ucx.d"), 0o755)
    os.symlink("ucx.d", os.path.join(node, "etc/ucx"))                  # root's link
    home = os.path.join(node, "home/nobody")
    os.makedirs(home, 0o755)
    os.chown(home, NOBODY, NOBODY)
    with open(os.path.join(home, "ucx.conf"), "w") as f:
        f.write("nobody's\n")
    os.chown(os.path.join(home, "ucx.conf"), NOBODY, NOBODY)
    before = snapshot(node)
    steps = [{"module": "managed_files", "params": {"files": [
        {"path": "/etc/ucx/ucx.conf", "content": "UCX_TLS=rc\n"},
        {"path": "/home/nobody/ucx.conf", "content": "UCX_TLS=rc\n"}]}}]
    status, results = forked(node, steps + ROLLBACK, os.path.join(work, "out.json"))
    assert status == 0 and [r["rc"] for r in results] == [0, 0], [r.get("msg") for r in results]
    assert results[0]["changed"] and sorted(c["key"] for c in results[0]["changes"]) == [
        "file:/etc/ucx/ucx.conf", "file:/home/nobody/ucx.conf"]
    assert snapshot(node) == before


@pytest.mark.parametrize("path, words", [
    (JDIR + "/journal.json", "files[0].path: /var/lib/hpcnet-rdma/journal.json is inside the journal directory "
                             "/var/lib/hpcnet-rdma (journal.json, its lock, its temp files), which only the collection "
                             "writes; allowed: paths outside it"),
    (JDIR + "/lock", "files[0].path: /var/lib/hpcnet-rdma/lock is inside the journal directory /var/lib/hpcnet-rdma"),
    ("/srv/j/journal.json", "files[0].path: /srv/j/journal.json is inside the journal directory /var/lib/hpcnet-rdma"),
    ("/proc/sys/vm/swappiness", "files[0].path: /proc/sys/vm/swappiness is in /proc, a kernel or device filesystem, "
                                "not a file managed_files can replace; allowed: paths outside /proc, /sys, /dev "
                                "(sysctl_tuning sets /proc/sys values)"),
    ("/sys/class/net/eth0/mtu", "files[0].path: /sys/class/net/eth0/mtu is in /sys, a kernel or device filesystem"),
    ("/dev/null", "files[0].path: /dev/null is in /dev, a kernel or device filesystem"),
])
def test_the_journal_and_kernel_filesystems_are_never_targets(pristine, work, path, words):
    node = clone(pristine, os.path.join(work, "node"))
    status, results = forked(node, TUNE, os.path.join(work, "tune.json"))   # a journal and a lock exist
    assert [r["rc"] for r in results] == [0, 0]
    os.makedirs(os.path.join(node, "srv"), 0o755)
    os.symlink("../var/lib/hpcnet-rdma", os.path.join(node, "srv/j"))       # the journal behind a link of root
    before = snapshot(node, skip=())
    steps = [dict(s, check_mode=check) for check in (True, False)
             for s in _files(path, content="{}\n") + _files(path, state="absent", content=None)]
    status, results = forked(node, steps, os.path.join(work, "out.json"))
    assert status == 0 and [r["rc"] for r in results] == [1, 1, 1, 1], results
    for result in results:
        assert result["msg"].startswith(words), result["msg"]
    assert snapshot(node, skip=()) == before
