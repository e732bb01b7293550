# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""node_tuning on fake nodes: its steps do exactly what the modules do as calls of their own (node,
journal generations, targets), every step's options are checked and every step is planned before the
first step changes anything (issue 26: a bad value anywhere changes nothing), a step the node refuses
reverts the steps the call applied before it, check mode predicts, and sync skips the steps of an
in-sync node."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import types

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _transaction
from ansible_collections.hpcnet.rdma.plugins.module_utils.tuning import _module as _node_tuning
from ansible_collections.hpcnet.rdma.plugins.modules import managed_files, nic_tuning, node_tuning, sysctl_tuning

from ...conftest import Failed, FakeModule, FakeNode, mlx5, veth

SYSCTLS = {"net.ipv4.tcp_rmem": [4096, 87380, 268435456], "net.ipv4.tcp_sack": 0, "vm.swappiness": 10}
RECORD = "/etc/hpcnet-rdma/profile.json"
JOURNAL = "/var/lib/hpcnet-rdma/journal.json"
SCOPES = ["tuning.sysctl", "tuning.nic", "tuning.record"]


def make_node(root) -> FakeNode:
    node = FakeNode(str(root))
    node.sysctl("net.ipv4.tcp_rmem", "4096\t131072\t6291456")
    node.sysctl("net.ipv4.tcp_sack", "1")
    node.sysctl("vm.swappiness", "10")
    node.add_nic(mlx5())
    node.add_nic(veth(addresses=[("10.77.0.1", 24)]))
    return node


@pytest.fixture
def lab(tmp_path):
    return make_node(tmp_path / "a")


def steps(digest="d1", nic_name="data0"):
    """The tuning role's sysctl, nic and record steps."""
    return [
        {"name": "sysctl", "module": "sysctl_tuning",
         "args": {"sysctls": SYSCTLS, "context": "host", "release_scope": "tuning.sysctl"}},
        {"name": "nic", "module": "nic_tuning",
         "args": {"interfaces": [{"name": nic_name, "mtu": 9000}], "management_connection": "none",
                  "release_scope": "tuning.nic"}},
        {"name": "record", "module": "managed_files",
         "args": {"release_scope": "tuning.record",
                  "files": [{"path": RECORD, "content": json.dumps(
                      {"name": "mpi", "inputs_digest": digest, "sysctls": SYSCTLS}) + "\n"}]}},
    ]


def batch(node, check=False, diff=True, **params):
    params.setdefault("steps", steps())
    params.setdefault("journal_run", "r1")
    module = FakeModule(node_tuning.ARGUMENT_SPEC, params, check_mode=check, diff=diff)
    out = node_tuning.run(module, node.host())
    out["warnings"] = module.warnings
    return out


def separately(node, digest="d1"):
    """The same three steps as tasks of their own."""
    mods = {"sysctl_tuning": sysctl_tuning, "nic_tuning": nic_tuning, "managed_files": managed_files}
    return [mods[s["module"]].run(FakeModule(mods[s["module"]].ARGUMENT_SPEC, dict(s["args"], journal_run="r1")),
                                  node.host()) for s in steps(digest)]


def journal(node):
    with open(node.path(JOURNAL), encoding="utf-8") as f:
        return json.load(f)


def outside_journal(node):
    jdir = node.path("/var/lib/hpcnet-rdma")
    snap = node.snapshot()
    snap["files"] = dict((k[len(node.root):], v) for k, v in snap["files"].items() if not k.startswith(jdir))
    return snap


def generations(node):
    return [(g["module"], g.get("scope"), g.get("run"), [c["key"] for c in g["changes"]])
            for g in journal(node)["generations"]]


def targets(node):
    return dict((scope, dict((m, e["keys"]) for m, e in mods.items())) for scope, mods in journal(node)["targets"].items())


