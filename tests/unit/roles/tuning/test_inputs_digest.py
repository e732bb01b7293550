# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The tuning role's inputs digest (tasks/main.yml's set_fact of __rdma_values from vars/main.yml's
__rdma_inputs - the profile resolved by hpcnet.rdma.resolve_profile - and __rdma_inputs_digest of it,
rendered with Ansible's Templar): every variable of the tuning, rdma_core and fabric_app_config argument specs, every
resolved value, the management address and the collection version change it; what a run
produces (its id, registered results) does not.  And the fast path is only for full runs."""
from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import pytest
import yaml

from ..role_render import ROOT, load, render

# The digest's lookups (varnames, vars) are plugins, and loading plugins installs Ansible's
# collection finder for the whole process: the digests are rendered in a child process, all at once.
CHILD = r"""
import json, sys
from ansible.plugins.loader import init_plugin_loader
init_plugin_loader([])
from ansible_collections.hpcnet.rdma.tests.unit.roles.role_render import render, trusted
task, digest, cases = json.load(sys.stdin)
out = [render(digest, dict(v, __rdma_values=render(task["__rdma_values"], dict(v, **trusted(task))))) for v in cases]
json.dump(out, sys.stdout)
"""

MAIN = load("tuning", "tasks/main.yml")
ROLE_VARS = load("tuning", "vars/main.yml")
# the run's values (a set_fact of tasks/main.yml), what they are computed from, and their digest (vars/main.yml)
VALUES_TASK = next(t for t in MAIN if "__rdma_values" in t.get("ansible.builtin.set_fact", {}))
SYNC = dict(__rdma_values=VALUES_TASK["ansible.builtin.set_fact"]["__rdma_values"],
            **dict((k, ROLE_VARS[k]) for k in ("__rdma_inputs", "__rdma_input_vars")))
DIGEST = ROLE_VARS["__rdma_inputs_digest"]


def _options(role):
    return load(role, "meta/argument_specs.yml")["argument_specs"]["main"]["options"]


# every variable a run can be given: the three roles' argument specs (rdma_core and fabric_app_config
# are included by the tuning role and read their own variables from the inventory)
OPTIONS = sorted(set(_options("tuning")) | set(_options("rdma_core")) | set(_options("fabric_app_config")))

# the built-in profiles a case resolves rdma_profile from (stand-ins for vars/profiles.yml)
BUILTIN = {"mpi": {"description": "d", "sysctls": {"net.ipv4.tcp_sack": 0}, "nic": {"mtu": 9000},
                   "irq": {"policy": "spread-local"}, "services": {"stop": [], "disable": []}},
           "offpeak": {"description": "d", "sysctls": {"net.ipv4.tcp_sack": 0}, "nic": {"mtu": 9000},
                       "irq": {"policy": "spread-local"}, "services": {"stop": [], "disable": []}}}


def builtin(**sections):
    """BUILTIN with mpi's sections replaced."""
    return dict(BUILTIN, mpi=dict(BUILTIN["mpi"], **sections))


def base_vars():
    variables = dict(load("tuning", "defaults/main.yml"))
    variables.update((k, v) for k, v in ROLE_VARS.items() if k in ("__rdma_collection_version", "__rdma_digest_exclude",
                                                                   "__rdma_record_path", "__rdma_local_connections"))
    variables.update({
        "inventory_hostname": "node1", "ansible_host": "10.0.0.1", "rdma_profile": "mpi",
        "__rdma_run": "20261205T000000Z-000001", "__rdma_builtin_profiles": BUILTIN,
    })
    return variables


