# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters ``hpcnet.rdma.fabric_topology_graph``, ``slurm_topology_conf``, ``mpi_hostfile`` and
``nccl_topology_env``: fabric_topology_info results to the fabric graph, and the graph to the files
the scheduler and MPI read.  The logic is ``plugins/plugin_utils/_topology.py`` and
``_topology_render.py`` (pure); documentation in the ``.yml`` file of each filter.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

from ansible.errors import AnsibleFilterError

from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _topology, _topology_render


def _graph(graph: Any, name: str) -> Dict[str, Any]:
    if not isinstance(graph, dict) or not all(k in graph for k in ("nodes", "leaves", "spines", "unplaced")):
        raise AnsibleFilterError("%s: the input must be the graph hpcnet.rdma.fabric_topology_graph returns" % name)
    return graph


def fabric_topology_graph(results: Any, interfaces: Optional[List[str]] = None, switch_results: Optional[Dict[str, Any]] = None,
                          switch_links: Optional[List[Any]] = None, switch_names: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    try:
        return _topology.build_graph(results, interfaces, switch_results, switch_links, switch_names)
    except _topology.TopologyError as e:
        raise AnsibleFilterError("fabric_topology_graph: %s" % e) from None


def slurm_topology_conf(graph: Any) -> str:
    try:
        return _topology_render.slurm_topology_conf(_graph(graph, "slurm_topology_conf"))
    except _topology.TopologyError as e:
        raise AnsibleFilterError("slurm_topology_conf: %s" % e) from None


def mpi_hostfile(graph: Any, slots: Any = 1, include_unplaced: bool = True) -> str:
    try:
        return _topology_render.mpi_hostfile(_graph(graph, "mpi_hostfile"), slots, include_unplaced)
    except _topology.TopologyError as e:
        raise AnsibleFilterError("mpi_hostfile: %s" % e) from None


def nccl_topology_env(graph: Any) -> Dict[str, Optional[str]]:
    return _topology_render.nccl_env(_graph(graph, "nccl_topology_env"))


class FilterModule(object):
    def filters(self) -> Dict[str, Callable[..., Any]]:
        return {"fabric_topology_graph": fabric_topology_graph, "slurm_topology_conf": slurm_topology_conf,
                "mpi_hostfile": mpi_hostfile, "nccl_topology_env": nccl_topology_env}