def test_steps_do_exactly_what_the_modules_do_as_calls_of_their_own(tmp_path):
    one, other = make_node(tmp_path / "one"), make_node(tmp_path / "other")
    out = batch(one)
    alone = separately(other)
    assert outside_journal(one) == outside_journal(other)
    assert generations(one) == generations(other)
    assert targets(one) == targets(other)
    assert [r["name"] for r in out["results"]] == ["sysctl", "nic", "record"]
    for mine, theirs in zip(out["results"], alone):
        for key in ("changed", "changes", "previous", "current"):
            assert mine[key] == theirs[key], key
    assert out["changed"] and out["previous"] == [r["previous"] for r in alone]
    assert out["skipped_steps"] is False and "sync" not in out
    # the diff: every step's, in order
    assert len(out["diff"]) == sum(len(r["diff"]) if isinstance(r["diff"], list) else 1 for r in alone)


def test_check_mode_predicts_exactly_and_writes_nothing(lab):
    """Each step predicts what its module predicts; with the directories the steps share already
    there (the earlier step creates /etc in a real run, not in check mode) the prediction is exact."""
    lab.write("/etc/sysctl.d/README", "x\n")
    lab.write("/etc/systemd/network/README", "x\n")
    before = lab.snapshot()
    predicted = batch(lab, check=True)
    assert lab.snapshot() == before
    real = batch(lab)
    assert [r["changes"] for r in predicted["results"]] == [r["changes"] for r in real["results"]]
    assert predicted["changed"] is real["changed"] is True
    again = batch(lab, check=True)
    assert not again["changed"] and all(not r["changes"] for r in again["results"])


def test_the_call_s_options_reach_every_step_that_does_not_set_its_own(lab):
    own = steps()
    own[1]["args"]["journal_run"] = "r-own"
    batch(lab, steps=own, journal_run="r-call", mode="both")
    runs = dict((scope, run) for _m, scope, run, _k in generations(lab))
    assert runs == {"tuning.sysctl": "r-call", "tuning.nic": "r-own", "tuning.record": "r-call"}


def test_warnings_name_their_step(lab):
    lab.sysctl("net.core.rmem_max", "212992", writable=False)
    with_global = steps()
    with_global[0]["args"] = dict(with_global[0]["args"], sysctls=dict(SYSCTLS, **{"net.core.rmem_max": 1}),
                                  context="container", on_unsupported="warn")
    out = batch(lab, steps=with_global)
    assert out["warnings"] and all(w.startswith("steps[0] sysctl: ") for w in out["warnings"]), out["warnings"]


@pytest.mark.parametrize("index, change, expected", [
    (2, {"files": "not a list"}, "steps[2] record (hpcnet.rdma.managed_files):"),
    (1, {"match": "serial"}, "steps[1] nic (hpcnet.rdma.nic_tuning): value of match must be one of"),
    (0, {"bogus": 1}, "steps[0] sysctl (hpcnet.rdma.sysctl_tuning): bogus. Supported parameters include"),
    (1, {"interfaces": None, "cap": "maybe"}, "steps[1] nic (hpcnet.rdma.nic_tuning):"),
    (0, {"mode": "sometimes"}, "value of mode must be one of: runtime, persist, both"),
])
def test_bad_options_in_any_step_fail_before_the_first_step_changes_anything(lab, index, change, expected):
    bad = steps()
    bad[index]["args"] = dict(bad[index]["args"], **change)
    before = lab.snapshot()
    with pytest.raises(Failed) as e:
        batch(lab, steps=bad)
    assert e.value.msg.startswith("nothing was changed: ") and expected in e.value.msg, e.value.msg
    assert lab.snapshot() == before


def test_bad_options_of_two_steps_are_both_named(lab):
    bad = steps()
    bad[0]["args"]["bogus"] = 1
    bad[2]["args"]["files"] = 3
    with pytest.raises(Failed) as e:
        batch(lab, steps=bad)
    assert "steps[0] sysctl" in e.value.msg and "steps[2] record" in e.value.msg


@pytest.mark.parametrize("params, expected", [
    ({"steps": []}, "steps: at least one step is required"),
    ({"steps": [{"module": "tuning_state", "args": {}}]}, "value of module must be one of"),
    ({"steps": [{"args": {}}]}, "missing required arguments: module"),
    ({"sync": {"scopes": ["tuning.sysctl"]}}, "missing required arguments: inputs_digest"),
])
def test_bad_call_options_fail_naming_the_field(lab, params, expected):
    before = lab.snapshot()
    with pytest.raises(Failed) as e:
        batch(lab, **params)
    assert expected in e.value.msg
    assert lab.snapshot() == before


