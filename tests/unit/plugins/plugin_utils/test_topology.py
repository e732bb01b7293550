# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fabric graph (node -> leaf -> spine) and its renderings: topology.conf, the MPI hostfile, the NCCL
environment, Slurm hostlist compression; unplaced nodes named; the same input gives the same bytes."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.topology import _ibnet
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _topology, _topology_render
from ansible_collections.hpcnet.rdma.plugins.plugin_utils._topology import TopologyError

from ...fixtures.real.loader import real_capture


def neigh(name, bridge=True):
    return {"chassis_name": name, "chassis_id": "id-" + name, "bridge": bridge, "router": False}


def lldp_host(hostname, **ifaces):
    return {"hostname": hostname, "lldp": {"installed": True, "error": None,
                                           "interfaces": dict((i, [neigh(s)]) for i, s in ifaces.items())},
            "infiniband": None}


# four nodes under two leaves, the leaves seen (by their own lldpd) cabled to one spine
HOSTS = {"n1": lldp_host("n1", data0=["leaf1"][0], mgmt0="mgmt-sw"), "n2": lldp_host("n2", data0="leaf1"),
         "n3": lldp_host("n3", data0="leaf2"), "n4": lldp_host("n4", data0="leaf2")}
SWITCHES = {"leaf1": lldp_host("leaf1", swp9="spine1", swp1="n1-never-bridge"), "leaf2": lldp_host("leaf2", swp9="spine1")}
SWITCHES["leaf1"]["lldp"]["interfaces"]["swp1"][0]["bridge"] = False


def graph(**kw):
    return _topology.build_graph(dict(HOSTS, **kw.pop("extra", {})), **kw)


def test_lldp_leaves_and_spines_from_the_switches_own_lldp():
    g = graph(interfaces=["data*"], switch_results=SWITCHES)
    assert g["leaves"] == {"leaf1": {"nodes": ["n1", "n2"], "spines": ["spine1"]},
                           "leaf2": {"nodes": ["n3", "n4"], "spines": ["spine1"]}}
    assert g["spines"] == {"spine1": {"leaves": ["leaf1", "leaf2"]}}
    assert g["unplaced"] == {} and g["multi_leaf"] == []
    assert _topology_render.slurm_topology_conf(g).splitlines()[1:] == [
        "SwitchName=leaf1 Nodes=n[1-2]", "SwitchName=leaf2 Nodes=n[3-4]", "SwitchName=spine1 Switches=leaf[1-2]"]


def test_a_node_that_routes_is_never_a_spine():
    """A node with ip_forward=1 (a container host) advertises the router capability: seen from its leaf's own
    lldpd it looks like a switch, but a host of the graph (by inventory name or reported host name) is a node."""
    switches = {"leaf1": lldp_host("leaf1", swp9="spine1", swp1="n1", swp2="n2.lab.example"),
                "leaf2": lldp_host("leaf2", swp9="spine1", swp1="n3")}
    for sw in switches.values():
        for neighs in sw["lldp"]["interfaces"].values():
            neighs[0].update(bridge=False, router=True)
    hosts = dict(HOSTS, n3=dict(HOSTS["n3"], hostname="node-three"))
    switches["leaf2"]["lldp"]["interfaces"]["swp1"][0]["chassis_name"] = "node-three"
    g = _topology.build_graph(hosts, ["data*"], switches)
    assert g["spines"] == {"spine1": {"leaves": ["leaf1", "leaf2"]}}
    assert g["leaves"]["leaf1"]["spines"] == ["spine1"] and g["leaves"]["leaf2"]["spines"] == ["spine1"]


def test_without_an_interface_filter_the_management_switch_is_a_leaf_too():
    g = graph()
    assert g["multi_leaf"] == ["n1"] and g["nodes"]["n1"]["leaves"] == ["leaf1", "mgmt-sw"]
    assert "# n1 is cabled to leaf1, mgmt-sw; listed under leaf1" in _topology_render.slurm_topology_conf(g)


def test_switch_links_given_by_the_user():
    g = graph(interfaces=["data0"], switch_links=[["leaf1", "spine1"], ["spine1", "leaf2"]])
    assert g["spines"] == {"spine1": {"leaves": ["leaf1", "leaf2"]}}
    with pytest.raises(TopologyError, match=r"switch_links: 'leaf1' is not a pair"):
        graph(switch_links=["leaf1"])


@pytest.mark.parametrize("result, reason", [
    ({"failed": True, "msg": "unreachable"}, "no fabric_topology_info result (unreachable)"),
    ({"hostname": "n9", "lldp": {"installed": False, "error": None, "interfaces": {}}, "infiniband": None}, "lldpcli not installed"),
    ({"hostname": "n9", "lldp": {"installed": True, "error": "lldpcli -f json: malformed JSON: x", "interfaces": {}}},
     "LLDP unreadable: lldpcli -f json: malformed JSON: x"),
    (lldp_host("n9", data0="n8"), "no LLDP neighbour advertising the bridge or router capability"),
])
def test_nodes_it_cannot_place_are_named_with_the_reason(result, reason):
    if "lldp" in result and result["lldp"]["interfaces"]:
        result["lldp"]["interfaces"]["data0"][0]["bridge"] = False
    g = graph(extra={"n9": result}, interfaces=["data*"])
    assert g["unplaced"] == {"n9": reason}
    assert "# unplaced: n9 (%s)" % reason in _topology_render.slurm_topology_conf(g)
    assert _topology_render.mpi_hostfile(g).endswith("# unplaced (no leaf known)\nn9 slots=1\n")
    assert "n9" not in _topology_render.mpi_hostfile(g, include_unplaced=False)


