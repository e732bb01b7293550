# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""After converge (the playbook hpcnet.rdma.topology_rdma) and slurm.yml: the graph the role discovered over LLDP is
the cabling prepare.yml made (vars/cabling.yml, the one source), Slurm's controller loaded the topology.conf the role
wrote (`scontrol show topology` names every switch and node), and each node's hostfile groups the nodes by leaf.
Docker backend: one `docker exec` per command."""
import json
import os

import pytest
import testinfra
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "..", "vars", "cabling.yml"), encoding="utf-8") as _f:
    CABLING = yaml.safe_load(_f)
SWITCHES = CABLING["topo_switches"]
NODES = sorted({a for a, _p, _b, _q in CABLING["topo_links"] if a not in SWITCHES})
testinfra_hosts = ["docker://%s" % n for n in NODES]

# What the cabling says: each node's leaf and port, each leaf's spine.
LEAF_OF = dict((a, b) for a, _p, b, _q in CABLING["topo_links"] if a in NODES)
PORT_OF = dict((a, p) for a, p, _b, _q in CABLING["topo_links"] if a in NODES)
SPINE_OF = dict((a, b) for a, _p, b, _q in CABLING["topo_links"] if a in SWITCHES)
LEAVES = sorted(set(LEAF_OF.values()))
HOSTFILE = "\n".join(
    ["# Open MPI hostfile grouped by leaf switch, written by hpcnet.rdma from the fabric graph"]
    + [line for leaf in LEAVES for line in ["# leaf %s" % leaf] + ["%s slots=1" % n for n in NODES if LEAF_OF[n] == leaf]]) + "\n"
TOPOLOGY_CONF = [
    "SwitchName=topo-leaf1 Nodes=topo-n[1-2]",
    "SwitchName=topo-leaf2 Nodes=topo-n[3-4]",
    "SwitchName=topo-spine1 Switches=topo-leaf[1-2]",
]


@pytest.fixture(scope="module")
def controller():
    """The Slurm controller host (slurmctld, topology.conf)."""
    return testinfra.get_host("docker://topo-n1")


@pytest.fixture(scope="module")
def graph():
    with open(os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "graph.json"), encoding="utf-8") as f:
        return json.load(f)


def test_the_cabling_is_what_the_test_expects():
    assert NODES == ["topo-n1", "topo-n2", "topo-n3", "topo-n4"] and LEAVES == ["topo-leaf1", "topo-leaf2"]
    assert SPINE_OF == {"topo-leaf1": "topo-spine1", "topo-leaf2": "topo-spine1"}


def test_the_graph_is_the_cabling(graph):
    assert graph["unplaced"] == {} and graph["multi_leaf"] == []
    assert dict((n, v["leaves"]) for n, v in graph["nodes"].items()) == dict((n, [LEAF_OF[n]]) for n in NODES)
    assert dict((n, v["via"]) for n, v in graph["nodes"].items()) == dict((n, {LEAF_OF[n]: [PORT_OF[n]]}) for n in NODES)
    assert graph["leaves"] == dict((leaf, {"nodes": [n for n in NODES if LEAF_OF[n] == leaf], "spines": [SPINE_OF[leaf]]})
                                   for leaf in LEAVES)
    assert graph["spines"] == {"topo-spine1": {"leaves": LEAVES}}


def test_topology_conf_on_the_slurm_controller_only(host, controller):
    if host.backend.name != "topo-n1":
        assert not host.file("/etc/slurm/topology.conf").exists
    conf = controller.file("/etc/slurm/topology.conf")
    assert conf.is_file and conf.user == "root" and conf.mode == 0o644
    assert [line for line in conf.content_string.splitlines() if not line.startswith("#")] == TOPOLOGY_CONF


def test_scontrol_show_topology_names_every_switch_and_node(controller):
    lines = controller.check_output("scontrol show topology").splitlines()
    fields = [dict(f.split("=", 1) for f in line.split()) for line in lines if line.startswith("SwitchName=")]
    by_name = dict((f["SwitchName"], f) for f in fields)
    assert sorted(by_name) == SWITCHES, lines
    assert by_name["topo-leaf1"]["Nodes"] == "topo-n[1-2]" and by_name["topo-leaf2"]["Nodes"] == "topo-n[3-4]"
    assert by_name["topo-spine1"]["Switches"] == "topo-leaf[1-2]" and by_name["topo-spine1"]["Nodes"] == "topo-n[1-4]"
    assert (by_name["topo-leaf1"]["Level"], by_name["topo-spine1"]["Level"]) == ("0", "1")


def test_the_hostfile_groups_the_nodes_by_leaf(host):
    hostfile = host.file("/etc/hpcnet-rdma/hostfile")
    assert hostfile.is_file and hostfile.mode == 0o644
    assert hostfile.content_string == HOSTFILE


def test_the_role_journaled_its_files(host):
    journal = json.loads(host.file("/var/lib/hpcnet-rdma/journal.json").content_string)
    assert "/etc/hpcnet-rdma/hostfile" in json.dumps(journal)
