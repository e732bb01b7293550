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


# The concerns that are sections of apply.yml's one hpcnet.rdma.node_tuning call (vars/main.yml:
# __rdma_sections), and the node_tuning section each is; the others (stack, app_config) include a role.
SECTION_OF = {"sysctl": "sysctl", "nic": "nic", "irq": "irq", "qos": "qos", "services": "services", "record": "files"}
ROLE_VARS = load("vars", "main.yml")


def test_main_imports_the_role_concerns_and_the_one_call():
    imports = [(t["ansible.builtin.import_tasks"], t["tags"]) for t in MAIN if "ansible.builtin.import_tasks" in t]
    # the app config after the one call (it needs the qos result); before.yml (included): a switch's
    # check for a recorded profile, the stack
    assert imports == [("apply.yml", ["always"]), ("app_config.yml", ["app_config"]), ("summary.yml", ["always"])]
    # the one call may find the node in sync: it summarized (its action), the role ends (a meta task)
    end = next(i for i, t in enumerate(MAIN) if t.get("ansible.builtin.meta") == "end_role")
    assert MAIN[end - 1].get("ansible.builtin.import_tasks") == "apply.yml"
    assert MAIN[end]["when"] == "__rdma_fast | bool" and MAIN[end]["tags"] == ["always"]
    (include,) = [t for t in MAIN if "ansible.builtin.include_tasks" in t]
    assert include["ansible.builtin.include_tasks"] == "before.yml" and include["tags"] == ["always"]
    assert include["when"] == "rdma_stack | bool or (rdma_switch | bool and rdma_switch_requires_profile | bool)"
    before = [(t.get("ansible.builtin.import_tasks"), t["tags"]) for t in tasks_of("before")]
    assert before == [(None, ["always"]), (None, ["always"]), ("stack.yml", ["stack"])]
    assert ROLE_VARS["__rdma_concern_tags"] == CONCERNS
    assert set(ROLE_VARS["__rdma_sections"]) | {"stack", "app_config"} == set(CONCERNS)


def test_checks_run_with_any_tag_and_before_any_change():
    first_concern = next(i for i, t in enumerate(MAIN) if "ansible.builtin.include_tasks" in t)
    checks = MAIN[:first_concern] + tasks_of("before")[:-1]
    assert checks and all(t["tags"] == ["always"] for t in checks[1:])
    # the tags check also carries every concern's tag, for --list-tags
    assert checks[0]["name"] == "Tags select at least one concern" and checks[0]["tags"] == ["always"] + CONCERNS
    # the tags are the run's: checked once, not per host (a run_once failure fails every host)
    assert checks[0]["run_once"] is True and not any(t.get("run_once") for t in checks[1:])
    # before any change: asserts, the one set_fact, and a read-only stat of the record (a switch's check)
    assert {action(t) for t in checks} <= {"ansible.builtin.assert", "ansible.builtin.set_fact", "ansible.builtin.stat"}
    # no in-sync question beside the one call: no tuning_state call in the role, no fast.yml
    assert not any("hpcnet.rdma.tuning_state" in t for name in ("main", "before", "apply") for t in tasks_of(name))
    assert not os.path.exists(os.path.join(ROLE, "tasks", "fast.yml"))
    # the summary: one task per host, on the controller
    assert [action(t) for t in tasks_of("summary")] == ["hpcnet.rdma.tuning_summary"]


def test_run_id_and_values_are_computed_once():
    """One set_fact: the run id, and every input of the run (__rdma_values) - the profile resolved in
    the one template of __rdma_inputs; the module mode, the management connection and the resolved
    profile are read from that fact (templated once per host, not per use)."""
    facts = [t["ansible.builtin.set_fact"] for t in MAIN if "ansible.builtin.set_fact" in t]
    assert len(facts) == 1
    assert "__rdma_run" in facts[0] and facts[0]["__rdma_values"] == "{{ __rdma_inputs }}"
    assert ROLE_VARS["__rdma_inputs"].count("hpcnet.rdma.resolve_profile(__rdma_builtin_profiles, rdma_profiles)") == 1
    for name, key in (("__rdma_resolved", "profile"), ("__rdma_module_mode", "module_mode"),
                      ("__rdma_management_connection", "management.connection"), ("__rdma_sysctls", "sysctls"),
                      ("__rdma_qos", "qos")):
        assert ROLE_VARS[name] == "{{ __rdma_values.%s }}" % key


