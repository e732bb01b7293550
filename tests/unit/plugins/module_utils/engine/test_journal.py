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

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._journal import Journal
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._journal_schema import JournalError
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Plan

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
    ("[" * 100000, "is corrupt"),      # deeper than json's decoder follows: RecursionError, not ValueError
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


# ---------------------------------------------------------------- schema: every key and value
def _journal(originals=None, generations=None, next_generation=None):
    originals = originals or {}
    generations = generations or []
    if next_generation is None:
        next_generation = max([g.get("id", 0) if isinstance(g, dict) and isinstance(g.get("id"), int) else 0
                               for g in generations] + [0]) + 1
    return json.dumps({"schema": 1, "originals": originals, "generations": generations,
                       "next_generation": next_generation})


def _gen(changes, gid=1, status="applied"):
    return {"id": gid, "module": "m", "status": status, "time": "2026-01-01T00:00:00Z", "changes": changes}


@pytest.mark.parametrize("content, message", [
    (_journal({"bogus:x": {"value": 1, "generation": 1, "seq": 0}}), "unknown prefix 'bogus'"),
    (_journal({"sysctl": {"value": 1, "generation": 1, "seq": 0}}), "is not PREFIX:TARGET"),
    (_journal({"sysctl:a\nb": {"value": 1, "generation": 1, "seq": 0}}), "is not PREFIX:TARGET"),
    (_journal({"file:etc/x": {"value": None, "generation": 1, "seq": 0}}), "absolute, normalised path"),
    (_journal({"file:/etc/../shadow": {"value": None, "generation": 1, "seq": 0}}), "absolute, normalised path"),
    (_journal({"dir:/etc/x/": {"value": False, "generation": 1, "seq": 0}}), "absolute, normalised path"),
    (_journal({"sysctl:a": {"value": "1", "generation": 1, "seq": -1}}), "seq -1"),
    (_journal({"sysctl:a": {"value": "1", "generation": 1, "seq": True}}), "seq True"),
    (_journal({"sysctl:a": {"value": "1", "generation": "1", "seq": 0}}), "generation '1'"),
    (_journal({"sysctl:a": {"value": "1", "generation": 1, "seq": 0, "extra": 1}}), "unknown field"),
    (_journal({"dir:/etc/x": {"value": "yes", "generation": 1, "seq": 0}}), "dir: value must be true or false"),
    (_journal({"file:/etc/x": {"value": "text", "generation": 1, "seq": 0}}), "file: value must be null or an object"),
    (_journal({"file:/etc/x": {"value": {"content": 5}, "generation": 1, "seq": 0}}), "'content' must be a str"),
    (_journal({"file:/etc/x": {"value": {"content": "", "mode": "rwx"}, "generation": 1, "seq": 0}}),
     "mode 'rwx' is not an octal mode"),
    (_journal({"file:/etc/x": {"value": {"content": "", "encoding": "rot13"}, "generation": 1, "seq": 0}}),
     "file encoding 'rot13' is not base64"),
    (_journal({"file:/etc/x": {"value": {"content": "", "uid": -1}, "generation": 1, "seq": 0}}), "file uid -1 is not an id"),
    (_journal({"file:/etc/x": {"value": {"content": "", "gid": "root"}, "generation": 1, "seq": 0}}),
     "file field 'gid' must be a int"),
    (_journal({}, [_gen([], status="done")]), "status 'done'"),
    (_journal({}, [_gen([]), _gen([])], 3), "id 1 appears twice"),
    (_journal({}, [_gen([])], 1), "not below next_generation"),
    (_journal({}, [_gen([{"key": "sysctl:a", "before": "1"}])]), "lacks after"),
    (_journal({}, [_gen([{"key": "nope:a", "before": "1", "after": "2"}])]), "unknown prefix 'nope'"),
    (_journal({}, [dict(_gen([]), owner="x")]), "unknown field"),
    (_journal({}, [dict(_gen([]), run=7)]), "run must be a string"),
    (_journal({}, [dict(_gen([]), scope=["tuning.nic"])]), "scope must be a string"),
    (json.dumps({"schema": 1, "originals": {}, "generations": [], "next_generation": 1, "x": 1}),
     "unknown top-level field"),
    (json.dumps({"schema": 1, "originals": {}, "generations": [], "next_generation": True}),
     "'next_generation' is missing or not a int"),
])
def test_every_key_and_value_is_validated_on_load(host, tmp_path, content, message):
    path = tmp_path / "var/lib/hpcnet-rdma/journal.json"
    path.parent.mkdir(parents=True, mode=0o700)
    path.write_text(content)
    with pytest.raises(JournalError, match=message) as e:
        Journal(host, JDIR).load()
    assert "left untouched" in str(e.value)
    assert path.read_text() == content