def digests(cases):
    """The inputs digest for each dict of variables."""
    done = subprocess.run([sys.executable, "-c", CHILD], input=json.dumps([SYNC, DIGEST, cases]), capture_output=True,
                          text=True, check=False, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _other(value):
    """A value of another type or content than ``value``."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, list):
        return value + ["x"]
    if isinstance(value, dict):
        return dict(value, x=1)
    return "set"


def _with(name, value):
    variables = base_vars()
    variables[name] = value
    return variables


# a value of the variable's own type where the run's values combine it (rdma_roce_qos has no default)
TYPED = {"rdma_roce_qos": {"trust": "dscp"}, "rdma_profile": "offpeak", "rdma_profiles": {"site": {"extends": "mpi"}}}
CHANGING = [(name, TYPED.get(name, _other(base_vars().get(name)))) for name in OPTIONS if name != "rdma_fast_rerun"] + [
    ("__rdma_builtin_profiles", builtin(sysctls={"net.ipv4.tcp_sack": 1})),
    ("__rdma_builtin_profiles", builtin(nic={"mtu": 4200})),
    ("__rdma_builtin_profiles", builtin(irq={"policy": "single"})),
    ("__rdma_builtin_profiles", builtin(irq={"policy": "spread-local", "reserved_cpus": "0"})),
    ("__rdma_builtin_profiles", builtin(qos={"trust": "dscp"})),
    ("__rdma_builtin_profiles", builtin(services={"stop": ["irqbalance.service"], "disable": []})),
    ("ansible_connection", "community.docker.docker"),   # the management connection: none
    ("ansible_host", "10.0.0.2"),
    ("__rdma_collection_version", "0.4.0"),
    ("__rdma_record_path", "/etc/elsewhere.json"),
    ("rdma_site_extra", "any rdma_* variable the inventory sets"),
    ("fabric_app_config_extra", "any fabric_app_config_* variable"),
]
KEEPING = [
    ("__rdma_builtin_profiles", builtin(description="same values, other text")),   # the profile's values count
    ("__rdma_builtin_profiles", dict(BUILTIN, site={"extends": "mpi"})),            # a profile this run does not use
    ("__rdma_run", "20261206T000000Z-000002"),        # every run has its own id
    ("rdma_core_packages_result", {"changed": True}),  # results of an earlier play
    ("rdma_core_reboot_required", True),
    ("fabric_app_config_result", {"changed": True}),
    ("rdma_fast_rerun", False),                        # whether the check may skip, not what a run does
    ("ansible_check_mode", True),                      # a check-mode rerun may take the fast path too
    ("unrelated_variable", 1),
]


@pytest.fixture(scope="module")
def rendered():
    out = digests([base_vars()] + [_with(n, v) for n, v in CHANGING + KEEPING])
    return out[0], dict(zip(range(len(CHANGING) + len(KEEPING)), out[1:]))


@pytest.mark.parametrize("index", range(len(CHANGING)), ids=[n for n, _v in CHANGING])
def test_every_variable_and_resolved_value_changes_the_digest(rendered, index):
    """Every variable of the three argument specs, any other rdma_* or fabric_app_config_* one,
    every resolved value, the management address and the collection version."""
    base, out = rendered
    assert len(base) == 64 and out[index] != base, CHANGING[index]


@pytest.mark.parametrize("index", range(len(KEEPING)), ids=[n for n, _v in KEEPING])
def test_what_a_run_produces_does_not_change_the_digest(rendered, index):
    base, out = rendered
    assert out[len(CHANGING) + index] == base, KEEPING[index]


def test_the_collection_version_is_galaxy_yml_s():
    with open(ROOT + "/galaxy.yml", encoding="utf-8") as f:
        assert ROLE_VARS["__rdma_collection_version"] == yaml.safe_load(f)["version"]


def fast_allowed(**overrides):
    variables = dict(load("tuning", "defaults/main.yml"), ansible_run_tags=["all"], ansible_skip_tags=[],
                     __rdma_concern_tags=ROLE_VARS["__rdma_concern_tags"])
    variables.update(overrides)
    return render("{{ %s }}" % ROLE_VARS["__rdma_fast_allowed"].strip().lstrip("{").rstrip("}"), variables)


@pytest.mark.parametrize("overrides, allowed", [
    ({}, True),
    ({"rdma_fast_rerun": False}, False),
    ({"ansible_run_tags": ["sysctl"]}, False),
    ({"ansible_run_tags": ["all", "sysctl"]}, False),
    ({"ansible_skip_tags": ["irq"]}, False),
    ({"ansible_skip_tags": ["always"]}, False),
    ({"ansible_skip_tags": ["tagged"]}, False),
    ({"ansible_skip_tags": ["molecule-notest", "notest"]}, True),   # skips nothing of the role
    ({"rdma_switch": True}, False),
    ({"rdma_mode": "bake"}, False),
])
def test_the_fast_path_is_for_full_runs_only(overrides, allowed):
    assert fast_allowed(**overrides) is allowed


def test_the_scopes_are_the_concerns_release_scopes():
    variables = dict(load("tuning", "defaults/main.yml"), __rdma_qos={})

    def scopes(**kw):
        return render(ROLE_VARS["__rdma_scopes"], dict(copy.deepcopy(variables), **kw))

    assert scopes() == ["tuning.sysctl", "tuning.nic", "tuning.irq", "tuning.qos", "tuning.services", "tuning.record"]
    assert scopes(rdma_stack=True)[0] == "tuning.stack"
    assert "tuning.app_config" in scopes(__rdma_qos={"interfaces": ["data0"]})
    assert "tuning.app_config" not in scopes(__rdma_qos={"interfaces": ["data0"], "app_config": False})


def test_every_concern_ends_with_the_role_when_in_sync():
    """The fast path (end_role after apply.yml's call, whose result carries the summary: node_tuning's
    action) comes after the one place the in-sync answer is read - apply.yml's node_tuning call - and
    before anything else that changes the node: the app config's role, the record's own call.
    before.yml (the stack's role, a switch's check for a record) asks nothing of the kind."""
    before = load("tuning", "tasks/before.yml")
    steps = [t.get("ansible.builtin.import_tasks") or next(k for k in t if k.startswith(("hpcnet.", "ansible.")))
             for t in before]
    assert steps == ["ansible.builtin.stat", "ansible.builtin.assert", "stack.yml"]
    imports = [t.get("ansible.builtin.import_tasks") for t in MAIN]
    include = next(i for i, t in enumerate(MAIN) if "ansible.builtin.include_tasks" in t)
    # after apply.yml's call: the role ends (its result carried the summary: node_tuning's action)
    second = next(i for i, t in enumerate(MAIN) if t.get("ansible.builtin.meta") == "end_role")
    assert [i for i, t in enumerate(MAIN) if t.get("ansible.builtin.meta") == "end_role"] == [second]
    assert include < imports.index("apply.yml") < second < imports.index("app_config.yml")
    assert second < next(i for i, t in enumerate(MAIN) if "hpcnet.rdma.node_tuning" in t)
    assert MAIN[second]["when"] == "__rdma_fast | bool"
    summary = load("tuning", "tasks/apply.yml")[0]["hpcnet.rdma.node_tuning"]["summary"]
    assert sorted(summary) == ["digest", "profile", "rdma_mode", "run", "scopes"]
    summaries = [t for t in MAIN if t.get("ansible.builtin.import_tasks") == "summary.yml"]
    assert [t["when"] for t in summaries] == ["not __rdma_fast | bool"]


def test_the_sync_is_asked_once_per_run_inside_the_one_call():
    """apply.yml's node_tuning call always asks (sync); the fast path is that call's own answer
    (skipped_steps), and a stack role that changed something before it leaves no fast path."""
    apply_call = load("tuning", "tasks/apply.yml")[0]
    sync = apply_call["hpcnet.rdma.node_tuning"]["sync"]
    assert sorted(sync) == ["inputs_digest", "profile_file", "scopes", "skip"]
    assert "vars" not in apply_call
    assert ROLE_VARS["__rdma_fast"].strip() == \
        "{{ __rdma_tuned.skipped_steps | default(false) | bool if __rdma_tuned is defined else false }}"
    assert ROLE_VARS["__rdma_sync"].strip() == \
        "{{ __rdma_tuned.sync | default({}, true) if __rdma_tuned is defined else {} }}"
    base = {"__rdma_fast_allowed": fast_allowed()}

    def skip(**kw):
        return render(sync["skip"], dict(copy.deepcopy(base), **kw))

    assert skip() is True                                   # no stack: the role registered nothing
    assert skip(rdma_core_packages_result={"changed": False}, rdma_core_stack_result={"changed": False}) is True
    assert skip(rdma_core_packages_result={"changed": False}, rdma_core_stack_result={"changed": True}) is False
    assert skip(rdma_core_packages_result={"changed": True}) is False
    assert skip(__rdma_fast_allowed=fast_allowed(rdma_fast_rerun=False)) is False
