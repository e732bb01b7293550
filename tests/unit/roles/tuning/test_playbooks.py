# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The playbooks, run by the real ansible-playbook from the installed-collection path: each
parses and is callable by name, --list-tags shows the concerns, a run that matches no host fails
naming the group, and bad input fails every host in the role's checks - before any module runs
(every host below has bad input, so no task ever reaches this machine's kernel)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

import ansible_collections.hpcnet.rdma as collection

ROOT = list(collection.__path__)[0]
COLLECTIONS = os.path.dirname(os.path.dirname(os.path.dirname(ROOT)))
BINARY = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
CONCERNS = ["app_config", "irq", "nic", "qos", "record", "services", "stack", "sysctl"]


def run(work, *args, extra_env=None):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_LOCAL_TEMP=str(work / "tmp"),
               ANSIBLE_HOME=str(work / "home"), ANSIBLE_FORCE_COLOR="0", ANSIBLE_NOCOLOR="1",
               ANSIBLE_RETRY_FILES_ENABLED="0", **(extra_env or {}))
    return subprocess.run([BINARY] + list(args), cwd=str(work), env=env, capture_output=True, text=True,
                          check=False, timeout=300)


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("playbooks")


def inventory(work, hosts):
    path = work / ("hosts-%d.yml" % len(hosts))
    path.write_text(yaml.safe_dump({"all": {"children": {"rdma_nodes": {"hosts": dict(
        (name, dict({"ansible_connection": "local", "ansible_python_interpreter": sys.executable}, **hostvars))
        for name, hostvars in hosts.items())}}}}))
    return str(path)


def test_collection_playbooks_parse_and_list_the_concern_tags(work):
    inv = inventory(work, {"n1": {}})
    for name in ("rollback_rdma", "switch_profile"):
        proc = run(work, "-i", inv, "hpcnet.rdma." + name, "--syntax-check")
        assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = run(work, "-i", inv, "hpcnet.rdma.tune_rdma", "--list-tags")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    listed = [line for line in proc.stdout.splitlines() if "TASK TAGS:" in line]
    assert len(listed) == 2   # the host check, the tuning
    assert listed[1].split("TASK TAGS:")[1].strip() == "[%s]" % ", ".join(["always"] + CONCERNS)


def test_root_playbook_imports_the_collection_one():
    with open(os.path.join(ROOT, "tune-rdma.yml"), encoding="utf-8") as f:
        plays = yaml.safe_load(f)
    assert [p["ansible.builtin.import_playbook"] for p in plays] == ["playbooks/tune_rdma.yml"]


def test_no_host_matched_fails_naming_the_group_also_with_tags(work):
    inv = inventory(work, {})
    proc = run(work, "-i", inv, os.path.join(ROOT, "tune-rdma.yml"), "-e", "rdma_hosts=gpu_nodes", "--tags", "sysctl")
    assert proc.returncode != 0
    assert "no host matches 'gpu_nodes' (rdma_hosts) in the inventory" in proc.stdout