def test_rollback_last_covers_the_whole_newest_run(host):
    j = Journal(host, JDIR)
    j.commit(j.begin("m", _plan(("sysctl:a", "1", "2")), run="r1"))
    j.commit(j.begin("m", _plan(("sysctl:a", "2", "3"), ("sysctl:b", "1", "2")), run="r2", scope="s"))
    j.commit(j.begin("n", _plan(("sysctl:a", "3", "4"), ("nic:x:mtu", 1500, 9000)), run="r2"))
    assert [g["id"] for g in j.last_run()] == [2, 3]
    # newest change first; sysctl:a goes back to its value before the run's first change of it
    assert [(c.key, c.after) for c in j.rollback_last_targets()] == [
        ("nic:x:mtu", 1500), ("sysctl:a", "2"), ("sysctl:b", "1")]
    assert [(c.key, c.after) for c in j.released("m", "s", ["sysctl:a"])] == [("sysctl:b", "1")]
    assert j.released("n", "s", []) == [] and j.released("m", "other", []) == []
    j.restored(["nic:x:mtu", "sysctl:a", "sysctl:b"], [2, 3])
    assert [g["id"] for g in j.generations()] == [1] and sorted(j.originals()) == ["sysctl:a"]
    j.commit(j.begin("m", _plan(("sysctl:c", "1", "2"))))          # no run: a run of its own
    assert [g["id"] for g in j.last_run()] == [4]


def test_a_journal_the_collection_writes_passes_its_own_validation(host):
    j = Journal(host, JDIR)
    g = j.begin("m", _plan(("dir:/etc/ucx", False, True),
                           ("file:/etc/ucx/ucx.conf", None, {"content": "x\n", "mode": "0644", "notify": "u"}),
                           ("file:/etc/bin.conf", {"content": "/w==", "encoding": "base64", "mode": "0640",
                                                   "uid": 65534, "gid": 65534, "selinux": "system_u:object_r:etc_t:s0"},
                            {"content": "x", "mode": "0644"}),
                           ("nic:data0:mtu", 1500, 9000), ("pkg:rdma-core", "absent", "installed")))
    j.commit(g)
    again = Journal(host, JDIR)
    again.load()
    assert again.data == j.data


# ---------------------------------------------------------------- trust of the directory and files
def _prepare(tmp_path, mode=0o700):
    jdir = tmp_path / "var/lib/hpcnet-rdma"
    jdir.mkdir(parents=True)
    os.chmod(jdir, mode)
    return jdir