JDIR = "/var/lib/hpcnet-rdma"


def irq_step(name):
    return {"name": "irq", "module": "irq_affinity", "args": {"interfaces": [{"name": name}], "release_scope": "tuning.irq"}}


def with_nic(steps_, **entry):
    steps_[1]["args"]["interfaces"] = [dict({"name": "data0"}, **entry)]
    return steps_


@pytest.mark.parametrize("bad, index, expected", [
    (steps(nic_name="data9"), 1,
     "steps[1] nic (hpcnet.rdma.nic_tuning): interfaces[0].name: unknown interface 'data9'; "
     "present: data0 (veth), ens1f0np0 (mlx5_core)"),
    (with_nic(steps(), name="ens1f0np0", mtu=10000), 1,
     "steps[1] nic (hpcnet.rdma.nic_tuning): interfaces: ens1f0np0 mtu=10000 is outside what the device allows (68..9978)"),
    (steps()[:2] + [irq_step("ib9")], 2, "steps[2] irq (hpcnet.rdma.irq_affinity): interfaces: unknown interface 'ib9'"),
])
def test_a_bad_value_in_a_later_step_fails_the_call_with_nothing_changed(lab, bad, index, expected):
    """Issue 26: every step is read and planned before any changes anything - the good sysctl step
    before the bad one changes nothing either, and no journal directory or lock is made."""
    lab.write("/proc/interrupts", "           CPU0       CPU1\n")
    lab.write("/sys/devices/system/cpu/online", "0-1\n")
    before = lab.snapshot()
    with pytest.raises(Failed) as e:
        batch(lab, steps=bad)
    assert e.value.msg.startswith("nothing was changed: " + expected), e.value.msg
    failed = e.value.result
    assert failed["changed"] is False and failed["results"] == [] and failed["failed_step"]["index"] == index
    assert lab.snapshot() == before
    assert not os.path.exists(lab.path(JDIR))


def test_a_bad_value_after_an_earlier_tune_leaves_node_and_journal_as_they_were(lab):
    batch(lab)
    path = lab.path(JOURNAL)
    before = (lab.snapshot(), os.stat(path).st_mtime_ns)
    other = steps(nic_name="data9")
    other[0]["args"]["sysctls"] = dict(SYSCTLS, **{"vm.swappiness": 1})
    with pytest.raises(Failed):
        batch(lab, steps=other, journal_run="r2")
    assert (lab.snapshot(), os.stat(path).st_mtime_ns) == before


def test_warnings_of_the_plan_are_not_repeated_by_the_run(tmp_path):
    """The plan's warnings are held back in a real run (the run warns them again): the call warns
    exactly what the module does as a task of its own."""
    one, other = make_node(tmp_path / "one"), make_node(tmp_path / "other")
    args = dict(steps()[0]["args"], sysctls=dict(SYSCTLS, **{"net.core.rmem_max": 1}), context="container",
                on_unsupported="warn")
    for lab in (one, other):
        lab.sysctl("net.core.rmem_max", "212992", writable=False)
    real = batch(one, steps=[{"name": "sysctl", "module": "sysctl_tuning", "args": args}])["warnings"]
    alone = FakeModule(sysctl_tuning.ARGUMENT_SPEC, dict(args, journal_run="r1"))
    sysctl_tuning.run(alone, other.host())
    assert real and real == ["steps[0] sysctl: " + w for w in alone.warnings]


def test_a_step_the_node_refuses_reverts_the_steps_the_call_applied_before_it(lab):
    """The nic step's apply fails (the driver refuses the MTU): the sysctl step this call applied is
    reverted too - values, sysctl.d file, its directory, journal and lock - and the record step never runs."""
    before = lab.snapshot()
    lab.fail_on = "mtu 9000"
    with pytest.raises(Failed) as e:
        batch(lab)
    msg = e.value.msg
    assert msg.startswith("steps[1] nic (hpcnet.rdma.nic_tuning): nic_tuning failed and changed nothing: "), msg
    assert msg.endswith("so the earlier steps of this call were reverted: steps[0] sysctl (5 key(s)) - the node is as "
                        "the call found it"), msg
    failed = e.value.result
    assert failed["changed"] is False and failed["still_applied"] == [] and failed["failed_step"]["index"] == 1
    assert [r["name"] for r in failed["results"]] == ["sysctl"]
    assert lab.snapshot() == before
    assert not os.path.exists(lab.path(JDIR))


