# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The Transaction's one journal lock: taken once and held until the call ends; a failed call that
left no journal removes the lock file and the directories it made, a call that succeeded keeps them.
(node_tuning's steps under it: tests/unit/plugins/modules/test_node_tuning.py.)"""
from __future__ import annotations

import os

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._transaction import Transaction
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host

JDIR = "/var/lib/hpcnet-rdma"


def test_the_lock_is_taken_once_and_held_until_release(tmp_path):
    host = Host(root=str(tmp_path))
    t = Transaction(host, JDIR)
    assert t.holds(JDIR + "/lock") and not t.holds("/elsewhere/lock")
    t.lock()
    t.lock()   # once: a second flock on a new descriptor would wait for the first
    with pytest.raises(HostError, match="is held by another run"):
        with Host(root=str(tmp_path)).lock(JDIR + "/lock", timeout=0.2):
            pass
    t.release(failed=False)
    with Host(root=str(tmp_path)).lock(JDIR + "/lock", timeout=0.2):
        pass
    assert os.path.exists(str(tmp_path / "var/lib/hpcnet-rdma/lock"))


def test_a_failed_call_that_left_no_journal_leaves_no_lock_and_no_directory_it_made(tmp_path):
    (tmp_path / "var").mkdir()
    t = Transaction(Host(root=str(tmp_path)), JDIR)
    t.lock()
    t.release(failed=True)
    assert os.listdir(str(tmp_path / "var")) == []
    t.release(failed=True)   # twice: nothing more


def test_a_failed_call_keeps_a_lock_file_it_found(tmp_path):
    jdir = tmp_path / "var/lib/hpcnet-rdma"
    jdir.mkdir(parents=True, mode=0o700)
    (jdir / "lock").write_text("")
    os.chmod(str(jdir / "lock"), 0o600)
    t = Transaction(Host(root=str(tmp_path)), JDIR)
    t.lock()
    t.release(failed=True)
    assert os.listdir(str(jdir)) == ["lock"]


def test_a_journal_directory_that_cannot_be_made_is_named(tmp_path):
    (tmp_path / "var").write_text("a file, not a directory")
    t = Transaction(Host(root=str(tmp_path)), JDIR)
    with pytest.raises(HostError, match="journal_dir: /var/lib/hpcnet-rdma cannot hold the journal"):
        t.lock()
    t.release(failed=True)
    assert (tmp_path / "var").read_text() == "a file, not a directory"