@pytest.mark.parametrize("case, message", [
    ("group-writable", r"hpcnet-rdma is writable by group or others \(mode 0770\)"),
    ("world-writable-sticky", r"hpcnet-rdma is writable by group or others \(mode 1777\)"),
    ("parent-writable", r"lib is writable by group or others \(mode 0777\) without the sticky bit"),
    ("foreign-owner", r"hpcnet-rdma is owned by uid 65534, not by root"),
    ("foreign-parent", r"var is owned by uid 65534, not by root"),
    ("foreign-symlink", r"symbolic link .*/var/lib/hpcnet-rdma is owned by uid 65534"),
])
def test_untrusted_journal_directory_is_refused(host, tmp_path, case, message):
    jdir = _prepare(tmp_path)
    if case == "group-writable":
        os.chmod(jdir, 0o770)
    elif case == "world-writable-sticky":
        os.chmod(jdir, 0o1777)
    elif case == "parent-writable":
        os.chmod(jdir.parent, 0o777)
    elif case == "foreign-owner":
        os.chown(jdir, 65534, 65534)
    elif case == "foreign-parent":
        os.chown(jdir.parent.parent, 65534, 65534)
    elif case == "foreign-symlink":
        real = tmp_path / "real"
        jdir.rename(real)
        os.symlink(str(real), str(jdir))
        os.lchown(str(jdir), 65534, 65534)
    with pytest.raises(JournalError, match="journal_dir /var/lib/hpcnet-rdma is not trusted: .*" + message):
        Journal(host, JDIR).load()


def test_sticky_parent_and_root_symlink_are_trusted(host, tmp_path):
    """A journal below a root-owned sticky directory (/tmp-like) is fine: nobody else can rename
    or replace the root-owned entry below it.  So is a root-owned symlink to a trusted directory."""
    jdir = _prepare(tmp_path)
    os.chmod(jdir.parent, 0o1777)
    Journal(host, JDIR).load()
    real = tmp_path / "real"
    os.chmod(jdir.parent, 0o755)
    jdir.rename(real)
    os.symlink("../../real", str(jdir))
    j = Journal(host, JDIR)
    j.commit(j.begin("m", _plan(("sysctl:a", "1", "2"))))
    assert (real / "journal.json").exists()


def test_missing_journal_directory_is_created_0700_and_trusted(host, tmp_path):
    old = os.umask(0)
    try:
        j = Journal(host, JDIR)
        j.begin("m", _plan(("sysctl:a", "1", "2")))
    finally:
        os.umask(old)
    for d in ("var", "var/lib", "var/lib/hpcnet-rdma"):
        assert oct(os.stat(tmp_path / d).st_mode & 0o7777) == "0o700", d
    assert oct(os.stat(tmp_path / "var/lib/hpcnet-rdma/journal.json").st_mode & 0o777) == "0o600"


def test_symlinked_journal_file_is_refused_and_left_untouched(host, tmp_path):
    jdir = _prepare(tmp_path)
    victim = tmp_path / "victim"
    victim.write_text(_journal())
    os.symlink(str(victim), str(jdir / "journal.json"))
    with pytest.raises(JournalError, match="journal.json is a symbolic link; refusing to follow it"):
        Journal(host, JDIR).load()
    assert victim.read_text() == _journal() and os.path.islink(str(jdir / "journal.json"))


@pytest.mark.parametrize("mode, owner, message", [
    (0o620, 0, r"writable by group or others \(mode 0620\)"),
    (0o600, 65534, "owned by uid 65534"),
])
def test_untrusted_journal_file_is_refused(host, tmp_path, mode, owner, message):
    jdir = _prepare(tmp_path)
    path = jdir / "journal.json"
    path.write_text(_journal())
    os.chmod(path, mode)
    os.chown(path, owner, 0)
    with pytest.raises(JournalError, match="journal.json is not trusted: .*" + message):
        Journal(host, JDIR).load()


def test_symlinked_lock_is_refused_and_its_target_untouched(tmp_path):
    jdir = _prepare(tmp_path)
    victim = tmp_path / "etc-shadow"
    victim.write_text("root:x:0:\n")
    os.symlink(str(victim), str(jdir / "lock"))
    with pytest.raises(HostError, match="lock .* is a symbolic link; refusing to follow it"):
        with Host(root=str(tmp_path)).lock(JDIR + "/lock"):
            pass
    assert victim.read_text() == "root:x:0:\n"