def test_a_refusal_after_an_earlier_tune_takes_only_this_call_s_changes_out_of_the_journal(lab):
    batch(lab)
    gens = generations(lab)
    tuned = outside_journal(lab)
    other = steps()
    other[0]["args"]["sysctls"] = dict(SYSCTLS, **{"vm.swappiness": 1})
    other[1]["args"]["interfaces"] = [{"name": "data0", "mtu": 4000}]
    lab.fail_on = "mtu 4000"
    with pytest.raises(Failed) as e:
        batch(lab, steps=other, journal_run="r2")
    assert "the earlier steps of this call were reverted: steps[0] sysctl (2 key(s))" in e.value.msg, e.value.msg
    assert outside_journal(lab) == tuned
    assert generations(lab) == gens
    # like a rollback, the revert leaves no scope as a tune left it: the next run takes the full path
    assert journal(lab)["targets"] == {}
    assert not batch(lab, sync=sync(), journal_run="r3")["skipped_steps"]


def test_a_key_that_cannot_be_reverted_is_named_and_stays_journaled_for_rollback(lab, monkeypatch):
    from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _errors, _host
    real = _host.Host.write_proc

    def refuse_the_original(self, path, value):
        if path.endswith("/tcp_sack") and value.strip() == "1":
            raise _errors.HostError("cannot write %r to %s: Device or resource busy" % (value, path))
        return real(self, path, value)

    monkeypatch.setattr(_host.Host, "write_proc", refuse_the_original)
    lab.fail_on = "mtu 9000"
    with pytest.raises(Failed) as e:
        batch(lab)
    msg = e.value.msg
    assert "REVERT FAILED for sysctl:net.ipv4.tcp_sack (" in msg and "run tuning_state rollback to recover them" in msg, msg
    assert e.value.result["changed"] is True
    assert [k["key"] for k in e.value.result["still_applied"]] == ["sysctl:net.ipv4.tcp_sack"]
    assert lab.read("/proc/sys/net/ipv4/tcp_sack").strip() == "0"
    assert lab.read("/proc/sys/net/ipv4/tcp_rmem").split() == ["4096", "131072", "6291456"]
    assert [k for _m, _s, _r, k in generations(lab)] == [["sysctl:net.ipv4.tcp_sack"]]
    assert journal(lab)["originals"]["sysctl:net.ipv4.tcp_sack"]["value"] == "1"


def test_check_mode_is_the_plan_the_run_makes_and_fails_alike(lab):
    before = lab.snapshot()
    with pytest.raises(Failed) as e:
        batch(lab, check=True, steps=steps(nic_name="data9"))
    assert e.value.msg.startswith("nothing was changed: steps[1] nic"), e.value.msg
    assert lab.snapshot() == before and not os.path.exists(lab.path(JDIR))


def sync(digest="d1", skip=True):
    return {"inputs_digest": digest, "scopes": SCOPES, "skip": skip}


def test_sync_skips_every_step_of_a_node_in_sync_and_writes_nothing(lab):
    batch(lab)
    path = lab.path(JOURNAL)
    before = (lab.snapshot(), os.stat(path).st_mtime_ns)
    out = batch(lab, sync=sync(), journal_run="r2")
    assert out["sync"]["in_sync"] and out["skipped_steps"] and out["results"] == [] and not out["changed"]
    assert out["sync"]["record"]["name"] == "mpi" and out["sync"]["checked"] > 0
    # the record's identity only (the values it lists are the journal's targets the check compared)
    assert sorted(out["sync"]["record"]) == ["inputs_digest", "name"]     # not the record's sysctls
    assert (lab.snapshot(), os.stat(path).st_mtime_ns) == before


