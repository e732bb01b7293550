# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""verify_info reads all a verify needs of a node in one module call (issue 14): its ``state`` is
what ``tuning_state action=status`` returns and its ``qos`` what ``roce_qos_info`` returns on the data
interfaces, read by the same code, on the SIMULATED nodes of fake_qos.py; a part that cannot be
read is a ``{failed, msg}`` marker (a finding), not a failed module; and the findings of the
combined result are the findings of the three results the role registered before."""
from __future__ import annotations

import time

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.facts import _findings as _findings_node
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._journal import Journal
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Plan
from ansible_collections.hpcnet.rdma.plugins.modules import roce_qos_info, tuning_state, verify_info
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _findings, _findings_catalogue, _findings_fleet

from ...conftest import Failed, FakeModule
from .test_roce_qos import FULL, J, _node, lab_mlnx, lab_virtio, qos as tune_qos

# What the status and info modules add around the shared reader's result.
MODULE_ONLY = ("changed", "changes", "previous", "current")


def virtio(n):
    """The VM lab: soft-RoCE rxe0 on virtio-net data0 (no DCB), never tuned."""
    lab_virtio(n)


def mlnx_drifted(n):
    """A ConnectX port tuned by roce_qos (PFC on 3), then PFC moved to 4 behind the journal's back."""
    n.params = lab_mlnx(n)
    n.params.update(FULL)
    tune_qos(n)
    n.qos["ens1f0np0"].pfc = {4}


def interrupted(n):
    """The VM lab with a journal whose last generation a killed run left applying."""
    lab_virtio(n)
    journal = Journal(n.host(), J)
    journal.make_dir()
    journal.load()
    journal.begin("sysctl_tuning", Plan())    # and never commit


LABS = {"virtio": (virtio, []), "mlnx_drifted": (mlnx_drifted, ["mlnx_qos:ens1f0np0:pfc"])}


def verify(node, **params):
    p = dict(interval=0, ethtool=False)
    p.update(params)
    module = FakeModule(verify_info.ARGUMENT_SPEC, p)
    return verify_info.run(module, node.host()), module


def status(node):
    out = tuning_state.run(FakeModule(tuning_state.ARGUMENT_SPEC, {"action": "status"}), node.host())
    return dict((k, v) for k, v in out.items() if k not in MODULE_ONLY)


def qos_info(node, data):
    out = roce_qos_info.run(FakeModule(roce_qos_info.ARGUMENT_SPEC, {"interfaces": [{"name": n} for n in data]}),
                            node.host())
    return dict((k, v) for k, v in out.items() if k not in MODULE_ONLY)


def role_node(result):
    """What the role's set_fact makes of verify_info's result (roles/rdma_verify/tasks/main.yml)."""
    return {"info": result, "state": result.get("state", {"skipped": True}),
            "qos": result.get("qos", {"skipped": True}), "interfaces": []}


@pytest.mark.parametrize("lab", sorted(LABS))
@pytest.mark.parametrize("drift, qos", [(True, True), (True, False), (False, True), (False, False)])
def test_state_and_qos_are_what_the_two_modules_return(tmp_path, lab, drift, qos):
    n = _node(tmp_path)
    setup, drifted = LABS[lab]
    setup(n)
    out, module = verify(n, drift=drift, qos=qos)
    assert out["changed"] is False and module.warnings == []
    assert ("state" in out, "qos" in out) == (drift, qos)
    if drift:
        assert out["state"] == status(n)
        assert [d["key"] for d in out["state"]["drift"]] == drifted
    if qos:
        assert out["data_interfaces"] and out["qos"] == qos_info(n, out["data_interfaces"])
        assert out["qos"]["rdma_ports"][0]["netdev"] == out["data_interfaces"][0]


@pytest.mark.parametrize("lab", sorted(LABS))
def test_findings_of_one_call_are_the_findings_of_three(tmp_path, lab):
    """The role's node from one verify_info result gives the findings the three results gave."""
    n = _node(tmp_path)
    LABS[lab][0](n)
    out, _module = verify(n)
    three = {"info": dict((k, v) for k, v in out.items() if k not in ("state", "qos")),
             "state": dict(tuning_state.run(FakeModule(tuning_state.ARGUMENT_SPEC, {}), n.host())),
             "qos": dict(roce_qos_info.run(FakeModule(roce_qos_info.ARGUMENT_SPEC, {
                 "interfaces": [{"name": i} for i in out["data_interfaces"]]}), n.host())), "interfaces": []}
    hosts = ["a", "b"]
    one = {"a": role_node(out), "b": role_node(out)}
    old = {"a": three, "b": three}
    families = list(_findings_catalogue.FAMILIES)
    assert _findings.evaluate(one, hosts, families) == _findings.evaluate(old, hosts, families)
    ids = [f["id"] for f in _findings_fleet.drift(one, hosts)]
    assert ids == (["drift.no_profile"] * 2 if lab == "virtio" else ["drift.qos"])