def test_foreign_lock_file_is_refused(tmp_path):
    jdir = _prepare(tmp_path)
    (jdir / "lock").write_text("")
    os.chmod(jdir / "lock", 0o666)
    with pytest.raises(HostError, match=r"lock .* is not trusted: writable by group or others \(mode 0666\)"):
        with Host(root=str(tmp_path)).lock(JDIR + "/lock"):
            pass


# ---------------------------------------------------------------- empty journals, sweep, reconcile, partial rollback
def test_a_journal_left_empty_is_removed_not_written(host, tmp_path):
    j = Journal(host, JDIR)
    g = j.begin("m", _plan(("sysctl:a", "1", "2")))
    j.discard(g)
    assert not (tmp_path / "var/lib/hpcnet-rdma/journal.json").exists()
    assert Journal(host, JDIR).load()["generations"] == []


def test_sweep_removes_only_journal_temp_files(host, tmp_path):
    jdir = _prepare(tmp_path)
    (jdir / ".journal-abc.tmp").write_text("{")
    (jdir / "notes.tmp").write_text("x")
    assert Journal(host, JDIR).sweep() == [".journal-abc.tmp"]
    assert sorted(os.listdir(jdir)) == ["notes.tmp"]


def test_reconcile_keeps_what_reached_the_node_and_every_original(host):
    j = Journal(host, JDIR)
    j.commit(j.begin("m", _plan(("sysctl:a", "1", "2"))))
    g2 = j.begin("m", _plan(("sysctl:a", "2", "3"), ("sysctl:b", "7", "8"), ("sysctl:c", "0", "1")))
    assert [g["id"] for g in j.interrupted()] == [g2]
    j.reconcile(g2, ["sysctl:a", "sysctl:c"])
    again = Journal(host, JDIR)
    again.load()
    gen = again.generations()[-1]
    assert gen["status"] == "applied" and gen["reconciled"] and [c["key"] for c in gen["changes"]] == ["sysctl:b"]
    # a's original belongs to generation 1 and stays; c was never changed, so its original goes
    assert again.originals() == {"sysctl:a": "1", "sysctl:b": "7"}
    assert again.interrupted() == []


def test_reconcile_of_a_generation_that_changed_nothing_removes_it(host, tmp_path):
    j = Journal(host, JDIR)
    g = j.begin("m", _plan(("sysctl:a", "1", "2")))
    j.reconcile(g, ["sysctl:a"])
    assert not (tmp_path / "var/lib/hpcnet-rdma/journal.json").exists()


def test_partial_rollback_keeps_exactly_the_unrestored_originals(host):
    j = Journal(host, JDIR)
    j.commit(j.begin("m", _plan(("sysctl:a", "1", "2"), ("nic:gone:mtu", 1500, 9000))))
    j.commit(j.begin("m", _plan(("sysctl:b", "7", "8"), ("nic:gone:mtu", 9000, 4000))))
    j.restored(["sysctl:a", "sysctl:b"])
    assert j.originals() == {"nic:gone:mtu": 1500}
    assert [(g["id"], [c["key"] for c in g["changes"]]) for g in j.generations()] == [
        (1, ["nic:gone:mtu"]), (2, ["nic:gone:mtu"])]
    j.restored(["nic:gone:mtu"])
    assert j.is_empty()


def test_partial_rollback_of_the_last_generation(host):
    j = Journal(host, JDIR)
    j.commit(j.begin("m", _plan(("sysctl:a", "1", "2"))))
    j.commit(j.begin("m", _plan(("sysctl:a", "2", "3"), ("sysctl:b", "7", "8"), ("kmod:ib_core", "absent", "loaded"))))
    j.restored(["sysctl:a", "sysctl:b"], gen_ids=[2])
    assert j.originals() == {"sysctl:a": "1", "kmod:ib_core": "absent"}
    assert [(g["id"], [c["key"] for c in g["changes"]]) for g in j.generations()] == [
        (1, ["sysctl:a"]), (2, ["kmod:ib_core"])]
    j.restored(["kmod:ib_core"], gen_ids=[2])
    assert [g["id"] for g in j.generations()] == [1] and j.originals() == {"sysctl:a": "1"}