def test_the_concerns_are_one_node_tuning_call_in_the_run():
    """apply.yml's call (and the record's own call after the app config) join the run, with the
    role's journal and module mode; the record's own call is exactly when apply.yml leaves it out."""
    apply_call, record_call = [t for t in tasks_of("apply") + MAIN if "hpcnet.rdma.node_tuning" in t]
    for call in (apply_call, record_call):
        options = call["hpcnet.rdma.node_tuning"]
        assert options["journal_run"] == RUN and options["journal_dir"] == "{{ rdma_journal_dir }}"
    assert apply_call["hpcnet.rdma.node_tuning"]["mode"] == "{{ __rdma_module_mode }}"
    # one section per concern, given only when the concern is selected (no steps list built in Jinja)
    for concern, section in SECTION_OF.items():
        assert apply_call["hpcnet.rdma.node_tuning"][section] == \
            "{{ __rdma_sections.%s if '%s' in __rdma_apply_concerns else omit }}" % (concern, concern)
    assert "steps" not in apply_call["hpcnet.rdma.node_tuning"]
    assert "__rdma_app_config_runs" in ROLE_VARS["__rdma_apply_concerns"]
    assert record_call["hpcnet.rdma.node_tuning"]["files"] == "{{ __rdma_sections.record }}"
    assert "__rdma_app_config_runs" in record_call["when"]
    assert tasks_of("app_config")[0]["when"] == "__rdma_app_config_runs | bool"


@pytest.mark.parametrize("concern", CONCERNS)
def test_every_journaling_call_joins_the_run_with_its_release_scope(concern):
    """A section concern is one section of the call with its release scope and nothing else of the run
    (apply.yml gives the call journal_run, journal_dir and mode); a role concern includes its role with
    module_defaults."""
    from ansible_collections.hpcnet.rdma.plugins.module_utils.tuning._module import SECTIONS

    scope = "tuning." + concern
    if concern in ROLE_VARS["__rdma_sections"]:
        assert SECTION_OF[concern] in dict(SECTIONS)
        args = ROLE_VARS["__rdma_sections"][concern]
        if isinstance(args, str):    # qos: its options filtered from the profile's section
            assert "'release_scope': '%s'" % scope in args
        else:
            assert args["release_scope"] == scope
            assert not {"journal_run", "journal_dir", "mode"} & set(args), concern
        return
    calls = 0
    for task in tasks_of(concern):
        name = action(task)
        if name == "ansible.builtin.include_role":
            calls += 1
            role = task[name]["name"]
            apply = task[name]["apply"]
            assert apply["tags"] == [concern]
            assert set(apply["module_defaults"]) == ROLE_MODULES[role], role
            for options in apply["module_defaults"].values():
                assert options == {"journal_run": RUN, "release_scope": scope}, role
        else:
            assert name is None or not name.startswith("hpcnet."), (concern, name)
    assert calls == 1, "one role per role concern"


@pytest.mark.parametrize("concern", CONCERNS)
def test_every_concern_runs_in_bake_mode_too(concern):
    """rdma_mode=bake reaches every concern (module mode persist, rdma_core_mode) and skips none: a
    part that cannot be baked must say so in its module's result, not vanish from the bake."""
    if concern in ROLE_VARS["__rdma_sections"]:
        assert "rdma_mode" not in str(ROLE_VARS["__rdma_sections"][concern])
        (call,) = [t for t in tasks_of("apply") if "hpcnet.rdma.node_tuning" in t]
        sections = [v for k, v in call["hpcnet.rdma.node_tuning"].items() if k in SECTION_OF.values()]
        assert "rdma_mode" not in ROLE_VARS["__rdma_apply_concerns"] + str(sections) + call["when"]
        return
    for task in tasks_of(concern):
        assert "rdma_mode" not in str(task.get("when", "")), (concern, task["name"])
        name = action(task)
        if name == "ansible.builtin.include_role" and task[name]["name"] == "hpcnet.rdma.rdma_core":
            assert task["vars"]["rdma_core_mode"] == "{{ rdma_mode }}"


def variables_read():
    names = set()
    # the task files, and vars/main.yml (each section concern's options are there, __rdma_sections)
    for fname in [os.path.join("tasks", n) for n in os.listdir(os.path.join(ROLE, "tasks"))] + [os.path.join("vars", "main.yml")]:
        with open(os.path.join(ROLE, fname), encoding="utf-8") as f:
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
