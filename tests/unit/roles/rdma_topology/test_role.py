# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The rdma_topology role: its argument specs refuse bad variables (Ansible checks them before the first task) and
match the defaults; every journaled call shares the run's journal_run; the graph is built once, the unplaced nodes
are named and - when every node must be placed - checked on every host before any file is written; the two files go
through managed_files with their own release scope.  Rendered by Ansible's Templar with the role's defaults and vars."""
from __future__ import annotations

import copy
import os
from typing import Any

import pytest
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ..role_render import action, load, render as render_with, role_dir

MAIN = load("rdma_topology", "tasks/main.yml")
DEFAULTS = load("rdma_topology", "defaults/main.yml")
VARS = load("rdma_topology", "vars/main.yml")
OPTIONS = load("rdma_topology", "meta/argument_specs.yml")["argument_specs"]["main"]["options"]
JOURNALED = ["hpcnet.rdma.rdma_packages", "hpcnet.rdma.service_state", "hpcnet.rdma.managed_files"]


def render(value: Any, **variables: Any) -> Any:
    env = dict(DEFAULTS)
    env.update(VARS)
    env.update(variables)
    return render_with(value, env)


def validate(**given: Any):
    spec = dict((k, dict((a, b) for a, b in v.items() if a in ("type", "elements", "default", "choices")))
                for k, v in copy.deepcopy(OPTIONS).items())
    return ArgumentSpecValidator(spec).validate(dict(DEFAULTS, **given))


def test_every_default_is_a_specified_option_with_that_default():
    assert sorted(DEFAULTS) == sorted(OPTIONS)
    for name, value in DEFAULTS.items():
        assert OPTIONS[name]["default"] == value, name
    assert not validate().error_messages


@pytest.mark.parametrize("name, value", [
    ("rdma_topology_hostfile_slots", "many"),
    ("rdma_topology_switch_links", {"leaf1": "spine1"}),
    ("rdma_topology_switch_hosts", {"leaf1": 1}),
    ("rdma_topology_switch_names", ["leaf1"]),
    ("rdma_topology_require_all_placed", "perhaps"),
])
def test_the_argument_specs_refuse_bad_variables(name, value):
    errors = validate(**{name: value}).error_messages
    assert errors and name in errors[0], errors


@pytest.mark.parametrize("given, ok", [
    ({}, True),
    ({"rdma_topology_hostfile_slots": 0}, False),
    ({"rdma_topology_slurm_conf": "topology.conf"}, False),
    ({"rdma_topology_hostfile_path": "hostfile"}, False),
    ({"rdma_topology_switch_links": [["leaf1", "spine1", "spine2"]]}, False),
    ({"rdma_topology_switch_links": [["leaf1"]]}, False),     # what the specs make of a bare "leaf1"
    ({"rdma_topology_switch_links": [["leaf1", "spine1"]]}, True),
])
def test_what_the_specs_cannot_say_is_checked_first(given, ok):
    first = MAIN[0]
    assert action(first) == "ansible.builtin.assert"
    assert all(render("{{ %s }}" % cond, **given) for cond in first["ansible.builtin.assert"]["that"]) is ok


def test_order_nothing_written_before_the_graph_and_the_placement_check():
    names = [action(t) for t in MAIN]
    graph = next(i for i, t in enumerate(MAIN) if "rdma_topology_graph" in t.get("ansible.builtin.set_fact", {}))
    placed = next(i for i, t in enumerate(MAIN) if "rdma_topology_require_all_placed" in str(t.get("when")))
    files = [i for i, n in enumerate(names) if n == "hpcnet.rdma.managed_files"]
    assert len(files) == 2 and graph < placed < min(files)
    assert MAIN[graph]["run_once"] is True
    # the placement check runs on every host: a run_once failure would not stop the other hosts' writes
    assert action(MAIN[placed]) == "ansible.builtin.assert" and "run_once" not in MAIN[placed]


def test_every_journaled_call_shares_the_run_and_the_journal():
    calls = [t for t in MAIN if action(t) in JOURNALED]
    assert sorted(set(action(t) for t in calls)) == sorted(JOURNALED)
    for t in calls:
        args = t[action(t)]
        assert args["journal_run"] == "{{ __rdma_topology_run }}" and args["journal_dir"] == "{{ rdma_topology_journal_dir }}"
    run = next(t for t in MAIN if "__rdma_topology_run" in t.get("ansible.builtin.set_fact", {}))
    assert run["run_once"] is True      # one id for the whole role run, on every host
    assert render(run["ansible.builtin.set_fact"], rdma_topology_journal_run="given")["__rdma_topology_run"].strip() == "given"


def test_the_two_files_have_their_own_release_scope():
    files = [t for t in MAIN if action(t) == "hpcnet.rdma.managed_files"]
    scopes = [render(t["hpcnet.rdma.managed_files"]["release_scope"]) for t in files]
    assert scopes == ["topology.slurm", "topology.hostfile"]
    slurm, hostfile = files
    assert slurm["delegate_to"] == "{{ item }}" and slurm["run_once"] is True
    assert render(slurm["loop"], groups={"slurm_controller": ["ctl1"]}) == ["ctl1"]
    assert render(slurm["loop"], groups={}) == []
    # off, the hostfile call still runs with no file: its scope puts back what an earlier run wrote
    assert render(hostfile["hpcnet.rdma.managed_files"]["files"], rdma_topology_hostfile=False,
                  rdma_topology_graph={}) == []


def test_the_unplaced_nodes_are_named_with_the_reason():
    warn = next(t for t in MAIN if action(t) == "ansible.builtin.debug")
    graph = {"unplaced": {"n5": "lldpcli not installed", "n6": "no LLDP neighbour advertising the bridge or router capability"}}
    assert render(warn["ansible.builtin.debug"]["msg"], rdma_topology_graph=graph) == [
        "n5: lldpcli not installed", "n6: no LLDP neighbour advertising the bridge or router capability"]
    assert render("{{ %s }}" % warn["when"], rdma_topology_graph={"unplaced": {}}) is False


def test_the_lab_does_not_start_lldpd_through_systemd_but_a_node_does():
    assert DEFAULTS["rdma_topology_start_lldpd"] is True
    start = next(t for t in MAIN if action(t) == "hpcnet.rdma.service_state")
    assert start["hpcnet.rdma.service_state"]["start"] == ["lldpd.service"]
    assert os.path.isfile(os.path.join(role_dir("rdma_topology"), "README.md"))
