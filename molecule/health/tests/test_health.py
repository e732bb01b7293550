# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""After faults.yml (every fault injected, drained with its code, fixed, resumed): what the role installed
is there as the role wrote it, the check passes on both nodes, Slurm shows both nodes IDLE with no reason
left, and Slurm runs the program - its HealthCheckProgram, every HealthCheckInterval, and (prolog.yml left the
lab in rdma_health_slurm_mode=both) its Prolog."""
import json
import os

import pytest

testinfra_hosts = ["ansible://health-n1", "ansible://health-n2"]
NODES = ("health-n1", "health-n2")


def test_the_program_and_its_files_are_installed(host):
    prog = host.file("/usr/local/sbin/hpcnet-rdma-check")
    assert prog.is_file and prog.user == "root" and prog.mode == 0o755
    assert prog.content_string.startswith("#!/usr/bin/python3 -IS\n")   # the role's __rdma_health_shebang
    for path in ("/etc/hpcnet-rdma/health.json", "/etc/hpcnet-rdma/manifest.json"):
        with host.sudo():
            assert json.loads(host.file(path).content_string), path
    # the readers it runs with: the collection's own module_utils, by package path
    lib = "/usr/lib/hpcnet-rdma/lib/ansible_collections/hpcnet/rdma/plugins/module_utils"
    for rel in ("health/_check.py", "health/_slurm.py", "facts/_fabric.py", "node/_host.py"):
        assert host.file(os.path.join(lib, rel)).is_file, rel


def test_the_check_passes_on_a_fabric_that_is_right_again(host):
    out = host.run("/usr/local/sbin/hpcnet-rdma-check")
    assert out.rc == 0 and out.stdout == "", (out.rc, out.stdout, out.stderr)
    answer = json.loads(host.check_output("/usr/local/sbin/hpcnet-rdma-check --json"))
    assert not [f for f in answer.get("findings", []) if f.get("severity") == "drain"], answer


def test_slurm_runs_the_program_as_its_health_check_and_prolog(host):
    conf = host.file("/etc/slurm/hpcnet-rdma-health.conf").content_string
    hook = "/usr/local/sbin/hpcnet-rdma-slurm-check"
    assert [ln for ln in conf.splitlines() if not ln.startswith("#")] == [
        "HealthCheckProgram=" + hook, "HealthCheckInterval=3", "HealthCheckNodeState=ANY", "Prolog=" + hook], conf
    assert "Include /etc/slurm/hpcnet-rdma-health.conf" in host.file("/etc/slurm/slurm.conf").content_string
    # what slurmctld runs (scontrol asks it): the file above, taken by scontrol reconfigure
    config = dict(ln.split(" = ", 1) for ln in host.check_output("scontrol show config").splitlines() if " = " in ln)
    assert {k.strip(): v.strip() for k, v in config.items() if k.strip() in ("HealthCheckProgram", "Prolog")} == \
        {"HealthCheckProgram": hook, "Prolog": hook}, config


@pytest.mark.parametrize("node", NODES)
def test_both_nodes_are_idle_with_no_reason_left(host, node):
    line = host.check_output("scontrol show node -o %s" % node)
    assert " State=IDLE " in line and " Reason=" not in line, line