@pytest.mark.parametrize("what, digest, skip, tamper", [
    ("other inputs", "d2", True, None),
    ("a key moved off its target", "d1", True, "net.ipv4.tcp_sack"),
    ("skip false runs the steps all the same", "d1", False, None),
])
def test_sync_runs_the_steps_when_not_in_sync_or_not_asked_to_skip(lab, what, digest, skip, tamper):
    batch(lab)
    if tamper:
        lab.sysctl(tamper, "1")
    out = batch(lab, sync=sync(digest, skip), journal_run="r2")
    assert out["sync"]["in_sync"] is (not tamper and digest == "d1"), what
    assert not out["skipped_steps"] and [r["name"] for r in out["results"]] == ["sysctl", "nic", "record"]
    assert out["changed"] is bool(tamper), what
    if tamper:
        assert lab.read("/proc/sys/net/ipv4/tcp_sack").strip() == "0"
        assert out["sync"]["msg"].startswith("not in sync: ")


def test_sync_on_a_pristine_node_says_why_and_tunes(lab):
    out = batch(lab, sync=sync())
    assert not out["sync"]["in_sync"] and "no profile is recorded" in out["sync"]["msg"]
    assert out["changed"] and batch(lab, sync=sync(), journal_run="r2")["skipped_steps"]


def test_every_step_module_has_a_body_with_spec_and_run():
    for name in _node_tuning.STEPS:
        found = _node_tuning.body(name)
        assert callable(found.run) and "release_scope" in found.ARGUMENT_SPEC, name
    assert node_tuning.ARGUMENT_SPEC["steps"]["options"]["module"]["choices"] == list(_node_tuning.STEPS)


def test_a_key_another_run_changed_in_between_is_left_as_it_is_and_named(lab):
    """No other run of ours takes the journal lock between two steps (the call holds it throughout:
    the test below), but a writer that ignores the lock (``sysctl -w`` by hand, another tool) may
    change a key the call applied: a key that no longer holds what this call applied is not reverted
    over the other writer's value; it is named and stays journaled."""
    real = lab.run

    def meanwhile(argv):
        if "mtu" in argv:   # the nic step's apply: another run set vm.swappiness just before
            lab.sysctl("vm.swappiness", "33")
            return 1, "", "netlink error: Invalid argument (simulated)"
        return real(argv)

    lab.run = meanwhile
    with pytest.raises(Failed) as e:
        batch(lab, steps=[dict(steps()[0], args=dict(steps()[0]["args"], sysctls=dict(SYSCTLS, **{"vm.swappiness": 5}),
                                                     mode="runtime")), steps()[1]])
    stays = e.value.result["still_applied"]
    assert [s["key"] for s in stays] == ["sysctl:vm.swappiness"] and "changed by someone else" in stays[0]["reason"]
    assert "REVERT FAILED for sysctl:vm.swappiness" in e.value.msg, e.value.msg
    assert lab.read("/proc/sys/vm/swappiness").strip() == "33"
    assert lab.read("/proc/sys/net/ipv4/tcp_sack").strip() == "1"
    assert [k for _m, _s, _r, k in generations(lab)] == [["sysctl:vm.swappiness"]]


PROBE = """
import fcntl, os, sys
try:
    fd = os.open(sys.argv[1], os.O_RDWR)
except FileNotFoundError:
    sys.exit(4)
try:
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError:
    sys.exit(3)
"""


def lock_state(node):
    """What another process finds of the journal lock: "held", "free" or "absent" (no lock file)."""
    rc = subprocess.run([sys.executable, "-c", PROBE, node.path(JDIR + "/lock")], check=False).returncode
    return {0: "free", 3: "held", 4: "absent"}[rc]


def probing(monkeypatch, node, seen):
    """Every step's real run (not the plan's check-mode run) and the revert note the lock's state as
    another process finds it, before and after."""
    real_body = _node_tuning.body

    def body(name):
        found = real_body(name)

        def run(module, host):
            if module.check_mode:
                return found.run(module, host)
            seen.append(("before", name, lock_state(node)))
            out = found.run(module, host)
            seen.append(("after", name, lock_state(node)))
            return out
        return types.SimpleNamespace(ARGUMENT_SPEC=found.ARGUMENT_SPEC, run=run)

    real_revert = _transaction.Transaction.revert

    def revert(self):
        seen.append(("revert", None, lock_state(node)))
        return real_revert(self)

    monkeypatch.setattr(_node_tuning, "body", body)
    monkeypatch.setattr(_transaction.Transaction, "revert", revert)


