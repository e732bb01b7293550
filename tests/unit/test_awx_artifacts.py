# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What AWX gets: the tuning summary through ansible-runner's own artifacts (issue 29).

AWX runs playbooks with ansible-runner and stores as the job's ``artifacts`` the ``artifact_data`` of
runner's ``playbook_on_stats`` event - the run's *global* custom stats only. The summary must be there,
keyed by host, with the same snake_case keys in check mode. ansible-runner is pinned in requirements.txt
(``make venv``); it runs the real ``ansible-playbook`` of this venv, as an execution environment would."""
from __future__ import annotations

import glob
import importlib.util
import json
import os
import subprocess
import sys

import pytest

import ansible_collections.hpcnet.rdma as collection

ROOT = list(collection.__path__)[0]
COLLECTIONS = os.path.dirname(os.path.dirname(os.path.dirname(ROOT)))
BIN = os.path.dirname(sys.executable)

INVENTORY = """
[nodes]
node1 ansible_connection=local ansible_python_interpreter={python}
node2 ansible_connection=local ansible_python_interpreter={python}
"""

PLAY = """
- name: Tune (a canned result per host)
  hosts: nodes
  gather_facts: false
  tasks:
    - name: Summary of the run
      hpcnet.rdma.tuning_summary:
        results:
          sysctl: [{changed: true, changes: [{key: net.core.rmem_max}],
                    unsettable: [{key: net.core.rmem_max, reason: kernel-global in a container}]}]
          nic: [{changed: "{{ inventory_hostname == 'node2' }}", changes: "{{ [{'key': 'data0 mtu'}] if inventory_hostname == 'node2' else [] }}"}]
          irq: [{skipped: true}]
        profile: mpi
        digest: sha256:13f9
        rdma_mode: live
        run: r1
        fast_allowed: true
        sync: {msg: the node has no record yet}
"""


def _runner(tmp_path, check):
    assert importlib.util.find_spec("ansible_runner"), "ansible-runner is pinned in requirements.txt: make venv"
    data = tmp_path / "private"
    (data / "project").mkdir(parents=True)
    (data / "inventory").mkdir()
    (data / "env").mkdir()
    (data / "project" / "tune.yml").write_text(PLAY)
    (data / "inventory" / "hosts").write_text(INVENTORY.format(python=sys.executable))
    env = dict(os.environ, PATH=BIN + os.pathsep + os.environ.get("PATH", ""), ANSIBLE_COLLECTIONS_PATH=COLLECTIONS,
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_HOME=str(tmp_path / "home"), ANSIBLE_NOCOLOR="1")
    cmd = [sys.executable, "-m", "ansible_runner", "run", str(data), "-p", "tune.yml", "--ident", "job1"]
    if check:
        cmd.append("--cmdline=--check")   # as AWX passes a job template's check job type
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False, timeout=300)
    artifacts = data / "artifacts" / "job1"
    stdout = (artifacts / "stdout").read_text() if (artifacts / "stdout").exists() else ""
    assert proc.returncode == 0, proc.stdout + proc.stderr + stdout
    assert (artifacts / "rc").read_text().strip() == "0" and (artifacts / "status").read_text().strip() == "successful"
    events = [json.loads(open(p, encoding="utf-8").read()) for p in glob.glob(str(artifacts / "job_events" / "*.json"))]
    (stats,) = [e for e in events if e.get("event") == "playbook_on_stats"]
    return stats["event_data"]


@pytest.mark.parametrize("check", [False, True])
def test_the_summary_is_in_the_runner_artifacts_keyed_by_host(tmp_path, check):
    data = _runner(tmp_path, check)
    artifact = data["artifact_data"]     # what AWX stores as the job's artifacts
    assert list(artifact) == ["rdma_tuning"] and sorted(artifact["rdma_tuning"]) == ["node1", "node2"]
    node1, node2 = artifact["rdma_tuning"]["node1"], artifact["rdma_tuning"]["node2"]
    keys = ["changes", "check_mode", "digest", "fast_path", "mode", "not_set", "outcome", "previous_profile",
            "profile", "run"]
    assert sorted(node1) == sorted(node2) == keys        # the same keys in both modes, no spaces
    assert node1["changes"] == {"sysctl": ["net.core.rmem_max"], "nic": []}
    assert node2["changes"] == {"sysctl": ["net.core.rmem_max"], "nic": ["data0 mtu"]}
    assert node1["not_set"] == {"sysctl": ["not settable here: net.core.rmem_max - kernel-global in a container"]}
    assert (node1["check_mode"], node1["outcome"]) == (check, "would_change" if check else "changed")
    assert (node1["profile"], node1["digest"], node1["run"], node1["mode"]) == ("mpi", "sha256:13f9", "r1", "live")
    assert node1["fast_path"] == "not taken: the node has no record yet"
