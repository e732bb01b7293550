# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The tuning role's summary (plugin_utils/_tuning_summary.py, action hpcnet.rdma.tuning_summary):
which results count, the not-set lines per kind, the fast-path sentence, check mode's wording - and
the action run by the real ansible-playbook: shown once, and in the run's global custom stats keyed by host
(what ansible-runner, AWX's executor, keeps as the job's artifacts: tests/unit/test_awx_artifacts.py)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import ansible_collections.hpcnet.rdma as collection
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _tuning_summary as S

ROOT = list(collection.__path__)[0]
COLLECTIONS = os.path.dirname(os.path.dirname(os.path.dirname(ROOT)))
BINARY = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")

SYSCTL = {"changed": True, "changes": [{"key": "net.core.rmem_max"}, {"key": "net.core.wmem_max"}],
          "unsettable": [{"key": "net.core.rmem_max", "reason": "kernel-global in a container"}]}


@pytest.mark.parametrize("result, expected", [
    ({"unsettable": [{"key": "k", "reason": "r"}]}, ["not settable here: k - r"]),
    ({"refused": [{"key": "k", "reason": "r"}]}, ["refused: k - r"]),
    ({"refused": [{"irq": 41, "msg": "m"}]}, ["refused: 41 - m"]),          # irq, then msg as the reason
    ({"refused": [{"interface": "data0"}]}, ["refused: data0 - "]),
    ({"refused": [{}]}, ["refused: ? - "]),
    ({"unsupported": [{"interface": "data0", "feature": "adaptive-rx", "reason": "virtio"}]},
     ["unsupported: data0 adaptive-rx - virtio"]),
    ({"unsupported": [{"interface": "data0", "setting": "rx", "reason": "r"}]}, ["unsupported: data0 rx - r"]),
    ({"not_possible": [{"part": "rxe", "reason": "no module"}]}, ["not possible here: rxe - no module"]),
    ({"absent": [{"unit": "irqbalance.service", "reason": "not installed"}]},
     ["absent: irqbalance.service - not installed"]),
    ({"notes": ["one", {"not": "a string"}]}, ["note: one"]),
    ({"capped": [{"interface": "data0", "setting": "rx", "requested": 8192, "applied": 4096}]},
     ["capped: data0 rx 8192 -> 4096 (hardware maximum)"]),
    ({"unsettable": [{"key": "a", "reason": "x"}], "capped": [{"interface": "i", "setting": "s", "requested": 2,
                                                               "applied": 1}]},
     ["not settable here: a - x", "capped: i s 2 -> 1 (hardware maximum)"]),
    ({}, []),
])
def test_not_set_lines(result, expected):
    assert S.not_set(result) == expected


@pytest.mark.parametrize("results, changed, unset", [
    # a step that ran: its keys, and what it could not set
    ({"sysctl": [SYSCTL]}, {"sysctl": ["net.core.rmem_max", "net.core.wmem_max"]},
     {"sysctl": ["not settable here: net.core.rmem_max - kernel-global in a container"]}),
    # skipped (tags, when), not registered ({}), or without changes: no entry
    ({"nic": [{"skipped": True, "changes": []}], "irq": [{}], "qos": [{"changed": False}]}, {}, {}),
    # a step that ran and changed nothing: an empty entry (it ran)
    ({"irq": [{"changes": []}]}, {"irq": []}, {}),
    # two results of one concern (the stack's packages and stack): joined in order
    ({"stack": [{"changes": [{"key": "pkg:rdma-core"}]}, {"changes": [{"key": "module:rdma_rxe"}]}]},
     {"stack": ["pkg:rdma-core", "module:rdma_rxe"]}, {}),
    # the role's order, whatever order the dict has
    ({"record": [{"changes": []}], "sysctl": [{"changes": []}], "nic": [{"changes": []}]},
     {"sysctl": [], "nic": [], "record": []}, {}),
])
def test_summary_per_concern(results, changed, unset):
    out = S.summarize(results, "mpi", "d" * 64, None, "live", "run-1", "taken", False)
    assert out["changes"] == changed and list(out["changes"]) == list(changed)
    assert out["not_set"] == unset
    assert (out["profile"], out["previous_profile"], out["mode"], out["run"], out["fast_path"]) == \
        ("mpi", None, "live", "run-1", "taken")
    assert (out["check_mode"], out["outcome"]) == (False, "changed")


