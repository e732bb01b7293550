# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fabric graph node -> leaf -> spine from every host's ``fabric_topology_info`` result (pure).

* A **leaf** is a switch a compute node is cabled to: over LLDP, a neighbour that advertises the
  bridge or router capability; over InfiniBand, the switch ``ibnetdiscover`` lists at the other end
  of a port of one of the node's HCAs (matched by node GUID, else by the first word of the CA's
  NodeDescription, which is the host name by default).
* A **spine** is a switch cabled only to switches.  LLDP seen from the nodes cannot tell (switches do
  not forward LLDP), so spines come from ``ibnetdiscover`` (a switch with no CA, linked to a leaf),
  from the LLDP neighbours of the switches themselves when their ``fabric_topology_info`` results
  are given (``switch_results``), or from a user's switch-to-switch cabling (``switch_links``).
* A node the graph cannot place is named with the reason in ``unplaced``.

Result: ``{"nodes": {host: {"leaves": [...], "via": {leaf: [interface or HCA port...]}}},
"leaves": {leaf: {"nodes": [...], "spines": [...]}}, "spines": {spine: {"leaves": [...]}},
"unplaced": {host: reason}, "multi_leaf": [hosts cabled to more than one leaf]}``, every list sorted.
"""
from __future__ import annotations

import fnmatch
import re
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple

NAME_RE = re.compile(r"^[A-Za-z0-9._-]+$")


class TopologyError(ValueError):
    """Bad input to the graph builder: names the host or field, the value and what is allowed."""


def _switch_name(neigh: Dict[str, Any]) -> Optional[str]:
    return neigh.get("chassis_name") or neigh.get("chassis_id")


def _is_switch(neigh: Dict[str, Any]) -> bool:
    return bool(neigh.get("bridge") or neigh.get("router"))


def _lldp_switches(result: Dict[str, Any], patterns: List[str]) -> Dict[str, List[str]]:
    """{switch name: [local interfaces]} of one fabric_topology_info result's LLDP part."""
    out: Dict[str, List[str]] = {}
    interfaces = (result.get("lldp") or {}).get("interfaces")
    interfaces = {} if interfaces is None else interfaces
    if not isinstance(interfaces, dict):
        raise TopologyError("lldp.interfaces is %s, expected a mapping" % type(interfaces).__name__)
    for ifname, neighs in sorted(interfaces.items()):
        if patterns and not any(fnmatch.fnmatchcase(ifname, p) for p in patterns):
            continue
        for neigh in neighs if isinstance(neighs, list) else []:
            if isinstance(neigh, dict) and _is_switch(neigh) and _switch_name(neigh):
                out.setdefault(_switch_name(neigh), []).append(ifname)
    return out


def _ib_names(fabric: Dict[str, Any], names: Dict[str, str]) -> Dict[str, str]:
    """A name per switch GUID: the user's (by GUID), else the NodeDescription when it is a valid Slurm
    name and no other switch has it, else ``ib-<guid>``."""
    switches = fabric["switches"]
    count: Dict[str, int] = {}
    for sw in switches.values():
        count[sw.get("name") or ""] = count.get(sw.get("name") or "", 0) + 1
    out = {}
    for g, sw in switches.items():
        desc = (sw.get("name") or "").strip()
        out[g] = names.get(g) or (desc if desc and NAME_RE.match(desc) and count.get(sw.get("name") or "") == 1 else "ib-" + g)
    return out


def merge_fabric(results: Iterable[Dict[str, Any]]) -> Dict[str, Any]:
    """One InfiniBand fabric from every result that read one (switches, CAs and their ports by GUID)."""
    fabric: Dict[str, Any] = {"switches": {}, "cas": {}}
    for result in results:
        ib = result.get("infiniband") if isinstance(result, dict) else None
        if not isinstance(ib, dict):
            continue
        for table in ("switches", "cas"):
            for g, node in (ib.get(table) or {}).items():
                merged = fabric[table].setdefault(g, {"name": node.get("name"), "ports": {}})
                merged["ports"].update(dict((str(p), peer) for p, peer in (node.get("ports") or {}).items()))
                merged["name"] = merged["name"] or node.get("name")
    return fabric


def _ca_owner(fabric: Dict[str, Any], hosts: Dict[str, Dict[str, Any]]) -> Dict[str, str]:
    """CA GUID -> host: the host whose result lists that node GUID locally, else the host whose name (or
    reported host name) is the first word of the CA's NodeDescription."""
    by_guid, by_name = {}, {}
    for host, result in hosts.items():
        for dev in (((result.get("infiniband") or {}).get("local")) or {}).values():
            if dev.get("node_guid"):
                by_guid[dev["node_guid"]] = host
        by_name[host] = host
        if result.get("hostname"):
            by_name.setdefault(result["hostname"].split(".")[0], host)
    owner = {}
    for g, ca in fabric["cas"].items():
        first = ((ca.get("name") or "").split() or [""])[0]
        if g in by_guid:
            owner[g] = by_guid[g]
        elif first in by_name:
            owner[g] = by_name[first]
    return owner


def _peer_switches(fabric: Dict[str, Any], guid_: str, table: str) -> Set[str]:
    return set(p["guid"] for p in fabric[table].get(guid_, {}).get("ports", {}).values()
               if isinstance(p, dict) and p.get("type") == "switch")