BAD = {
    "unknown_profile": ({"rdma_profile": "nope"},
                        "rdma_profile: 'nope' is not a profile; known profiles: balanced, dl_training, low_latency, mpi, "
                        "offpeak, storage"),
    "extends_cycle": ({"rdma_profile": "a", "rdma_profiles": {"a": {"extends": "b"}, "b": {"extends": "a"}}},
                      "extends forms a cycle: a -> b -> a"),
    "unknown_section": ({"rdma_profile": "a", "rdma_profiles": {"a": {"extends": "mpi", "nics": {}}}},
                        "profile 'a': unknown section 'nics'; allowed:"),
    "wrong_type": ({"rdma_profile": "a", "rdma_profiles": {"a": {"nic": {"mtu": "big"}}}}, "is not an integer"),
    "bad_mode": ({"rdma_mode": "fast"}, "value of rdma_mode must be one of: live, bake, got: fast"),
    "bad_qos_key": ({"rdma_roce_qos": {"interfaces": [], "bogus": 1}}, "rdma_roce_qos.bogus. Supported parameters include"),
    # a nested value of the wrong type: the role's typed sub-options stop it on the controller (issue 29)
    "bad_nic_mtu": ({"rdma_interfaces": [{"name": "data0", "mtu": "jumbo"}]},
                    "argument 'mtu' is of type str found in 'rdma_interfaces'"),
    "bad_qos_cnp": ({"rdma_roce_qos": {"interfaces": [{"name": "data0"}], "cnp": {"dscp": "af41"}}},
                    "argument 'dscp' is of type str found in 'rdma_roce_qos -> cnp'"),
    "switch_without_record": ({"rdma_switch": True, "rdma_switch_requires_profile": True},
                              "rdma_switch_requires_profile is true and switch_without_record has no recorded profile"),
}


@pytest.fixture(scope="module")
def bad_runs(work):
    inv = inventory(work, dict((name, hostvars) for name, (hostvars, _msg) in BAD.items()))
    proc = run(work, "-i", inv, "hpcnet.rdma.tune_rdma", "-e", "__rdma_record_path=%s" % (work / "missing.json"),
               extra_env={"ANSIBLE_STDOUT_CALLBACK": "json"})
    assert proc.returncode != 0
    failed, reached = {}, {}
    for play in json.loads(proc.stdout)["plays"]:
        for task in play["tasks"]:
            for host, res in task["hosts"].items():
                reached.setdefault(host, []).append(task["task"]["name"])
                if res.get("failed"):
                    failed[host] = res.get("msg", "")
    return failed, reached


@pytest.mark.parametrize("host", sorted(BAD))
def test_bad_input_fails_before_any_change(bad_runs, host):
    failed, reached = bad_runs
    assert BAD[host][1] in failed[host]
    with open(os.path.join(ROOT, "roles", "tuning", "tasks", "main.yml"), encoding="utf-8") as f:
        checks = [t["name"] for t in yaml.safe_load(f) if "always" in t.get("tags", [])]
    with open(os.path.join(ROOT, "roles", "tuning", "tasks", "summary.yml"), encoding="utf-8") as f:
        checks += [t["name"] for t in yaml.safe_load(f)]   # the fast path's summary (skipped)
    with open(os.path.join(ROOT, "roles", "tuning", "tasks", "main.yml"), encoding="utf-8") as f:
        checks += [t["name"] for t in yaml.safe_load(f) if t.get("ansible.builtin.meta") == "end_role"]
    with open(os.path.join(ROOT, "roles", "tuning", "tasks", "before.yml"), encoding="utf-8") as f:
        checks += [t["name"] for t in yaml.safe_load(f) if t.get("tags") == ["always"]]   # a switch's check (reads)
    ran = [t.split(" : ", 1)[-1] for t in reached[host]]
    changing = [t for t in ran if not t.startswith("Validating arguments against arg spec") and t not in checks]
    assert changing == []


@pytest.mark.parametrize("host", ["bad_nic_mtu", "bad_qos_cnp"])
def test_a_bad_nested_value_fails_in_the_role_argument_validation(bad_runs, host):
    failed, reached = bad_runs
    assert "Validation of arguments failed" in failed[host]
    assert reached[host][-1].split(" : ", 1)[-1].startswith("Validating arguments against arg spec 'main'")


def test_tags_that_select_nothing_fail_listing_the_tags(work):
    inv = inventory(work, {"n1": {}})
    proc = run(work, "-i", inv, "hpcnet.rdma.tune_rdma", "--tags", "sysctls")
    assert proc.returncode != 0
    assert ("--tags sysctls selects nothing of the hpcnet.rdma tuning; its tags are stack, sysctl, nic, irq, qos, "
            "services, app_config, record") in proc.stdout
