# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Bad rdma_health variables fail with a message naming the variable, the value and what is allowed - in the
role's argument validation (meta/argument_specs.yml: types and choices) or its first task (ranges) - before
any task that reads or changes the node.  The real ansible-playbook against a local inventory in which every
host has one bad value (so no task ever reaches this machine), the json callback telling who failed where."""
from __future__ import annotations

import json
import sys

import pytest
import yaml

from ..tuning.test_playbooks import run  # the same runner as the tuning role's bad runs

VALIDATION = "Validating arguments against arg spec 'main'"
BAD = {
    "bad_mode": ({"rdma_health_slurm_mode": "sometimes"},
                 "value of rdma_health_slurm_mode must be one of: healthcheck, prolog, both, none, got: sometimes"),
    "bad_interval": ({"rdma_health_interval": "often"},
                     "argument 'rdma_health_interval' is of type str and we were unable to convert to int"),
    "bad_tools": ({"rdma_health_tools": ["ibv_devinfo", "ethtool"]},
                  "value of rdma_health_tools must be one or more of: ibv_devinfo, rdma, ibstat, nvidia-smi. Got no match for: ethtool"),
    "bad_metrics": ({"rdma_health_metrics": "perhaps"},
                    "argument 'rdma_health_metrics' is of type str and we were unable to convert to bool: The value 'perhaps' is not a valid boolean"),
    "bad_manifest": ({"rdma_health_manifest": ["n1"]}, "argument 'rdma_health_manifest' is of type list and we were unable to convert to dict"),
    "bad_flap_type": ({"rdma_health_flap_max": [1]}, "argument 'rdma_health_flap_max' is of type list and we were unable to convert to int"),
    # ranges and forms the spec cannot say: the role's first task
    "bad_budget": ({"rdma_health_budget": 99}, "rdma_health: rdma_health_budget is 99; allowed: more than 0, at most 60 seconds"),
    "bad_memlock": ({"rdma_health_memlock": "lots"}, "rdma_health: rdma_health_memlock is 'lots'; allowed: 'unlimited', 'skip' or a size in KiB"),
    "bad_interval_zero": ({"rdma_health_interval": 0}, "rdma_health: rdma_health_interval is 0; allowed: 1 second or more"),
    "bad_two": ({"rdma_health_flap_max": -1, "rdma_health_metrics_dir": "textfiles"},
                "rdma_health: rdma_health_flap_max is -1; allowed: 0 or more; rdma_health_metrics_dir is 'textfiles'; allowed: an absolute path"),
}
IN_SPEC = ("bad_mode", "bad_interval", "bad_tools", "bad_metrics", "bad_manifest", "bad_flap_type")


@pytest.fixture(scope="module")
def bad_runs(tmp_path_factory):
    work = tmp_path_factory.mktemp("rdma_health_bad")
    (work / "tmp").mkdir()
    inv = work / "hosts.yml"
    inv.write_text(yaml.safe_dump({"all": {"hosts": dict(
        (name, dict({"ansible_connection": "local", "ansible_python_interpreter": sys.executable}, **hostvars))
        for name, (hostvars, _msg) in BAD.items())}}))
    play = work / "play.yml"
    play.write_text(yaml.safe_dump([{"name": "Health check", "hosts": "all", "gather_facts": False,
                                     "roles": [{"role": "hpcnet.rdma.rdma_health"}]}]))
    proc = run(work, "-i", str(inv), str(play), extra_env={"ANSIBLE_STDOUT_CALLBACK": "json"})
    assert proc.returncode != 0, proc.stdout[-2000:]
    failed, reached = {}, {}
    for p in json.loads(proc.stdout)["plays"]:
        for task in p["tasks"]:
            for host, res in task["hosts"].items():
                name = task["task"]["name"].split(" : ", 1)[-1]
                reached.setdefault(host, []).append(VALIDATION if name.startswith(VALIDATION) else name)
                if res.get("failed"):
                    failed[host] = res.get("msg", "")
    return failed, reached


@pytest.mark.parametrize("host", sorted(BAD))
def test_bad_input_fails_naming_the_variable_before_anything_else(bad_runs, host):
    failed, reached = bad_runs
    assert BAD[host][1] in failed[host], failed[host]
    allowed = [VALIDATION] if host in IN_SPEC else [VALIDATION, "Check the options"]
    assert reached[host] == allowed, reached[host]