def ib_hosts():
    """The rdma-core man page's fabric: four CAs, two switches; the CAs named as hosts by node GUID."""
    fabric = _ibnet.parse_ibnetdiscover(real_capture("ibnetdiscover/full.rdma-core-man.voltaire.txt"))
    hosts = {}
    for i, g in enumerate(sorted(fabric["cas"]), 1):
        hosts["c%d" % i] = {"hostname": "c%d" % i, "lldp": None,
                            "infiniband": {"local": {"mlx4_0": {"node_guid": g, "ports": ["1"]}}, "switches": {}, "cas": {}}}
    hosts["c1"]["infiniband"].update(fabric)          # one node ran ibnetdiscover
    return hosts


def test_ib_fabric_leaves_by_node_guid_and_a_switch_without_cas_is_not_a_spine_here():
    g = _topology.build_graph(ib_hosts(), switch_names={"005442ba00003080": "isr1", "0008f10400410015": "sw6"})
    # c1 = 0008f10403960558 (both ports on the ISR9024), c2 = ...0984 and c4 = 005442b100004900 on the SW-6IB4
    assert g["leaves"] == {"isr1": {"nodes": ["c1", "c3"], "spines": []}, "sw6": {"nodes": ["c2", "c4"], "spines": []}}
    assert g["nodes"]["c1"]["via"] == {"isr1": ["MT23108 InfiniHost Mellanox Technologies/1",
                                                "MT23108 InfiniHost Mellanox Technologies/2"]}
    assert g["spines"] == {} and g["unplaced"] == {}


def test_ib_spine_is_a_switch_cabled_only_to_switches():
    ports = real_capture("ibnetdiscover/ports.infiniband-exporter.test.txt")
    fabric = _ibnet.parse_ibnetdiscover(ports)
    hosts = {"o0001": {"hostname": "o0001", "infiniband": dict(fabric, local={})},
             "o0002": {"hostname": "o0002", "infiniband": {"local": {}}}}
    g = _topology.build_graph(hosts)          # CAs matched by the first word of their NodeDescription
    assert g["leaves"] == {"ib-i1l1s01": {"nodes": ["o0001", "o0002"], "spines": ["ib-i1l2s01"]}}
    assert g["spines"] == {"ib-i1l2s01": {"leaves": ["ib-i1l1s01"]}}
    assert "SwitchName=ib-i1l2s01 Switches=ib-i1l1s01" in _topology_render.slurm_topology_conf(g)


def test_ib_switches_sharing_a_description_are_named_by_guid():
    g = _topology.build_graph(ib_hosts())       # "ISR9024 Voltaire" has a blank: not a Slurm name
    assert sorted(g["leaves"]) == ["ib-0008f10400410015", "ib-005442ba00003080"]


@pytest.mark.parametrize("names, expect", [
    (["n1", "n2", "n3", "n5"], "n[1-3,5]"), (["n3", "n1", "n2", "n2"], "n[1-3]"), (["node01", "node02", "node10"], "node[01-02,10]"),
    (["n9", "n10", "n11"], "n[9-11]"), (["login", "n1"], "login,n1"), (["a"], "a"), (["leaf1", "leaf2"], "leaf[1-2]"),
    (["r1n1", "r1n2", "r2n1"], "r1n[1-2],r2n1"), (["x0", "x00", "x01"], "x[00-01],x0"),
])
def test_hostlist_compression(names, expect):
    assert _topology_render.hostlist(names) == expect


def test_hostlist_refuses_names_slurm_cannot_read():
    with pytest.raises(TopologyError, match=r"'n\[1\]' is not a host or switch name"):
        _topology_render.hostlist(["n[1]"])
    g = graph(interfaces=["data*"], switch_names={"leaf1": "leaf 1"})
    with pytest.raises(TopologyError, match="switch name 'leaf 1' is not one Slurm accepts"):
        _topology_render.slurm_topology_conf(g)


def test_mpi_hostfile_groups_by_leaf_with_slots():
    g = graph(interfaces=["data*"])
    assert _topology_render.mpi_hostfile(g, {"n1": 4, "n3": 2}).splitlines()[1:] == [
        "# leaf leaf1", "n1 slots=4", "n2 slots=1", "# leaf leaf2", "n3 slots=2", "n4 slots=1"]
    with pytest.raises(TopologyError, match="slots of n1: 0 is not a positive integer"):
        _topology_render.mpi_hostfile(g, 0)


def test_nccl_env_only_for_rails():
    assert _topology_render.nccl_env(graph(interfaces=["data*"])) == {}
    rails = dict((h, lldp_host(h, ib0="rail0-leaf", ib1="rail1-leaf")) for h in ("g1", "g2"))
    assert _topology_render.nccl_env(_topology.build_graph(rails)) == {"NCCL_CROSS_NIC": "0"}


def test_the_same_input_renders_the_same_bytes_in_any_order():
    one = graph(interfaces=["data*"], switch_results=SWITCHES)
    other = _topology.build_graph(dict(reversed(list(HOSTS.items()))), ["data*"], dict(reversed(list(SWITCHES.items()))))
    assert one == other
    for render in (_topology_render.slurm_topology_conf, _topology_render.mpi_hostfile):
        assert render(one) == render(other)


def test_bad_input_names_the_host():
    with pytest.raises(TopologyError, match="the input must be a mapping"):
        _topology.build_graph([])
    with pytest.raises(TopologyError, match="n1: lldp.interfaces is list"):
        _topology.build_graph({"n1": {"lldp": {"installed": True, "interfaces": []}}})
