# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Profile switching on the engine: ``release_scope`` returns what a call no longer manages to its
pre-tuning original, ``journal_run`` makes ``rollback scope=last`` undo a whole run, and status
names the applied profile and every key that drifted."""
from __future__ import annotations

import json
import shutil

import pytest

from ansible_collections.hpcnet.rdma.plugins.modules import managed_files, nic_tuning, sysctl_tuning, tuning_state

from ...conftest import Failed, FakeModule, FakeNic

PERSIST = "/etc/sysctl.d/90-hpcnet-rdma.conf"
LINK = "/etc/systemd/network/10-hpcnet-rdma-data0.link"
PROFILE = "/etc/hpcnet-rdma/profile.json"

# two "profiles" as the tuning role hands them to the modules
PEAK = {"sysctls": {"net.core.rmem_max": 268435456, "net.core.busy_poll": 50, "vm.swappiness": 10},
        "nic": [{"name": "data0", "mtu": 9000, "rings": {"rx": 1024, "tx": 1024}}]}
OFFPEAK = {"sysctls": {"net.core.rmem_max": 16777216},
           "nic": [{"name": "data0", "mtu": 9000}]}


@pytest.fixture
def lab(node):
    node.sysctl("net.core.rmem_max", "212992")
    node.sysctl("net.core.busy_poll", "0")
    node.sysctl("vm.swappiness", "60")
    node.add_nic(FakeNic("data0", "virtio_net", max_mtu=65535, mac="52:54:00:00:00:02",
                         rings={"max": {"rx": 4096, "tx": 4096}, "current": {"rx": 256, "tx": 256}}))
    return node


def sysctl(node, sysctls, check=False, **params):
    params.update(sysctls=sysctls, context="host")
    return sysctl_tuning.run(FakeModule(sysctl_tuning.ARGUMENT_SPEC, params, check_mode=check), node.host())


def nic(node, interfaces, check=False, **params):
    params.update(interfaces=interfaces, management_connection="none")
    return nic_tuning.run(FakeModule(nic_tuning.ARGUMENT_SPEC, params, check_mode=check), node.host())


def record(node, name, **params):
    params["files"] = [{"path": PROFILE, "content": json.dumps({"name": name, "digest": "sha256:" + name})}]
    return managed_files.run(FakeModule(managed_files.ARGUMENT_SPEC, params), node.host())


def state(node, check=False, **params):
    module = FakeModule(tuning_state.ARGUMENT_SPEC, params, check_mode=check)
    out = tuning_state.run(module, node.host())
    out["_warnings"] = module.warnings
    return out


def apply(node, profile, run, check=False):
    """What the role does for one profile: each concern with its release scope, one run id."""
    common = {"journal_run": run}
    out = [sysctl(node, profile["sysctls"], check=check, release_scope="tuning.sysctl", **common),
           nic(node, profile["nic"], check=check, release_scope="tuning.nic", **common)]
    if not check:
        out.append(record(node, profile is PEAK and "peak" or "offpeak", release_scope="tuning.profile", **common))
    return out


def outside_journal(node, snap):
    jdir = node.path("/var/lib/hpcnet-rdma")
    return {"files": dict((k, v) for k, v in snap["files"].items() if not k.startswith(jdir)), "nics": snap["nics"]}


def test_a_key_the_new_profile_does_not_set_goes_back_to_its_original(lab):
    apply(lab, PEAK, "r1")
    assert lab.read("/proc/sys/net/core/busy_poll") == "50"
    apply(lab, OFFPEAK, "r2")
    assert lab.read("/proc/sys/net/core/rmem_max") == "16777216"
    assert lab.read("/proc/sys/net/core/busy_poll") == "0"        # original, not the peak value
    assert lab.read("/proc/sys/vm/swappiness") == "60"
    assert lab.nics["data0"].rings["current"] == {"rx": 256, "tx": 256}
    assert "net.core.busy_poll" not in lab.read(PERSIST)           # the boot file names only what is set
    assert "RxBufferSize" not in lab.read(LINK)


def test_check_mode_predicts_the_release_exactly(lab):
    apply(lab, PEAK, "r1")
    before = lab.snapshot()
    predicted = apply(lab, OFFPEAK, "r2", check=True)
    assert lab.snapshot() == before
    real = apply(lab, OFFPEAK, "r2")
    for p, r in zip(predicted, real):
        assert p["changes"] == r["changes"]
    assert {"key": "sysctl:net.core.busy_poll", "before": "50", "after": "0"} in real[0]["changes"]
    again = apply(lab, OFFPEAK, "r3")
    assert not any(r["changed"] for r in again)


def test_rollback_last_undoes_exactly_the_last_switch(lab):
    apply(lab, PEAK, "r1")
    peak = lab.snapshot()
    apply(lab, OFFPEAK, "r2")
    predicted = state(lab, check=True, action="rollback", scope="last")
    done = state(lab, action="rollback", scope="last")
    assert done["changes"] == predicted["changes"]
    assert {c["key"].split(":")[0] for c in done["changes"]} >= {"sysctl", "nic", "file"}
    assert outside_journal(lab, lab.snapshot()) == outside_journal(lab, peak)
    assert state(lab, action="status")["profile"]["name"] == "peak"


@pytest.mark.parametrize("sequence", [["A", "B", "A", "B"], ["B", "A"], ["A", "A", "B", "B", "A"]])
def test_originals_stay_pre_tuning_over_many_switches(lab, sequence):
    pristine = lab.snapshot()
    for i, name in enumerate(sequence):
        apply(lab, PEAK if name == "A" else OFFPEAK, "r%d" % i)
    status = state(lab, action="status")
    assert status["tuned"]["sysctl:net.core.rmem_max"]["original"] == "212992"
    assert status["drift"] == []
    state(lab, action="rollback")
    assert outside_journal(lab, lab.snapshot()) == outside_journal(lab, pristine)
    assert state(lab, action="status")["tuned"] == {}


def test_release_touches_only_its_own_module_and_scope(lab):
    sysctl(lab, {"vm.swappiness": 10})                                  # a user's own call, no scope
    sysctl(lab, {"net.core.busy_poll": 50}, release_scope="site.extra")
    apply(lab, PEAK, "r1")
    apply(lab, OFFPEAK, "r2")
    assert lab.read("/proc/sys/net/core/busy_poll") == "50"            # another scope: kept
    # vm.swappiness: the unscoped call set 10; the peak profile found it at 10 and changed nothing, so
    # the scope never claimed it and offpeak leaves it to the call that set it
    assert lab.read("/proc/sys/vm/swappiness") == "10"


def test_an_empty_call_with_a_scope_releases_everything_of_that_scope(lab):
    pristine = lab.snapshot()
    apply(lab, PEAK, "r1")
    sysctl(lab, {}, release_scope="tuning.sysctl")
    nic(lab, [], release_scope="tuning.nic")
    managed_files.run(FakeModule(managed_files.ARGUMENT_SPEC, {"files": [], "release_scope": "tuning.profile"}),
                      lab.host())
    assert outside_journal(lab, lab.snapshot()) == outside_journal(lab, pristine)


@pytest.mark.parametrize("call, field", [(nic, "interfaces")])
def test_an_empty_call_without_a_scope_is_refused(lab, call, field):
    before = lab.snapshot()
    with pytest.raises(Failed) as e:
        call(lab, {} if field == "sysctls" else [])
    assert e.value.msg.startswith(field + ": at least one") and "release_scope" in e.value.msg
    assert lab.snapshot() == before


def test_an_empty_sysctls_without_a_scope_is_a_no_op(lab):
    """Issue 30: an empty ``sysctls`` was an error; a user expects nothing to happen, and nothing is created."""
    before = lab.snapshot()
    out = sysctl(lab, {})
    assert out["changed"] is False and out["changes"] == []
    assert lab.snapshot() == before


def test_a_released_key_that_cannot_be_read_stays_with_a_warning(lab):
    apply(lab, PEAK, "r1")
    del lab.nics["data0"]
    shutil.rmtree(lab.path("/sys/class/net/data0"))
    module = FakeModule(nic_tuning.ARGUMENT_SPEC, {"interfaces": [], "management_connection": "none",
                                                   "release_scope": "tuning.nic"})
    nic_tuning.run(module, lab.host())
    assert any("nic:data0:mtu" in w and "stays in the journal" in w for w in module.warnings)
    assert "nic:data0:mtu" in state(lab, action="status")["tuned"]


def test_status_names_the_profile_and_every_drifted_key(lab):
    apply(lab, PEAK, "r1")
    lab.sysctl("net.core.rmem_max", "4194304")          # somebody changed it behind our back
    status = state(lab, action="status")
    assert status["profile"]["name"] == "peak" and status["profile"]["applied_at"]
    assert status["profile"]["generation"] == status["generations"][-1]["id"]
    assert [d["key"] for d in status["drift"]] == ["sysctl:net.core.rmem_max"]
    assert status["drift"][0]["applied"] == "268435456" and status["drift"][0]["current"] == "4194304"
    assert {g["run"] for g in status["generations"]} == {"r1"}
    assert {g.get("scope") for g in status["generations"]} == {"tuning.sysctl", "tuning.nic", "tuning.profile"}


def test_status_without_a_recorded_profile(lab):
    sysctl(lab, {"vm.swappiness": 10})
    assert state(lab, action="status")["profile"] is None


@pytest.mark.parametrize("content, error", [("{not json", "not JSON"), ("[1, 2]", "not a JSON object")])
def test_a_broken_profile_record_is_reported_not_raised(lab, content, error):
    apply(lab, PEAK, "r1")
    lab.write(PROFILE, content, 0o644)
    profile = state(lab, action="status")["profile"]
    assert profile["file"] == PROFILE and error in profile["error"]