KEYS = ["profile", "digest", "previous_profile", "mode", "run", "check_mode", "outcome", "changes", "not_set",
        "fast_path"]


def test_check_mode_says_would_change_with_the_same_keys():
    """AWX and any other reader key on the summary's fields: the same snake_case keys in both modes, and
    whether the run was a check a field's value."""
    out = S.summarize({"sysctl": [SYSCTL]}, "mpi", "d", "balanced", "live", "r", "x", True)
    live = S.summarize({"sysctl": [SYSCTL]}, "mpi", "d", "balanced", "live", "r", "x", False)
    assert list(out) == list(live) == KEYS
    assert all(k == k.lower() and " " not in k and "-" not in k for k in KEYS)
    assert (out["check_mode"], out["outcome"]) == (True, "would_change")
    assert out["changes"] == live["changes"] == {"sysctl": ["net.core.rmem_max", "net.core.wmem_max"]}
    assert out["previous_profile"] == "balanced"


def test_stats_are_global_and_keyed_by_host():
    """ansible-runner (AWX) keeps only global custom stats: per_host false, the summary under the host."""
    out = S.summarize({}, "mpi", "d", None, "live", "r", "x", False)
    assert S.stats(out, "rdma_tuning", "node1") == {"data": {"rdma_tuning": {"node1": out}}, "per_host": False,
                                                    "aggregate": True}


@pytest.mark.parametrize("fast, allowed, sync, expected", [
    (True, True, {"inputs_digest": "0123456789abcdef", "checked": 42}, "taken: in sync, every concern skipped - the "
     "record carries this run's inputs digest 0123456789ab, and 42 keys of tuning.sysctl, tuning.nic read live equal "
     "their targets on unchanged devices"),
    (False, False, {"msg": "ignored"}, "not taken: only a full run may skip (rdma_fast_rerun, no --tags, no "
     "--skip-tags of the role's tags, not a switch, not a bake)"),
    (False, True, {"msg": "sysctl net.core.rmem_max is 212992, its target 16777216"},
     "not taken: sysctl net.core.rmem_max is 212992, its target 16777216"),
    (False, True, {}, "not taken: not checked"),
    (False, True, {"in_sync": True, "checked": 3}, "not taken: in sync, but the RDMA stack's role changed something "
     "before the one call, so every concern ran"),
    (False, True, None, "not taken: not checked"),
])
def test_fast_path_sentence(fast, allowed, sync, expected):
    assert S.fast_path(fast, allowed, sync, ["tuning.sysctl", "tuning.nic"]) == expected


FAST = {"changed": False, "results": [], "skipped_steps": True,
        "sync": {"in_sync": True, "checked": 9, "inputs_digest": "a96cb3f570f043c8", "record": {"name": "balanced"}}}
OPTIONS = {"profile": "mpi", "digest": "sha256:13f9", "rdma_mode": "live", "run": "r7", "scopes": ["tuning.sysctl"],
           "stats_key": "rdma_tuning"}


@pytest.mark.parametrize("result", [
    dict(FAST, failed=True),                                  # a failed call
    dict(FAST, skipped_steps=False),                          # steps ran
    dict(FAST, sync=dict(FAST["sync"], in_sync=False)),       # not in sync
    {"changed": True, "results": [{"name": "sysctl"}], "skipped_steps": False},   # no sync asked
])
def test_only_a_call_that_found_the_node_in_sync_and_ran_no_step_is_summarized(result):
    assert S.of_fast_call(result, OPTIONS, False) is None


