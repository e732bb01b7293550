# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``nvidia-smi topo -m``: its argv table and the parser of the tab-separated GPU/NIC matrix."""
from __future__ import annotations

import re
from typing import Any, Dict

from ansible_collections.hpcnet.rdma.plugins.module_utils._parsing import ParseError
from ansible_collections.hpcnet.rdma.plugins.module_utils._runner import Tool


def parse_nvidia_smi_topo(text: str) -> Dict[str, Any]:
    """Parse ``nvidia-smi topo -m`` (tab-separated) into ``{"devices": [GPU0, NIC0, ...],
    "matrix": {row: {column: "PIX"|"NV12"|"X"|...}}, "cpu_affinity": {gpu: cpulist},
    "numa_affinity": {gpu: node}, "nics": {NIC0: "mlx5_0"}}``."""
    tool = "nvidia-smi topo -m"
    lines = [line.rstrip() for line in text.splitlines()] if isinstance(text, str) else None
    if not lines or not any(lines):
        raise ParseError("%s: empty output" % tool)
    header = next((line for line in lines if line.strip()), "")
    if "\t" not in header:
        raise ParseError("%s: the header line has no tab-separated columns: %r" % (tool, header))
    columns = [c.strip() for c in header.split("\t")]
    if columns and columns[0] == "":
        columns = columns[1:]
    extra = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
    devices = [c for c in columns if c and c not in extra]
    result = {"devices": devices, "matrix": {}, "cpu_affinity": {}, "numa_affinity": {},
              "nics": {}}  # type: Dict[str, Any]
    in_matrix = True
    for line in lines[lines.index(header) + 1:]:
        stripped = line.strip()
        if not stripped:
            in_matrix = False
            continue
        m = re.match(r"^(NIC\d+):\s*(\S+)$", stripped)
        if m:
            result["nics"][m.group(1)] = m.group(2)
            continue
        if not in_matrix:
            continue
        cells = [c.strip() for c in line.split("\t")]
        row = cells[0]
        if row not in devices:
            raise ParseError("%s: row %r is not one of the header's devices" % (tool, row))
        values = cells[1:]
        result["matrix"][row] = dict((dev, values[i]) for i, dev in enumerate(devices) if i < len(values))
        for i, name in enumerate(columns[len(devices):]):
            pos = len(devices) + i
            value = values[pos] if pos < len(values) else ""
            if name == "CPU Affinity" and value:
                result["cpu_affinity"][row] = value
            elif name == "NUMA Affinity" and value:
                result["numa_affinity"][row] = value
    if not result["matrix"]:
        raise ParseError("%s: no matrix rows in output" % tool)
    return result


NVIDIA_SMI = Tool("nvidia-smi", {"topo": ["topo", "-m"]}, parsers={"topo": parse_nvidia_smi_topo})