def build_graph(hosts: Dict[str, Any], interfaces: Optional[List[str]] = None,
                switch_results: Optional[Dict[str, Any]] = None, switch_links: Optional[List[Any]] = None,
                switch_names: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """The graph from ``{inventory host: fabric_topology_info result}`` (see the module docstring)."""
    if not isinstance(hosts, dict):
        raise TopologyError("the input must be a mapping host -> fabric_topology_info result, not %s" % type(hosts).__name__)
    patterns, names = list(interfaces or []), dict(switch_names or {})
    usable: Dict[str, Dict[str, Any]] = {}
    unplaced: Dict[str, str] = {}
    for host, result in sorted(hosts.items()):
        if not isinstance(result, dict) or result.get("failed") or result.get("skipped"):
            unplaced[host] = "no fabric_topology_info result (%s)" % (
                (result or {}).get("msg", "failed") if isinstance(result, dict) else "not a mapping")
        else:
            usable[host] = result
    via: Dict[str, Dict[str, List[str]]] = dict((h, {}) for h in usable)
    for host, result in usable.items():
        try:
            for sw, ifnames in _lldp_switches(result, patterns).items():
                via[host].setdefault(names.get(sw, sw), []).extend(ifnames)
        except TopologyError as e:
            raise TopologyError("%s: %s" % (host, e)) from None
    fabric = merge_fabric(list(usable.values()) + list((switch_results or {}).values()))
    ib_name = _ib_names(fabric, names)
    owner = _ca_owner(fabric, usable)
    uplinks: Dict[str, Set[str]] = {}
    for g, ca in fabric["cas"].items():
        host = owner.get(g)
        for port, peer in sorted(ca["ports"].items()):
            if host and isinstance(peer, dict) and peer.get("type") == "switch":
                via[host].setdefault(ib_name[peer["guid"]], []).append("%s/%s" % (ca.get("name") or g, port))
    for g, sw in fabric["switches"].items():       # switch -> switch from ibnetdiscover
        for other in _peer_switches(fabric, g, "switches"):
            if other in ib_name:
                uplinks.setdefault(ib_name[g], set()).add(ib_name[other])
    # The switches' own LLDP neighbours.  A node that forwards IP (a container host: ip_forward=1) advertises the
    # router capability, so the nodes themselves are left out: a node is never a spine.
    node_names = set(usable) | set(r["hostname"].split(".")[0] for r in usable.values() if isinstance(r.get("hostname"), str))
    for sw_host, result in sorted((switch_results or {}).items()):
        if isinstance(result, dict) and not result.get("failed"):
            for other in _lldp_switches(result, []):
                if other not in node_names and other.split(".")[0] not in node_names:
                    uplinks.setdefault(names.get(sw_host, sw_host), set()).add(names.get(other, other))
    for link in switch_links or []:
        if not (isinstance(link, (list, tuple)) and len(link) == 2 and all(isinstance(x, str) and x for x in link)):
            raise TopologyError("switch_links: %r is not a pair of switch names [a, b]" % (link,))
        uplinks.setdefault(link[0], set()).add(link[1])
        uplinks.setdefault(link[1], set()).add(link[0])
    leaves: Dict[str, Dict[str, Any]] = {}
    nodes: Dict[str, Dict[str, Any]] = {}
    for host in sorted(usable):
        if not via[host]:
            unplaced[host] = _why(usable[host])
            continue
        nodes[host] = {"leaves": sorted(via[host]), "via": dict((k, sorted(set(v))) for k, v in sorted(via[host].items()))}
        for leaf in via[host]:
            leaves.setdefault(leaf, {"nodes": [], "spines": []})["nodes"].append(host)
    spines: Dict[str, Dict[str, Any]] = {}
    for leaf in sorted(leaves):
        leaves[leaf]["nodes"].sort()
        ups = sorted(s for s in uplinks.get(leaf, ()) if s not in leaves and _switch_only(s, fabric, ib_name))
        leaves[leaf]["spines"] = ups
        for spine in ups:
            spines.setdefault(spine, {"leaves": []})["leaves"].append(leaf)
    return {"nodes": nodes, "leaves": dict(sorted(leaves.items())), "spines": dict(sorted(spines.items())),
            "unplaced": dict(sorted(unplaced.items())),
            "multi_leaf": sorted(h for h, n in nodes.items() if len(n["leaves"]) > 1)}


def _switch_only(name: str, fabric: Dict[str, Any], ib_name: Dict[str, str]) -> bool:
    """False for an InfiniBand switch that has a CA cabled (then it is a leaf of some other node)."""
    for g, n in ib_name.items():
        if n == name:
            return not any(isinstance(p, dict) and p.get("type") == "ca" for p in fabric["switches"][g]["ports"].values())
    return True


def _why(result: Dict[str, Any]) -> str:
    lldp, ib = result.get("lldp"), result.get("infiniband")
    parts = []
    if isinstance(lldp, dict):
        if not lldp.get("installed"):
            parts.append("lldpcli not installed")
        elif lldp.get("error"):
            parts.append("LLDP unreadable: %s" % lldp["error"])
        else:
            parts.append("no LLDP neighbour advertising the bridge or router capability")
    if isinstance(ib, dict) and (ib.get("switches") or ib.get("error")):
        parts.append(ib.get("error") or "none of its HCAs is among the CAs ibnetdiscover lists")
    return "; ".join(parts) or "neither LLDP nor InfiniBand was read"


def placement(graph: Dict[str, Any]) -> Tuple[Dict[str, List[str]], Dict[str, str]]:
    """Each placed node under exactly one leaf (the first of its leaves by name): ``({leaf: nodes}, {host:
    leaf})``; Slurm's tree and a hostfile want one place per node."""
    by_leaf: Dict[str, List[str]] = dict((leaf, []) for leaf in graph["leaves"])
    where = {}
    for host, node in sorted(graph["nodes"].items()):
        leaf = node["leaves"][0]
        by_leaf[leaf].append(host)
        where[host] = leaf
    return dict((k, sorted(v)) for k, v in by_leaf.items() if v), where
