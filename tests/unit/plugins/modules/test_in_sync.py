# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The journal's targets (every key a scoped call manages, stored only when they differ) and the one
in-sync check - node_tuning's sync, read before any step - on a fake node: in sync only when the
record's inputs digest, every scope's targets, the node's devices and every live value agree - and
never after a rollback."""
from __future__ import annotations

import json
import os

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _fingerprint
from ansible_collections.hpcnet.rdma.plugins.modules import managed_files, nic_tuning, node_tuning, sysctl_tuning, tuning_state

from ...conftest import FakeModule, mlx5, veth

SYSCTLS = {"net.ipv4.tcp_rmem": [4096, 87380, 268435456], "net.ipv4.tcp_sack": 0, "vm.swappiness": 10}
NICS = [{"name": "data0", "mtu": 9000}]
RECORD = "/etc/hpcnet-rdma/profile.json"
JOURNAL = "/var/lib/hpcnet-rdma/journal.json"
SCOPES = ["tuning.sysctl", "tuning.nic", "tuning.record"]
DIGEST = "d1"


@pytest.fixture
def lab(node):
    node.sysctl("net.ipv4.tcp_rmem", "4096\t131072\t6291456")
    node.sysctl("net.ipv4.tcp_sack", "1")
    node.sysctl("vm.swappiness", "10")     # already at its target: a target all the same
    node.add_nic(mlx5())
    node.add_nic(veth(addresses=[("10.77.0.1", 24)]))
    return node


def call(mod, node, params, check=False):
    return mod.run(FakeModule(mod.ARGUMENT_SPEC, params, check_mode=check), node.host())


def record(digest=DIGEST):
    return [{"path": RECORD, "content": json.dumps({"name": "mpi", "inputs_digest": digest}) + "\n"}]


def tune(node, digest=DIGEST, check=False, run="r1"):
    """What the tuning role does for these three scopes, the record last."""
    common = {"journal_run": run}
    out = [call(sysctl_tuning, node, dict(common, sysctls=SYSCTLS, context="host", release_scope="tuning.sysctl"),
                check),
           call(nic_tuning, node, dict(common, interfaces=NICS, management_connection="none",
                                       release_scope="tuning.nic"), check),
           call(managed_files, node, dict(common, release_scope="tuning.record", files=record(digest)), check)]
    return out


def sync_call(node, digest=DIGEST, scopes=None, check=True):
    """The tuning role's one call, asking: node_tuning with sync (skip) and a section (the record's, here).
    In check mode (the default here) a node not in sync is only planned, so the call writes nothing."""
    return call(node_tuning, node, {"sync": {"inputs_digest": digest, "scopes": SCOPES if scopes is None else scopes},
                                    "files": {"files": record(), "release_scope": "tuning.record"},
                                    "journal_run": "q1"}, check)


def in_sync(node, digest=DIGEST, scopes=None, check=True):
    return sync_call(node, digest, scopes, check)["sync"]


def journal(node):
    with open(node.path(JOURNAL), encoding="utf-8") as f:
        return json.load(f)


def test_targets_hold_every_managed_key_changed_or_not(lab):
    tune(lab)
    targets = journal(lab)["targets"]
    assert sorted(targets) == sorted(SCOPES)
    keys = targets["tuning.sysctl"]["sysctl_tuning"]["keys"]
    # vm.swappiness was already right: no change, no original - but a target
    assert keys["sysctl:vm.swappiness"] == "10" and "sysctl:vm.swappiness" not in journal(lab)["originals"]
    assert keys["sysctl:net.ipv4.tcp_sack"] == "0"
    assert targets["tuning.nic"]["nic_tuning"]["keys"]["nic:data0:mtu"] == 9000
    assert set(targets["tuning.sysctl"]["sysctl_tuning"]["node"]) == set(_fingerprint.SECTIONS)
    assert journal(lab)["schema"] == 2


def test_a_no_change_rerun_writes_nothing(lab):
    tune(lab)
    path = lab.path(JOURNAL)
    before = (os.stat(path).st_mtime_ns, open(path, "rb").read())
    results = tune(lab, run="r2")
    assert not any(r["changed"] for r in results)
    assert (os.stat(path).st_mtime_ns, open(path, "rb").read()) == before


def test_a_no_change_call_stores_targets_it_lacks(lab):
    """A node tuned before targets existed (or whose targets a rollback dropped) gets them on the
    next call even though nothing changes."""
    tune(lab)
    data = journal(lab)
    data["targets"] = {}
    with open(lab.path(JOURNAL), "w", encoding="utf-8") as f:
        json.dump(data, f)
    assert not in_sync(lab)["in_sync"]
    assert not any(r["changed"] for r in tune(lab, run="r2"))
    assert in_sync(lab)["in_sync"]


def test_check_mode_stores_no_targets(lab):
    tune(lab, check=True)
    assert not os.path.exists(lab.path(JOURNAL))


def _drift(node):
    node.sysctl("net.ipv4.tcp_sack", "1")


def _new_nic(node):
    node.add_nic(veth(name="data1", addresses=[("10.77.1.1", 24)]))


def _interrupted(node):
    data = journal(node)
    data["generations"].append({"id": data["next_generation"], "module": "sysctl_tuning", "status": "applying",
                                "time": "2026-12-05T00:00:00Z", "changes": []})
    data["next_generation"] += 1
    with open(node.path(JOURNAL), "w", encoding="utf-8") as f:
        json.dump(data, f)


def _rollback(scope):
    def undo(node):
        out = call(tuning_state, node, {"action": "rollback", "scope": scope})
        assert out["changed"]
    return undo


def _nothing(node):
    return None


def _unfinished(node):
    out = call(sysctl_tuning, node, {"sysctls": dict(SYSCTLS, **{"net.ipv4.tcp_sack": 1}), "context": "host",
                                     "journal_run": "r9", "release_scope": "tuning.sysctl"})
    assert out["changed"]


# (what happens after a tune, the digest and scopes checked, whether in sync, the reasons' (scope, key, text))
CASES = [
    ("in sync", _nothing, DIGEST, SCOPES, True, []),
    ("a drifted key", _drift, DIGEST, SCOPES, False,
     [("tuning.sysctl", "sysctl:net.ipv4.tcp_sack", "differs from its target")]),
    ("a scope never tuned", _nothing, DIGEST, SCOPES + ["tuning.irq"], False,
     [("tuning.irq", None, "no targets stored")]),
    ("other inputs", _nothing, "d2", SCOPES, False, [(None, None, "applied with other inputs (inputs_digest d1")]),
    ("an interrupted generation", _interrupted, DIGEST, SCOPES, False, [(None, None, "was interrupted")]),
    ("a new interface", _new_nic, DIGEST, SCOPES, False,
     [(s, None, "the node's addresses, netdevs changed") for s in SCOPES]),
    ("rollback scope=all", _rollback("all"), DIGEST, SCOPES, False,
     [(None, None, "no profile is recorded"), (None, None, "no scope has the profile record")]
     + [(s, None, "no targets stored") for s in SCOPES]),
    ("rollback scope=last", _rollback("last"), DIGEST, SCOPES, False,
     [(None, None, "no profile is recorded"), (None, None, "no scope has the profile record")]
     + [(s, None, "no targets stored") for s in SCOPES]),
    # a run with other sysctls stopped before its record: the live values are its targets, the
    # record still carries the earlier run's digest - a full run with that digest would change them
    ("a run that did not finish", _unfinished, DIGEST, SCOPES, False,
     [("tuning.sysctl", None, "stored after the profile record was last written, by a run that did not finish")]),
]


@pytest.mark.parametrize("what, after, digest, scopes, expected, reasons", CASES, ids=[c[0] for c in CASES])
def test_in_sync(lab, what, after, digest, scopes, expected, reasons):
    tune(lab)
    after(lab)
    snapshot = lab.snapshot()
    result = sync_call(lab, digest, scopes)
    out = result["sync"]
    assert lab.snapshot() == snapshot, "the sync check reads only (and check mode plans only)"
    assert out["in_sync"] is expected, (what, out["reasons"])
    assert result["skipped_steps"] is expected
    got = [(r.get("scope"), r.get("key"), r["reason"]) for r in out["reasons"]]
    assert len(got) == len(reasons), got
    for (scope, key, text), (gscope, gkey, gtext) in zip(reasons, got):
        assert (scope, key) == (gscope, gkey) and text in gtext, got
    if expected:
        stored = [k for entries in journal(lab)["targets"].values() for e in entries.values() for k in e["keys"]]
        assert "msg" not in out and out["checked"] == len(stored)
    else:
        assert out["msg"].startswith("not in sync: ")


def test_a_drifted_key_shows_target_and_live_value(lab):
    tune(lab)
    _drift(lab)
    (reason,) = in_sync(lab)["reasons"]
    assert (reason["target"], reason["current"]) == ("0", "1")


def test_the_record_is_returned(lab):
    assert in_sync(lab)["record"] is None
    tune(lab)
    assert in_sync(lab)["record"] == {"name": "mpi", "inputs_digest": DIGEST}


def test_tuning_again_after_a_rollback_is_in_sync_again(lab):
    tune(lab)
    _rollback("all")(lab)
    tune(lab, run="r2")
    assert in_sync(lab)["in_sync"]


def test_a_rollback_that_restores_one_scope_drops_every_target(lab):
    tune(lab)
    call(sysctl_tuning, lab, {"sysctls": {"net.ipv4.tcp_sack": 1}, "context": "host", "journal_run": "r2",
                              "release_scope": "tuning.sysctl"})
    _rollback("last")(lab)
    assert journal(lab)["targets"] == {}


def test_the_run_after_an_unfinished_one_restamps_every_scope(lab):
    """After an unfinished run, the next full run brings the values back and re-stamps every
    scope's targets in call order, the record's last: in sync again, and the rerun after it writes
    nothing."""
    tune(lab)
    _unfinished(lab)
    assert not in_sync(lab)["in_sync"]
    tune(lab, run="r10")
    assert in_sync(lab)["in_sync"]
    entries = journal(lab)["targets"]
    assert [entries[s][m]["run"] for s in SCOPES for m in entries[s]] == ["r10"] * 3
    path = lab.path(JOURNAL)
    before = open(path, "rb").read()
    tune(lab, run="r11")
    assert open(path, "rb").read() == before


def test_in_sync_the_call_runs_no_step_and_writes_nothing_in_either_mode(lab):
    """In sync, the one call (not in check mode: the role's real rerun) skips every step and writes
    nothing - the journal's bytes and times stay; check mode gives the same answer."""
    tune(lab)
    path = lab.path(JOURNAL)
    before = (os.stat(path).st_mtime_ns, open(path, "rb").read())
    snapshot = lab.snapshot()
    real, check = sync_call(lab, check=False), sync_call(lab, check=True)
    assert real["skipped_steps"] and not real["changed"] and real["results"] == []
    assert real["sync"] == check["sync"] and real["sync"]["in_sync"]
    assert lab.snapshot() == snapshot
    assert (os.stat(path).st_mtime_ns, open(path, "rb").read()) == before
