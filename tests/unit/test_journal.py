# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

import json
import multiprocessing
import os
import time

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils._host import Host, HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils._journal import Journal, JournalError
from ansible_collections.hpcnet.rdma.plugins.module_utils._plan import Plan

JDIR = "/var/lib/hpcnet-rdma"


def _plan(*changes):
    p = Plan()
    for key, before, after in changes:
        p.add(key, before, after)
    return p


@pytest.fixture
def host(tmp_path):
    return Host(root=str(tmp_path))


def test_first_touch_keeps_the_original_forever(host):
    j = Journal(host, JDIR)
    j.load()
    g1 = j.begin("sysctl_tuning", _plan(("sysctl:a", "1", "2"), ("file:/etc/x", None, {"content": "x", "mode": "0644"})))
    j.commit(g1)
    g2 = j.begin("sysctl_tuning", _plan(("sysctl:a", "2", "3"), ("sysctl:b", "7", "8")))
    j.commit(g2)
    again = Journal(host, JDIR)
    again.load()
    assert again.originals() == {"sysctl:a": "1", "file:/etc/x": None, "sysctl:b": "7"}
    assert [g["id"] for g in again.generations()] == [1, 2]
    assert all(g["status"] == "applied" for g in again.generations())
    # all: newest first-touch first; last: the newest generation's befores, reversed
    assert [(c.key, c.after) for c in again.rollback_all_targets()] == [
        ("sysctl:b", "7"), ("file:/etc/x", None), ("sysctl:a", "1")]
    assert [(c.key, c.after) for c in again.rollback_last_targets()] == [("sysctl:b", "7"), ("sysctl:a", "2")]


def test_discard_forgets_the_generation_and_the_originals_it_introduced(host):
    j = Journal(host, JDIR)
    j.commit(j.begin("m", _plan(("sysctl:a", "1", "2"))))
    g2 = j.begin("m", _plan(("sysctl:a", "2", "3"), ("sysctl:b", "7", "8")))
    j.discard(g2)
    assert j.originals() == {"sysctl:a": "1"}
    assert [g["id"] for g in j.generations()] == [1]
    # ids keep increasing: a discarded id is never reused
    assert j.begin("m", _plan(("sysctl:c", "0", "1"))) == 3


def test_clear_removes_the_journal_file(host, tmp_path):
    j = Journal(host, JDIR)
    j.begin("m", _plan(("sysctl:a", "1", "2")))
    assert (tmp_path / "var/lib/hpcnet-rdma/journal.json").exists()
    j.clear()
    assert not (tmp_path / "var/lib/hpcnet-rdma/journal.json").exists()
    assert j.originals() == {}


@pytest.mark.parametrize("content, message", [
    ("{not json", "is corrupt"),
    ("[]", "top level is list"),
    (json.dumps({"schema": 99, "originals": {}, "generations": [], "next_generation": 1}), "schema 99"),
    (json.dumps({"schema": 1, "generations": [], "next_generation": 1}), "'originals' is missing"),
    (json.dumps({"schema": 1, "originals": {"k": 5}, "generations": [], "next_generation": 1}), "original of 'k'"),
    (json.dumps({"schema": 1, "originals": {}, "generations": [{"id": "x"}], "next_generation": 1}), "generation is malformed"),
    ("", "is corrupt"),
])
def test_corrupt_journal_is_a_clear_error_and_left_untouched(host, tmp_path, content, message):
    path = tmp_path / "var/lib/hpcnet-rdma/journal.json"
    path.parent.mkdir(parents=True)
    path.write_text(content)
    with pytest.raises(JournalError, match=message) as e:
        Journal(host, JDIR).load()
    assert "left untouched" in str(e.value)
    assert path.read_text() == content


def test_write_is_atomic_a_failed_rename_keeps_the_old_journal(host, tmp_path, monkeypatch):
    j = Journal(host, JDIR)
    j.begin("m", _plan(("sysctl:a", "1", "2")))
    path = tmp_path / "var/lib/hpcnet-rdma/journal.json"
    old = path.read_text()

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(JournalError, match="No space left"):
        j.begin("m", _plan(("sysctl:b", "1", "2")))
    monkeypatch.undo()
    assert path.read_text() == old
    assert sorted(os.listdir(path.parent)) == ["journal.json"]  # no temp file left behind


def _hold_lock(root, ready, release):
    with Host(root=root).lock(JDIR + "/lock"):
        ready.set()
        release.wait(10)


def test_lock_serializes_concurrent_runs(tmp_path):
    ctx = multiprocessing.get_context("fork")
    ready, release = ctx.Event(), ctx.Event()
    proc = ctx.Process(target=_hold_lock, args=(str(tmp_path), ready, release))
    proc.start()
    try:
        assert ready.wait(10)
        start = time.monotonic()
        with pytest.raises(HostError, match="held by another run"):
            with Host(root=str(tmp_path)).lock(JDIR + "/lock", timeout=0.5):
                pass
        assert time.monotonic() - start >= 0.5
        release.set()
        proc.join(10)
        with Host(root=str(tmp_path)).lock(JDIR + "/lock", timeout=5):
            assert (tmp_path / "var/lib/hpcnet-rdma/lock").read_text().strip() == str(os.getpid())
    finally:
        release.set()
        proc.join(10)