@pytest.mark.parametrize("check", [False, True])
def test_the_fast_call_s_summary(check):
    out = S.of_fast_call(FAST, OPTIONS, check)
    assert out == {"profile": "mpi", "digest": "sha256:13f9", "previous_profile": "balanced", "mode": "live",
                   "run": "r7", "not_set": {}, "changes": {}, "check_mode": check,
                   "outcome": "would_change" if check else "changed",
                   "fast_path": "taken: in sync, every concern skipped - the record carries this run's inputs digest "
                                "a96cb3f570f0, and 9 keys of tuning.sysctl read live equal their targets on "
                                "unchanged devices"}
    assert list(out) == KEYS


PLAY = """
- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Summary
      hpcnet.rdma.tuning_summary:
        results:
          sysctl: [{changed: true, changes: [{key: net.core.rmem_max}]}]
          nic: [{skipped: true}]
        profile: mpi
        rdma_mode: live
        run: r1
        fast_allowed: true
        sync: {msg: the node has no record yet}
"""


@pytest.mark.parametrize("check", [False, True])
def test_action_shows_once_and_feeds_the_custom_stats(tmp_path, check):
    (tmp_path / "play.yml").write_text(PLAY)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"),
               ANSIBLE_HOME=str(tmp_path / "home"), ANSIBLE_NOCOLOR="1", ANSIBLE_STDOUT_CALLBACK="json", ANSIBLE_SHOW_CUSTOM_STATS="1",
               ANSIBLE_INVENTORY_UNPARSED_WARNING="0", ANSIBLE_LOCALHOST_WARNING="0")
    proc = subprocess.run([BINARY, "play.yml"] + (["--check"] if check else []), cwd=str(tmp_path), env=env,
                          capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = json.loads(proc.stdout)
    (result,) = out["plays"][0]["tasks"][0]["hosts"].values()
    summary = result["ansible_stats"]["data"]["rdma_tuning"]["localhost"]
    assert result["ansible_stats"]["per_host"] is False
    assert summary["changes"] == {"sysctl": ["net.core.rmem_max"]} and summary["fast_path"] == \
        "not taken: the node has no record yet"
    assert (summary["check_mode"], summary["outcome"]) == (check, "would_change" if check else "changed")
    assert result["changed"] is False and "summary" not in result   # shown once: under ansible_stats
    assert out["global_custom_stats"] == {"rdma_tuning": {"localhost": summary}}   # what ansible-runner keeps
    assert "rdma_tuning" not in out["custom_stats"].get("localhost", {})


BAD = """
- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Summary with a bad option
      hpcnet.rdma.tuning_summary:
        rdma_mode: fast
      ignore_errors: true
    - name: A node_tuning call with a bad summary option
      hpcnet.rdma.node_tuning:
        steps: [{module: sysctl_tuning, args: {sysctls: {}}}]
        journal_dir: "{{ playbook_dir }}/journal"
        summary: {rdma_mode: fast}
      ignore_errors: true
"""


def test_bad_options_fail_naming_the_field_and_nothing_reaches_the_node(tmp_path):
    """Both actions check their options on the controller: a bad value fails naming the field, the
    value and what is allowed, and node_tuning's module never runs (no journal directory appears;
    --check on top, so even a wrong pass could write nothing)."""
    (tmp_path / "play.yml").write_text(BAD)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"),
               ANSIBLE_HOME=str(tmp_path / "home"), ANSIBLE_NOCOLOR="1", ANSIBLE_STDOUT_CALLBACK="json",
               ANSIBLE_INVENTORY_UNPARSED_WARNING="0", ANSIBLE_LOCALHOST_WARNING="0")
    proc = subprocess.run([BINARY, "play.yml", "--check"], cwd=str(tmp_path), env=env, capture_output=True, text=True,
                          check=False, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary, call = [next(iter(t["hosts"].values())) for t in json.loads(proc.stdout)["plays"][0]["tasks"]]
    assert summary["failed"] and "rdma_mode" in summary["msg"] and "fast" in summary["msg"]
    assert "live, bake" in summary["msg"]
    assert call["failed"] and call["msg"].startswith("summary: ")
    assert "rdma_mode" in call["msg"] and "fast" in call["msg"] and "live, bake" in call["msg"]
    assert "results" not in call and not (tmp_path / "journal").exists()