# ---------------------------------------------------------------- through the modules (fake node)
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _journal as journal_module  # noqa: E402
from ansible_collections.hpcnet.rdma.plugins.modules import nic_tuning, sysctl_tuning, tuning_state  # noqa: E402

from ....conftest import Failed, FakeModule, veth  # noqa: E402


@pytest.fixture
def tuned(node):
    node.sysctl("vm.swappiness", "60")
    node.sysctl("net.ipv4.tcp_sack", "1")
    node.add_nic(veth("data0"))
    return node


def _sysctl(node, check=False, **sysctls):
    params = {"sysctls": sysctls or {"vm.swappiness": 10, "net.ipv4.tcp_sack": 0}, "context": "host", "mode": "runtime"}
    m = FakeModule(sysctl_tuning.ARGUMENT_SPEC, params, check_mode=check)
    return sysctl_tuning.run(m, node.host()), m


def _nic(node):
    m = FakeModule(nic_tuning.ARGUMENT_SPEC, {"interfaces": [{"name": "data0", "mtu": 9000}], "mode": "runtime",
                                              "management_connection": "none"})   # no connection to guard
    return nic_tuning.run(m, node.host())


def _state(node, check=False, **params):
    m = FakeModule(tuning_state.ARGUMENT_SPEC, params, check_mode=check)
    return tuning_state.run(m, node.host()), m


def _journal_file(node):
    return node.path(JDIR + "/journal.json")


def test_rollback_restores_the_rest_when_an_interface_was_removed(tuned):
    _sysctl(tuned)
    _nic(tuned)
    del tuned.nics["data0"]                                   # the interface is gone
    os.unlink(tuned.path("/sys/class/net/data0/mtu"))
    with pytest.raises(Failed) as e:
        _state(tuned, action="rollback")
    assert e.value.msg == ("rollback could not restore 1 key(s), kept in the journal for a later rollback: "
                           "nic:data0:mtu: cannot read it: interface data0 does not exist")
    assert e.value.result["unrestorable"] == [{"key": "nic:data0:mtu",
                                               "reason": "cannot read it: interface data0 does not exist"}]
    assert e.value.result["changed"] is True
    assert tuned.read("/proc/sys/vm/swappiness") == "60" and tuned.read("/proc/sys/net/ipv4/tcp_sack") == "1"
    j = Journal(tuned.host(), JDIR)
    assert j.originals() == {"nic:data0:mtu": 1500}
    assert [[c["key"] for c in g["changes"]] for g in j.generations()] == [["nic:data0:mtu"]]
    # warn: the same report, no failure, nothing re-applied
    out, m = _state(tuned, action="rollback", on_unrestorable="warn")
    assert out["changed"] is False and [u["key"] for u in out["unrestorable"]] == ["nic:data0:mtu"]
    assert m.warnings == [out["msg"]] and tuned.read("/proc/sys/vm/swappiness") == "60"
    # the interface is back (with the tuned MTU): the next rollback finishes and clears the journal
    tuned.add_nic(veth("data0", mtu=9000))
    out, _m = _state(tuned, action="rollback")
    assert [c["key"] for c in out["changes"]] == ["nic:data0:mtu"] and tuned.nics["data0"].mtu == 1500
    assert not os.path.exists(_journal_file(tuned))


def test_rollback_in_check_mode_predicts_the_unrestorable_key(tuned):
    _nic(tuned)
    os.unlink(tuned.path("/sys/class/net/data0/mtu"))
    with pytest.raises(Failed, match="nic:data0:mtu: cannot read it"):
        _state(tuned, check=True, action="rollback")
    out, _m = _state(tuned, check=True, action="rollback", on_unrestorable="warn")
    assert [u["key"] for u in out["unrestorable"]] == ["nic:data0:mtu"]
    assert Journal(tuned.host(), JDIR).originals() == {"nic:data0:mtu": 1500}


