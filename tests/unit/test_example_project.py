# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""examples/project as an AWX project (issue 29): an AWX job template picks a playbook file of the
project, so the project has one wrapper per collection playbook (import_playbook of hpcnet.rdma.<name>),
each parses with the installed collection, docs/awx.md names each, and the wrappers of the playbooks
that write on the controller point their output at rdma_output_dir (a persistent directory), per AWX
job for the verify reports - run for real up to the controller's checks, which create the directories."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
import yaml

import ansible_collections.hpcnet.rdma as collection

ROOT = list(collection.__path__)[0]
COLLECTIONS = os.path.dirname(os.path.dirname(os.path.dirname(ROOT)))
BINARY = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
PLAYBOOKS = sorted(n[:-4] for n in os.listdir(os.path.join(ROOT, "playbooks")) if n.endswith(".yml"))
PROJECT = os.path.join(ROOT, "examples", "project")


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    path = tmp_path_factory.mktemp("awx") / "project"
    shutil.copytree(PROJECT, str(path))
    os.chmod(str(path), 0o755)   # ansible ignores an ansible.cfg in a world-writable directory
    # localhost in the inventory, so --limit localhost runs the controller's checks and no node is touched
    (path / "hosts.ini").write_text("localhost ansible_connection=local ansible_python_interpreter=%s\n"
                                    "[rdma_nodes]\nn1 ansible_host=192.0.2.1\nn2 ansible_host=192.0.2.2\n"
                                    % sys.executable)
    return path


def run(project, *args):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_LOCAL_TEMP=str(project / "tmp"),
               ANSIBLE_HOME=str(project / "home"), ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="0")
    proc = subprocess.run([BINARY] + list(args), cwd=str(project), env=env, capture_output=True, text=True,
                          check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_the_six_playbooks_are_the_ones_wrapped():
    assert PLAYBOOKS == ["bench_rdma", "rollback_rdma", "switch_profile", "topology_rdma", "tune_rdma", "verify_rdma"]


@pytest.mark.parametrize("name", PLAYBOOKS)
def test_a_wrapper_per_collection_playbook(project, name):
    with open(os.path.join(PROJECT, name + ".yml"), encoding="utf-8") as f:
        (play,) = yaml.safe_load(f)
    assert play["ansible.builtin.import_playbook"] == "hpcnet.rdma." + name
    run(project, "-i", "hosts.ini", name + ".yml", "--syntax-check")
    with open(os.path.join(ROOT, "docs", "awx.md"), encoding="utf-8") as f:
        assert "`%s.yml`" % name in f.read()


@pytest.mark.parametrize("name, made", [
    ("verify_rdma", "verify/4711"),        # the reports of AWX job 4711
    ("bench_rdma", "bench"),               # every run in one directory, for bench_report
])
def test_controller_output_goes_under_rdma_output_dir(project, tmp_path, name, made):
    out = tmp_path / "persistent"
    run(project, "-i", "hosts.ini", name + ".yml", "--limit", "localhost", "-e", "rdma_output_dir=%s" % out,
        "-e", "awx_job_id=4711")
    assert (out / made).is_dir()
    assert not (project / "rdma-verify-report").exists() and not (project / "rdma-bench-results").exists()
