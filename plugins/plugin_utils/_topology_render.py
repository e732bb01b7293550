# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the fabric graph (``_topology.build_graph``) is rendered to: Slurm's ``topology.conf`` for the
tree plugin, an Open MPI hostfile grouped by leaf, and the NCCL environment that follows (pure).

Slurm reads node and switch lists with its hostlist parser (``Nodes=tux[0-3,12,18-20]``), so the lists
are compressed the same way (:func:`hostlist`): a run of names that differ only in a trailing number
becomes ``prefix[a-b,c]``; zero-padded numbers keep their width (``n[01-04]``).  Every output is
sorted, so the same graph always renders the same bytes.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.hpcnet.rdma.plugins.plugin_utils._topology import NAME_RE, TopologyError, placement

_NUM = re.compile(r"^(.*?)(\d+)$")


def _key(name: str) -> Tuple[str, int, int]:
    m = _NUM.match(name)
    return (m.group(1), 1, int(m.group(2))) if m else (name, 0, 0)


def hostlist(names: List[str]) -> str:
    """Slurm hostlist expression of ``names`` (order-independent, duplicates dropped)."""
    for name in names:
        if not isinstance(name, str) or not NAME_RE.match(name):
            raise TopologyError("%r is not a host or switch name Slurm accepts (letters, digits, '.', '_', '-')" % (name,))
    groups: Dict[Tuple[str, int], List[int]] = {}
    plain: List[str] = []
    padded_widths: Dict[str, set] = {}
    parsed = []
    for name in sorted(set(names), key=_key):
        m = _NUM.match(name)
        if not m:
            plain.append(name)
            continue
        digits = m.group(2)
        parsed.append((m.group(1), digits))
        if len(digits) > 1 and digits[0] == "0":
            padded_widths.setdefault(m.group(1), set()).add(len(digits))
    for prefix, digits in parsed:
        widths = padded_widths.get(prefix, set())
        width = len(digits) if (digits[0] == "0" and len(digits) > 1) or len(digits) in widths else 0
        groups.setdefault((prefix, width), []).append(int(digits))
    parts = list(plain)
    for (prefix, width), numbers in groups.items():
        numbers = sorted(set(numbers))
        fmt = "%0" + str(width) + "d" if width else "%d"
        if len(numbers) == 1:
            parts.append(prefix + fmt % numbers[0])
            continue
        ranges, start, prev = [], numbers[0], numbers[0]
        for n in numbers[1:] + [None]:
            if n is not None and n == prev + 1:
                prev = n
                continue
            ranges.append(fmt % start if start == prev else "%s-%s" % (fmt % start, fmt % prev))
            if n is not None:
                start = prev = n
        parts.append("%s[%s]" % (prefix, ",".join(ranges)))
    return ",".join(sorted(parts, key=lambda p: _key(p.split("[", 1)[0])))


def slurm_topology_conf(graph: Dict[str, Any]) -> str:
    """``topology.conf`` for ``TopologyPlugin=topology/tree``: one ``SwitchName=<leaf> Nodes=...`` line per
    leaf, one ``SwitchName=<spine> Switches=...`` line per spine; unplaced nodes and nodes cabled to more
    than one leaf (listed under their first leaf) are named in comments."""
    by_leaf, _where = placement(graph)
    lines = ["# topology.conf for Slurm's topology/tree plugin, written by hpcnet.rdma from the fabric graph"]
    for host in graph.get("multi_leaf", []):
        leaves = graph["nodes"][host]["leaves"]
        lines.append("# %s is cabled to %s; listed under %s" % (host, ", ".join(leaves), leaves[0]))
    for host, reason in sorted(graph.get("unplaced", {}).items()):
        lines.append("# unplaced: %s (%s)" % (host, reason))
    for leaf, hosts in sorted(by_leaf.items()):
        lines.append("SwitchName=%s Nodes=%s" % (_switch(leaf), hostlist(hosts)))
    for spine, info in sorted(graph.get("spines", {}).items()):
        leaves = [leaf for leaf in info["leaves"] if leaf in by_leaf] or info["leaves"]
        lines.append("SwitchName=%s Switches=%s" % (_switch(spine), hostlist(leaves)))
    return "\n".join(lines) + "\n"


def _switch(name: str) -> str:
    if not NAME_RE.match(name or ""):
        raise TopologyError("switch name %r is not one Slurm accepts (letters, digits, '.', '_', '-'): "
                            "give it one in switch_names" % (name,))
    return name


def mpi_hostfile(graph: Dict[str, Any], slots: Any = 1, include_unplaced: bool = True) -> str:
    """An Open MPI hostfile (``host slots=N``) with the hosts of each leaf together, leaves in name
    order, so ranks placed in file order fill one leaf before the next.  ``slots`` is a number or a
    mapping host -> number."""
    by_leaf, _where = placement(graph)

    def line(host: str) -> str:
        n = slots.get(host, 1) if isinstance(slots, dict) else slots
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise TopologyError("slots of %s: %r is not a positive integer" % (host, n))
        return "%s slots=%d" % (host, n)

    lines = ["# Open MPI hostfile grouped by leaf switch, written by hpcnet.rdma from the fabric graph"]
    for leaf, hosts in sorted(by_leaf.items()):
        lines.append("# leaf %s" % leaf)
        lines.extend(line(h) for h in hosts)
    unplaced = sorted(graph.get("unplaced", {}))
    if unplaced and include_unplaced:
        lines.append("# unplaced (no leaf known)")
        lines.extend(line(h) for h in unplaced)
    return "\n".join(lines) + "\n"


def nccl_env(graph: Dict[str, Any]) -> Dict[str, Optional[str]]:
    """The NCCL variables the cabling decides.  NCCL takes no switch topology: ``NCCL_TOPO_FILE`` is the
    XML of a node's own PCI/GPU/NIC tree, not of the fabric.  What follows from the graph is
    ``NCCL_CROSS_NIC=0`` when every placed node has its NICs on different leaves (a rail-optimised
    fabric: ring/tree peers should use the same NIC index, so traffic stays on one rail); otherwise
    nothing, and NCCL's own default stands.  Rank order by leaf comes from the hostfile, not from NCCL."""
    nodes = graph.get("nodes", {})
    rails = bool(nodes) and all(len(n["leaves"]) > 1 and all(len(v) == 1 for v in n["via"].values())
                                for n in nodes.values())
    return {"NCCL_CROSS_NIC": "0"} if rails else {}
