# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""After side_effect.yml (tuning_state action=rollback, as rollback_rdma runs it): nothing the role wrote is left -
no topology.conf on the Slurm controller, no hostfile on any node; the scenario's own slurm.conf is untouched."""
import pytest
import testinfra

testinfra_hosts = ["docker://topo-n%d" % i for i in range(1, 5)]


@pytest.mark.parametrize("path", ["/etc/slurm/topology.conf", "/etc/hpcnet-rdma/hostfile"])
def test_the_role_s_files_are_gone(host, path):
    assert not host.file(path).exists


def test_slurm_conf_is_the_scenario_s_own():
    controller = testinfra.get_host("docker://topo-n1")
    assert "TopologyPlugin=topology/tree" in controller.file("/etc/slurm/slurm.conf").content_string