def test_the_call_holds_the_journal_lock_from_its_first_locked_step_to_its_end(lab, monkeypatch):
    """Issue 26: one lock, one journal run.  The first step that writes takes the journal lock (check
    mode and the plan take none, and no step before it wrote anything); from then on no other process
    can take it - between steps, or as a later step starts - until the call ends, and then it is free."""
    seen = []
    probing(monkeypatch, lab, seen)
    out = batch(lab)
    assert out["changed"]
    assert seen == [("before", "sysctl_tuning", "absent"), ("after", "sysctl_tuning", "held"),
                    ("before", "nic_tuning", "held"), ("after", "nic_tuning", "held"),
                    ("before", "managed_files", "held"), ("after", "managed_files", "held")]
    assert lock_state(lab) == "free"
    # every step still its own journal generation and scope
    assert [(m, sc) for m, sc, _r, _k in generations(lab)] == [
        ("sysctl_tuning", "tuning.sysctl"), ("nic_tuning", "tuning.nic"), ("managed_files", "tuning.record")]
    # a rerun that changes nothing takes no lock; check mode none either
    del seen[:]
    assert not batch(lab, journal_run="r2")["changed"]
    batch(lab, check=True, journal_run="r3")
    assert [state for _w, _n, state in seen] == ["free"] * 6


def test_the_lock_is_held_through_a_revert_and_the_call_that_changed_nothing_leaves_none(lab, monkeypatch):
    seen = []
    probing(monkeypatch, lab, seen)
    before = lab.snapshot()
    lab.fail_on = "mtu 9000"
    with pytest.raises(Failed) as e:
        batch(lab)
    assert "so the earlier steps of this call were reverted" in e.value.msg, e.value.msg
    assert seen == [("before", "sysctl_tuning", "absent"), ("after", "sysctl_tuning", "held"),
                    ("before", "nic_tuning", "held"), ("revert", None, "held")]
    assert lab.snapshot() == before and not os.path.exists(lab.path(JDIR))


def test_a_call_waits_for_the_lock_another_run_holds(lab):
    """The call's lock is the journal lock every run serializes on: held by another process, the
    call waits for it (here: gives up after its timeout) and changes nothing."""
    from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _host
    os.makedirs(lab.path(JDIR), mode=0o700)
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, os, sys, time\n"
                               "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
                               "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\nsys.stdin.read()\n",
                               lab.path(JDIR + "/lock")], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == b"held"
        before = lab.snapshot()
        real = _host.Host.lock
        with pytest.MonkeyPatch.context() as m:
            m.setattr(_host.Host, "lock", lambda self, path, timeout=60.0: real(self, path, 0.3))
            with pytest.raises(Failed) as e:
                batch(lab)
        assert "is held by another run" in e.value.msg, e.value.msg
        assert lab.snapshot() == before
    finally:
        holder.stdin.close()
        holder.wait(10)


# ---------------------------------------------------------------- sections: one declared state per concern

def sections(digest="d1", nic_name="data0"):
    """The same three concerns as steps(), as the call's sections."""
    sysctl, nic, record = (s["args"] for s in steps(digest, nic_name))
    return {"sysctl": sysctl, "nic": nic, "files": record}


def by_sections(node, check=False, **params):
    module = FakeModule(node_tuning.ARGUMENT_SPEC, dict(sections(), journal_run="r1", **params), check_mode=check)
    out = node_tuning.run(module, node.host())
    out["warnings"] = module.warnings
    return out


def test_sections_do_exactly_what_the_same_steps_do(tmp_path):
    one, other = make_node(tmp_path / "one"), make_node(tmp_path / "other")
    out = by_sections(one)
    steps_out = batch(other)
    assert outside_journal(one) == outside_journal(other)
    assert generations(one) == generations(other)
    assert targets(one) == targets(other)
    assert [(r["name"], r["module"]) for r in out["results"]] == [
        ("sysctl", "sysctl_tuning"), ("nic", "nic_tuning"), ("files", "managed_files")]
    for mine, theirs in zip(out["results"], steps_out["results"]):
        for key in ("changed", "changes", "previous", "current"):
            assert mine[key] == theirs[key], key
    again = by_sections(one, check=True)
    assert not again["changed"]


