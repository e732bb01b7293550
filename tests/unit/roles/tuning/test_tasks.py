# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The tuning role's task files, read as YAML: one file and one tag per concern, every journaling
call in the run's journal_run with its concern's release_scope, and every rdma_* variable the
tasks read is in meta/argument_specs.yml with the default defaults/main.yml gives it."""
from __future__ import annotations

import os
import re

import pytest
import yaml

import ansible_collections.hpcnet.rdma as collection

ROLE = os.path.join(list(collection.__path__)[0], "roles", "tuning")
CONCERNS = ["stack", "sysctl", "nic", "irq", "qos", "services", "app_config", "record"]
# Modules that write through the journal (their argument spec has journal_run and release_scope).
JOURNALING = {"hpcnet.rdma." + m for m in ("sysctl_tuning", "nic_tuning", "irq_affinity", "roce_qos", "service_state",
                                           "managed_files", "rdma_packages", "rdma_stack")}
# The journaling modules each included role calls (their tasks are not ours to edit).
ROLE_MODULES = {"hpcnet.rdma.rdma_core": {"hpcnet.rdma.rdma_packages", "hpcnet.rdma.rdma_stack"},
                "hpcnet.rdma.fabric_app_config": {"hpcnet.rdma.managed_files"}}
RUN = "{{ __rdma_run }}"


def load(*parts):
    with open(os.path.join(ROLE, *parts), encoding="utf-8") as f:
        return yaml.safe_load(f)


def tasks_of(name):
    return load("tasks", name + ".yml")


def action(task):
    return next((k for k in task if k.startswith(("hpcnet.", "ansible."))), None)


SPEC = load("meta", "argument_specs.yml")["argument_specs"]["main"]["options"]
MAIN = tasks_of("main")


def test_main_imports_one_file_per_concern_tagged_with_its_name():
    imports = [(t["ansible.builtin.import_tasks"], t["tags"]) for t in MAIN if "ansible.builtin.import_tasks" in t]
    # the summary twice: the in-sync fast path's (before the role ends for the host), the full run's
    assert imports == [("summary.yml", ["always"])] + [(c + ".yml", [c]) for c in CONCERNS] + \
        [("summary.yml", ["always"])]
    assert load("vars", "main.yml")["__rdma_concern_tags"] == CONCERNS


def test_checks_run_with_any_tag_and_before_any_change():
    checks = [t for t in MAIN if "ansible.builtin.import_tasks" not in t]
    assert checks and all(t["tags"] == ["always"] for t in checks)
    assert {action(t) for t in checks} <= {"ansible.builtin.assert", "ansible.builtin.set_fact",
                                           "hpcnet.rdma.tuning_state", "ansible.builtin.meta"}
    # the one module call before the concerns only reads
    assert [t["hpcnet.rdma.tuning_state"]["action"] for t in checks if "hpcnet.rdma.tuning_state" in t] == ["in_sync"]


def test_run_id_and_mode_are_computed_once():
    facts = [t["ansible.builtin.set_fact"] for t in MAIN if "ansible.builtin.set_fact" in t]
    assert sum("__rdma_run" in f for f in facts) == 1
    assert sum("__rdma_module_mode" in f for f in facts) == 1
    assert sum("__rdma_resolved" in f for f in facts) == 1
    assert "hpcnet.rdma.resolve_profile(__rdma_builtin_profiles, rdma_profiles)" in \
        next(f["__rdma_resolved"] for f in facts if "__rdma_resolved" in f)


@pytest.mark.parametrize("concern", CONCERNS)
def test_every_journaling_call_joins_the_run_with_its_release_scope(concern):
    scope = "tuning." + concern
    calls = 0
    for task in tasks_of(concern):
        name = action(task)
        if name in JOURNALING:
            calls += 1
            assert task[name]["journal_run"] == RUN, (concern, task["name"])
            assert task[name]["release_scope"] == scope, (concern, task["name"])
            assert task[name]["journal_dir"] == "{{ rdma_journal_dir }}", (concern, task["name"])
            if name != "hpcnet.rdma.managed_files":
                assert task[name]["mode"] in ("{{ __rdma_module_mode }}",), (concern, task["name"])
        elif name == "ansible.builtin.include_role":
            calls += 1
            role = task[name]["name"]
            apply = task[name]["apply"]
            assert apply["tags"] == [concern]
            assert set(apply["module_defaults"]) == ROLE_MODULES[role], role
            for options in apply["module_defaults"].values():
                assert options == {"journal_run": RUN, "release_scope": scope}, role
        else:
            assert name is None or not name.startswith("hpcnet."), (concern, name)
    assert calls == 1, "one module call (or role) per concern"


@pytest.mark.parametrize("concern", CONCERNS)
def test_every_concern_runs_in_bake_mode_too(concern):
    """rdma_mode=bake reaches every concern (module mode persist, rdma_core_mode) and skips none: a
    part that cannot be baked must say so in its module's result, not vanish from the bake."""
    for task in tasks_of(concern):
        assert "rdma_mode" not in str(task.get("when", "")), (concern, task["name"])
        name = action(task)
        if name == "ansible.builtin.include_role" and task[name]["name"] == "hpcnet.rdma.rdma_core":
            assert task["vars"]["rdma_core_mode"] == "{{ rdma_mode }}"


def variables_read():
    names = set()
    for fname in os.listdir(os.path.join(ROLE, "tasks")):
        with open(os.path.join(ROLE, "tasks", fname), encoding="utf-8") as f:
            text = f.read()
        names |= set(re.findall(r"(?<![\w.])rdma_[a-z_]+", text))
    # rdma_core_*: that role's variables; rdma_mtu: a roce_qos option name; rdma_tuning: the set_stats key
    return {n for n in names if not n.startswith("rdma_core_")} - {"rdma_mtu", "rdma_tuning"}


def test_every_variable_the_tasks_read_is_in_the_argument_specs():
    assert variables_read() == set(SPEC)


def test_defaults_equal_the_argument_specs():
    defaults = load("defaults", "main.yml")
    assert {k: v["default"] for k, v in SPEC.items() if "default" in v} == defaults
    # the profile decides these when they are unset
    assert {"rdma_irq_policy", "rdma_irq_reserved_cpus", "rdma_roce_qos", "rdma_management_connection"} == \
        set(SPEC) - set(defaults)
    assert "choices" not in SPEC["rdma_profile"], "users add profiles; the resolver validates the name"