def test_rollback_without_a_journal_says_nothing_to_roll_back(tuned):
    before = tuned.snapshot()
    out, _m = _state(tuned, action="rollback")
    assert out["changed"] is False and out["changes"] == []
    assert out["msg"] == "nothing to roll back: the journal in /var/lib/hpcnet-rdma records no change"
    assert tuned.snapshot() == before


def test_a_failed_call_that_changed_nothing_leaves_no_journal(tuned):
    tuned.fail_on = "mtu 9000"
    with pytest.raises(Failed, match="changed nothing"):
        _nic(tuned)
    assert not os.path.exists(_journal_file(tuned))
    # issue 30: nor the journal directory and lock the call created (it was a lock file left behind)
    assert not os.path.exists(tuned.path(JDIR))


class _Killed(BaseException):
    """Stands for SIGKILL in-process: nothing in the engine catches a BaseException."""


def _killed_before_commit(node, monkeypatch, call):
    def die(self, gen_id):
        raise _Killed()
    monkeypatch.setattr(journal_module.Journal, "commit", die)
    with pytest.raises(_Killed):
        call()
    monkeypatch.undo()


def test_a_run_killed_before_its_commit_is_reconciled_by_the_next_locked_run(tuned, monkeypatch):
    _sysctl(tuned, **{"vm.swappiness": 5})
    _killed_before_commit(tuned, monkeypatch, lambda: _sysctl(tuned))
    tuned.write("/proc/sys/net/ipv4/tcp_sack", "1\n")   # as if killed before this key was written
    out, m = _state(tuned, action="status")
    assert out["interrupted"] == [{"id": 2, "module": "sysctl_tuning", "time": out["generations"][1]["time"]}]
    assert "generation 2 (sysctl_tuning" in out["msg"] and "the next run that takes the journal lock reconciles it" \
        in out["msg"] and m.warnings == [out["msg"]]
    # check mode only says so: it writes nothing
    before = open(_journal_file(tuned)).read()
    predicted, m = _sysctl(tuned, check=True)
    assert open(_journal_file(tuned)).read() == before and any("was interrupted" in w for w in m.warnings)
    # any locked run reconciles: swappiness was applied (kept), tcp_sack never changed (dropped)
    out, m = _sysctl(tuned, **{"vm.swappiness": 10})
    assert out["changed"] is False
    assert out["reconciled"] == [{"generation": 2, "module": "sysctl_tuning", "kept": ["sysctl:vm.swappiness"],
                                  "dropped": ["sysctl:net.ipv4.tcp_sack"]}]
    status, _m = _state(tuned, action="status")
    assert status["interrupted"] == [] and "msg" not in status
    assert [(g["id"], g["status"], g["keys"], bool(g.get("reconciled"))) for g in status["generations"]] == [
        (1, "applied", ["sysctl:vm.swappiness"], False), (2, "applied", ["sysctl:vm.swappiness"], True)]
    # originals were never lost: rollback brings back the pristine values
    _state(tuned, action="rollback")
    assert tuned.read("/proc/sys/vm/swappiness") == "60" and tuned.read("/proc/sys/net/ipv4/tcp_sack") == "1\n"
    assert not os.path.exists(_journal_file(tuned))


def test_a_run_with_nothing_to_do_takes_the_lock_to_reconcile(tuned, monkeypatch):
    _killed_before_commit(tuned, monkeypatch, lambda: _sysctl(tuned))
    out, m = _sysctl(tuned)                     # everything is applied already: nothing to change
    assert out["changed"] is False and out["reconciled"][0]["kept"] == ["sysctl:vm.swappiness", "sysctl:net.ipv4.tcp_sack"]
    assert Journal(tuned.host(), JDIR).interrupted() == []