def test_sections_apply_in_the_concerns_order_whatever_order_they_are_given_in(lab):
    given = dict(reversed(list(sections().items())))
    module = FakeModule(node_tuning.ARGUMENT_SPEC, dict(given, journal_run="r1"))
    out = node_tuning.run(module, lab.host())
    assert [r["name"] for r in out["results"]] == ["sysctl", "nic", "files"]
    assert [c for c, _m in _node_tuning.SECTIONS] == ["sysctl", "nic", "irq", "qos", "services", "files"]


@pytest.mark.parametrize("section, value, expected", [
    # AnsibleModule's own sub-option checks name the section and the field, before anything is read
    ("nic", {"interfaces": [{"name": "data0", "mtu": "jumbo"}]}, "mtu"),
    ("sysctl", {"sysctls": {"vm.swappiness": 1}, "on_unsupported": "maybe"}, "on_unsupported"),
    ("nic", {"interfaces": [{"name": "data0"}], "bogus": 1}, "bogus"),
    ("nic", {"interfaces": [{"name": "data0"}], "journal_dir": "/x"}, "journal_dir"),   # the call's, not a section's
])
def test_a_bad_option_in_any_section_fails_validation_naming_it_with_nothing_changed(lab, section, value, expected):
    before = lab.snapshot()
    params = dict(sections(), journal_run="r1")
    params[section] = value
    with pytest.raises(Failed) as e:
        FakeModule(node_tuning.ARGUMENT_SPEC, params)
    assert expected in e.value.msg and section in e.value.msg, e.value.msg
    assert lab.snapshot() == before


def test_a_bad_value_in_a_later_section_fails_the_call_with_nothing_changed(lab):
    """The role's case of issue 26: the sysctls are fine, the NIC name is misspelt - no sysctl is set."""
    before = lab.snapshot()
    with pytest.raises(Failed) as e:
        by_sections(lab, nic=sections(nic_name="data9")["nic"])
    assert e.value.msg.startswith("nothing was changed: nic (hpcnet.rdma.nic_tuning): interfaces[0].name: unknown interface 'data9'")
    assert lab.snapshot() == before
    assert not os.path.exists(lab.path(JDIR))


def test_steps_and_sections_exclude_each_other_and_one_is_required():
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
    import copy

    def errors(params):
        validator = ArgumentSpecValidator(copy.deepcopy(node_tuning.ARGUMENT_SPEC), mutually_exclusive=node_tuning.MUTUALLY_EXCLUSIVE,
                                          required_one_of=node_tuning.REQUIRED_ONE_OF)
        return "; ".join(validator.validate(params).error_messages)

    assert "mutually exclusive: steps|nic" in errors({"steps": steps(), "nic": sections()["nic"]})
    assert "one of the following is required: steps, sysctl, nic, irq, qos, services, files" in errors({})
    assert errors({"nic": sections()["nic"]}) == "" and errors({"steps": steps()}) == ""


def test_a_section_takes_its_module_s_options_less_the_call_s_shared_ones():
    for concern, module in _node_tuning.SECTIONS:
        own = set(_node_tuning.body(module).ARGUMENT_SPEC) - set(_node_tuning.SHARED)
        assert set(node_tuning.ARGUMENT_SPEC[concern]["options"]) == own, concern


def test_the_sections_docs_are_generated_from_the_modules_docs():
    """plugins/doc_fragments/node_tuning_sections.py is scripts/section_docs.py's output, for the same sections."""
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts", "section_docs.py")
    spec = importlib.util.spec_from_file_location("section_docs", path)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert [tuple(s) for s in gen.SECTIONS] == list(_node_tuning.SECTIONS)
    assert gen.SHARED == _node_tuning.SHARED
    with open(gen.TARGET, encoding="utf-8") as f:
        assert f.read() == gen.render(), "stale: run python3 scripts/section_docs.py"