def break_journal(n):
    n.write(J + "/journal.json", "{not json\n", 0o600)


def ghost_interface(n):
    """A data interface sysfs shows but ip does not (another view of the node): QoS cannot select it."""
    n.write("/sys/class/net/ghost0/mtu", "1500\n")


@pytest.mark.parametrize("breaks, params, failed_part, message, finding", [
    (break_journal, {}, "state", "is corrupt", "drift.unavailable"),
    (ghost_interface, {"interfaces": ["ghost0"]}, "qos", "interfaces[0].name: unknown interface 'ghost0'", None),
])
def test_a_part_that_cannot_be_read_is_reported_not_raised(tmp_path, breaks, params, failed_part, message, finding):
    n = _node(tmp_path)
    lab_virtio(n)
    breaks(n)
    out, _module = verify(n, **params)
    other = {"state": "qos", "qos": "state"}[failed_part]
    assert out[failed_part]["failed"] is True and message in out[failed_part]["msg"]
    assert sorted(out[failed_part]) == ["failed", "msg"]
    assert not out[other].get("failed") and out["fabric"]["netdevs"]
    ids = [f["id"] for f in _findings.evaluate({"a": role_node(out)}, ["a"], list(_findings_catalogue.FAMILIES))]
    if finding:
        assert finding in ids


def test_an_interrupted_generation_is_warned_and_in_state(tmp_path):
    n = _node(tmp_path)
    interrupted(n)
    out, module = verify(n)
    assert [(g["id"], g["module"]) for g in out["state"]["interrupted"]] == [(1, "sysctl_tuning")]
    assert module.warnings == [out["state"]["msg"]] and "generation 1 (sysctl_tuning" in out["state"]["msg"]
    ids = [f["id"] for f in _findings_fleet.drift({"a": role_node(out)}, ["a"])]
    assert "drift.interrupted" in ids


@pytest.mark.parametrize("drift, qos, parts", [(True, True, ["state"]), (False, True, []), (True, False, ["state"])])
def test_facts_that_fail_still_carry_the_drift(tmp_path, drift, qos, parts):
    """The facts fail before the data interfaces are known: the drift (which needs none) is still read."""
    n = _node(tmp_path)
    lab_virtio(n)
    n.write("/proc/interrupts", "no header here\n")
    with pytest.raises(Failed, match="/proc/interrupts: no CPU header line") as e:
        verify(n, drift=drift, qos=qos)
    assert sorted(e.value.result) == parts
    if drift:
        assert e.value.result["state"] == status(n)


@pytest.mark.parametrize("interval, takes, sleeps", [
    (1.0, 0.2, True),     # the parts take part of the interval; the second sample waits for the rest
    (0.1, 0.2, False),    # the parts take longer than the interval: no wait, the measured time is longer
    (0, 0, False),
])
def test_the_parts_run_inside_the_interval(tmp_path, interval, takes, sleeps):
    n = _node(tmp_path)
    lab_virtio(n)
    slept, seen = [], []

    def during(data):
        seen.append(list(data))
        time.sleep(takes)
        return {"state": {"drift": []}}

    out = _findings_node.gather(n.host(), dict(verify_info_defaults(), interval=interval), sleep=slept.append,
                                during=during)
    assert seen == [["data0"]] and out["state"] == {"drift": []}
    assert bool(slept) == sleeps
    if sleeps:
        assert 0 < slept[0] <= interval - takes
    assert out["delta"]["interval"] >= max(interval, takes)


def verify_info_defaults():
    return FakeModule(verify_info.ARGUMENT_SPEC, {"ethtool": False}).params


@pytest.mark.parametrize("params, message", [
    ({"interval": 61}, "interval: 61.0 is outside 0..60 seconds"),
    ({"drift": "perhaps"}, "drift"),
    ({"qos": "sometimes"}, "qos"),
])
def test_bad_input_names_the_field(tmp_path, params, message):
    n = _node(tmp_path)
    lab_virtio(n)
    with pytest.raises(Failed, match=message):
        verify(n, **params)
    assert n.calls == []