def test_the_journal_knows_every_key_prefix_of_the_registry():
    """A key prefix the journal does not know makes every journal holding it 'foreign'."""
    from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _apply
    from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _journal_schema
    from ansible_collections.hpcnet.rdma.plugins.module_utils.tuning import _concerns as _registry
    assert set(_apply.Domains(*_registry.all_maps()).prefixes()) == set(_journal_schema.KEY_PREFIXES)


def test_a_journal_dir_that_cannot_be_made_is_named_before_anything_changes(tuned):
    before = tuned.snapshot()
    jdir = "/var/lib/" + "x" * 300          # the kernel refuses the name (ENAMETOOLONG), like /proc refuses a mkdir
    with pytest.raises(Failed, match=r"^journal_dir: /var/lib/x+ cannot hold the journal \(File name too long\); "
                                     r"give a writable local directory$"):
        sysctl_tuning.run(FakeModule(sysctl_tuning.ARGUMENT_SPEC, {"sysctls": {"vm.swappiness": 10}, "context": "host",
                                                                   "journal_dir": jdir}), tuned.host())
    assert tuned.snapshot() == before and tuned.read("/proc/sys/vm/swappiness") == "60\n"
    assert not os.path.exists(tuned.path("/var"))      # the levels made on the way were removed again


# ---------------------------------------------------------------- targets (schema 2)
def _journal2(targets):
    return json.dumps({"schema": 2, "originals": {}, "generations": [], "next_generation": 1, "targets": targets})


@pytest.mark.parametrize("content, message", [
    (json.dumps({"schema": 1, "originals": {}, "generations": [], "next_generation": 1, "targets": {}}),
     "a schema 1 journal has no 'targets'"),
    (json.dumps({"schema": True, "originals": {}, "generations": [], "next_generation": 1}), "schema True"),
    (_journal2([]), "'targets' is not an object"),
    (_journal2({"tuning.sysctl": []}), "targets\\['tuning.sysctl'\\] is not an object"),
    (_journal2({"s": {"m": {"node": {}}}}), "lacks keys"),
    (_journal2({"s": {"m": {"keys": [], "node": {}}}}), "keys is not an object"),
    (_journal2({"s": {"m": {"keys": {}, "node": []}}}), "node is not an object"),
    (_journal2({"s": {"m": {"keys": {}, "node": {}, "extra": 1}}}), "unknown field"),
    (_journal2({"s": {"m": {"keys": {"bogus:x": 1}}}}), "unknown prefix 'bogus'"),
    (_journal2({"s": {"m": {"keys": {"dir:/x": "yes"}}}}), "dir: value must be true or false"),
    (_journal2({"s": {"m": {"keys": {}, "run": 5}}}), "run must be a string"),
    (_journal2({"s": {"m": {"keys": {}, "seq": -1}}}), "seq -1 is not a non-negative integer"),
    (_journal2({"s": {"m": {"keys": {}, "seq": True}}}), "seq True is not a non-negative integer"),
])
def test_targets_are_validated_on_load(host, tmp_path, content, message):
    path = tmp_path / "var/lib/hpcnet-rdma/journal.json"
    path.parent.mkdir(parents=True, mode=0o700)
    path.write_text(content)
    with pytest.raises(JournalError, match=message) as e:
        Journal(host, JDIR).load()
    assert "left untouched" in str(e.value)
    assert path.read_text() == content


