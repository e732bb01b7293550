# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The rdma_verify role's tasks (issue 14): each node costs one module call (verify_info, which
reads the drift and the QoS too) plus the path-MTU ping; the check families still decide what is
read (drift only with the drift family, QoS with consistency or checklist); and the node the role
hands to the comparison keeps its info/state/qos keys.  Rendered by Ansible's Templar with the
role's defaults and vars, as a play would."""
from __future__ import annotations

from typing import Any, Dict

import pytest

from ..role_render import action, load, render as render_with

MAIN = load("rdma_verify", "tasks/main.yml")
VALIDATE = load("rdma_verify", "tasks/validate.yml")
# What runs on the controller or only sets variables: not a module round trip to a node.
NOT_A_NODE_CALL = {"ansible.builtin.import_tasks", "ansible.builtin.set_fact", "ansible.builtin.debug",
                   "ansible.builtin.fail", "hpcnet.rdma.fabric_verify_info", "ansible.builtin.meta"}


def task_of(name: str) -> Dict[str, Any]:
    return next(t for t in MAIN if action(t) == name)


def render(value: Any, **variables: Any) -> Any:
    env = dict(load("rdma_verify", "defaults/main.yml"))
    env.update(variables)
    return render_with(value, env)


def test_one_module_call_per_node_plus_the_ping():
    per_node = [action(t) for t in MAIN if action(t) not in NOT_A_NODE_CALL and not t.get("run_once")]
    assert per_node == ["hpcnet.rdma.verify_info", "ansible.builtin.command"]
    everything = [action(t) for t in MAIN + VALIDATE]
    assert "hpcnet.rdma.tuning_state" not in everything and "hpcnet.rdma.roce_qos_info" not in everything
    assert all(t.get("run_once") for t in MAIN if action(t) == "hpcnet.rdma.fabric_verify_info")


@pytest.mark.parametrize("families, drift, qos", [
    (["drift", "consistency", "path_mtu", "checklist"], True, True),
    (["drift"], True, False),
    (["consistency"], False, True),
    (["checklist"], False, True),
    (["path_mtu"], False, False),
    ([], False, False),
])
def test_the_families_decide_what_verify_info_reads(families, drift, qos):
    task = task_of("hpcnet.rdma.verify_info")
    assert task["failed_when"] is False        # a node that cannot be read is a finding, not a failed play
    args = render(task["hpcnet.rdma.verify_info"], __rdma_verify_families=families,
                  rdma_interfaces=[{"name": "data0"}, {"mtu": 9000}])
    assert (args["drift"], args["qos"]) == (drift, qos)
    assert args["journal_dir"] == "/var/lib/hpcnet-rdma" and args["fallback_interfaces"] == ["data0"]


FACTS = {"fabric": {}, "data_interfaces": ["data0"]}
STATE = {"drift": [], "profile": None, "interrupted": [], "generations": [], "tuned": {}}
QOS = {"interfaces": {}, "rdma_ports": [], "findings": [], "unsupported": []}
FAILED = {"failed": True, "msg": "journal /var/lib/hpcnet-rdma/journal.json is corrupt"}


@pytest.mark.parametrize("result, state, qos", [
    (dict(FACTS, state=STATE, qos=QOS), STATE, QOS),
    (dict(FACTS, state=FAILED, qos=QOS), FAILED, QOS),     # drift.unavailable
    (dict(FACTS, qos=QOS), {"skipped": True}, QOS),           # drift family off
    (dict(FACTS, state=STATE), STATE, {"skipped": True}),     # QoS families off or no data interface
    ({"failed": False, "msg": "/proc/interrupts: no CPU header line", "state": STATE}, STATE, {"skipped": True}),
])
def test_the_node_keeps_info_state_and_qos(result, state, qos):
    facts = task_of("ansible.builtin.set_fact")["ansible.builtin.set_fact"]
    node = render(facts, __rdma_verify_info=result)["__rdma_verify_node"]
    assert node == {"info": result, "state": state, "qos": qos, "interfaces": []}


def test_only_a_no_op_carries_the_family_tags():
    """--list-tags shows the families; --skip-tags of one family must not skip a task that serves the
    others, so every real task is tagged always and nothing else, and the families sit on a meta noop."""
    families = ["drift", "consistency", "path_mtu", "checklist"]
    (noop,) = [t for t in MAIN if set(t.get("tags", [])) & set(families)]
    assert noop["ansible.builtin.meta"] == "noop" and noop["tags"] == families
    assert all(t["tags"] == ["always"] for t in MAIN + VALIDATE if t is not noop)