def test_a_schema_1_journal_is_read_and_written_back_as_schema_2(host, tmp_path):
    path = tmp_path / "var/lib/hpcnet-rdma/journal.json"
    path.parent.mkdir(parents=True, mode=0o700)
    path.write_text(_journal({"sysctl:a": {"value": "1", "generation": 1, "seq": 0}},
                             [_gen([{"key": "sysctl:a", "before": "1", "after": "2"}])]))
    j = Journal(host, JDIR)
    assert j.originals() == {"sysctl:a": "1"} and j.targets() == {}
    j.set_targets("tuning.sysctl", "sysctl_tuning", {"sysctl:a": "2"}, {"cpus": "0-1"})
    data = json.loads(path.read_text())
    assert data["schema"] == 2 and data["originals"] == {"sysctl:a": {"value": "1", "generation": 1, "seq": 0}}
    assert data["targets"] == {"tuning.sysctl": {"sysctl_tuning": {"keys": {"sysctl:a": "2"}, "node": {"cpus": "0-1"},
                                                                   "seq": 1}}}


@pytest.mark.parametrize("keys, node, writes", [
    ({"sysctl:a": "2"}, {"cpus": "0-1"}, False),    # the same: nothing written
    ({"sysctl:a": "3"}, {"cpus": "0-1"}, True),     # a value
    ({"sysctl:a": "2", "sysctl:b": "1"}, {"cpus": "0-1"}, True),   # a key more
    ({}, {"cpus": "0-1"}, True),                    # a key less
    ({"sysctl:a": "2"}, {"cpus": "0-3"}, True),     # the devices
])
def test_targets_are_written_only_when_they_differ(host, tmp_path, keys, node, writes):
    j = Journal(host, JDIR)
    j.set_targets("s", "m", {"sysctl:a": "2"}, {"cpus": "0-1"})
    path = tmp_path / "var/lib/hpcnet-rdma/journal.json"
    stamp = path.stat().st_mtime_ns
    os.utime(path, ns=(stamp - 10 ** 9, stamp - 10 ** 9))
    assert j.targets_differ("s", "m", keys, node) is writes
    j.set_targets("s", "m", keys, node)
    assert (path.stat().st_mtime_ns != stamp - 10 ** 9) is writes
    assert Journal(host, JDIR).targets()["s"]["m"] == {"keys": keys, "node": node, "seq": 2 if writes else 1}


@pytest.mark.parametrize("scope_gens", [None, "last"])
def test_every_rollback_drops_every_target(host, scope_gens):
    j = Journal(host, JDIR)
    j.commit(j.begin("m", _plan(("sysctl:a", "1", "2")), run="r1", scope="s"))
    j.set_targets("s", "m", {"sysctl:a": "2"}, {})
    j.set_targets("t", "n", {"sysctl:b": "5"}, {})
    gens = [g["id"] for g in j.last_run()] if scope_gens else None
    j.restored([], gens)      # even a rollback that restored nothing of scope t
    assert Journal(host, JDIR).targets() == {}


def test_a_journal_with_only_targets_is_kept(host, tmp_path):
    j = Journal(host, JDIR)
    j.set_targets("s", "m", {"sysctl:a": "2"}, {})
    assert not j.is_empty() and (tmp_path / "var/lib/hpcnet-rdma/journal.json").exists()


def test_an_entry_is_restamped_when_another_run_stored_after_it(host):
    j = Journal(host, JDIR)
    j.set_targets("a", "m", {"sysctl:a": "1"}, {}, "r1")
    j.set_targets("b", "m", {"sysctl:b": "1"}, {}, "r1")
    assert not j.targets_differ("a", "m", {"sysctl:a": "1"}, {}, "r2")   # same run after it: nothing to write
    j.set_targets("a", "m", {"sysctl:a": "2"}, {}, "r2")                # r2 changed a: b is older than r2's a
    assert j.targets_differ("b", "m", {"sysctl:b": "1"}, {}, "r2")
    j.set_targets("b", "m", {"sysctl:b": "1"}, {}, "r2")
    assert [(e["run"], e["seq"]) for e in (j.targets()["a"]["m"], j.targets()["b"]["m"])] == [("r2", 3), ("r2", 4)]
    assert not j.targets_differ("a", "m", {"sysctl:a": "2"}, {}, "r3")
    assert not j.targets_differ("b", "m", {"sysctl:b": "1"}, {}, "r3")
