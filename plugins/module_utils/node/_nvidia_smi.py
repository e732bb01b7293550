# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``nvidia-smi topo -m``: its argv table and the parser of the GPU/NIC matrix.

nvidia-smi separates the columns with tabs; copies of it (logs, issue reports, ``sglang check_env``)
often carry spaces instead, so cells are split on tabs when the line has any, else on runs of
blanks.  No cell holds a blank except the three affinity headers, which are matched by name.
Drivers before R450 print no ``NUMA Affinity``, before ~R530 no ``GPU NUMA ID``; drivers before the
``NIC Legend`` name the NIC columns after the RDMA device (``mlx5_0``) directly.
"""
from __future__ import annotations

import re

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import lazy_re, ParseError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._runner import Tool

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List

EXTRA_COLUMNS = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
_GPU = lazy_re(r"^GPU\d+$")


def _cells(line: str) -> List[str]:
    if "\t" in line:
        cells = [c.strip() for c in line.split("\t")]
        while cells and cells[-1] == "":
            cells.pop()
        return cells
    return line.split()


def _header(line: str) -> List[str]:
    """Column names of the header line (the leading empty corner cell dropped)."""
    if "\t" in line:
        columns = [c.strip() for c in line.split("\t")]
        return [c for c in columns if c]
    text = line.strip()
    marks = {}
    for i, name in enumerate(EXTRA_COLUMNS):
        mark = "\x00%d" % i
        marks[mark] = name
        text = text.replace(name, mark)
    return [marks.get(word, word) for word in text.split()]


def parse_nvidia_smi_topo(text: str) -> Dict[str, Any]:
    """Parse ``nvidia-smi topo -m`` into ``{"devices": [GPU0, NIC0, ...], "matrix": {row: {column:
    "PIX"|"NV12"|"X"|...}}, "cpu_affinity": {gpu: cpulist}, "numa_affinity": {gpu: node},
    "gpu_numa_id": {gpu: id}, "nics": {NIC0: "mlx5_0"}, "gpu_nics": {gpu: {rdma device: relation}},
    "unreadable_rows": [reason]}``.

    ``gpu_nics`` is the GPU/NIC affinity read off the matrix with the NIC columns named by their RDMA
    device (through the ``NIC Legend`` when there is one).  A matrix row that names no header column
    is reported in ``unreadable_rows`` and the other rows are kept; ParseError when there is no
    header or no row could be read."""
    tool = "nvidia-smi topo -m"
    if not isinstance(text, str) or not text.strip():
        raise ParseError("%s: empty output" % tool)
    lines = [line.rstrip("\r\n") for line in text.splitlines()]
    start = next(i for i, line in enumerate(lines) if line.strip())
    header = lines[start]
    columns = _header(header)
    first_extra = next((i for i, c in enumerate(columns) if c in EXTRA_COLUMNS), len(columns))
    devices, extras = columns[:first_extra], columns[first_extra:]
    if not any(_GPU.match(d) for d in devices):
        raise ParseError("%s: the header line names no GPU column: %r" % (tool, header.strip()[:120]))
    result = {"devices": devices, "matrix": {}, "cpu_affinity": {}, "numa_affinity": {}, "gpu_numa_id": {},
              "nics": {}, "gpu_nics": {}, "unreadable_rows": []}  # type: Dict[str, Any]
    keys = {"CPU Affinity": "cpu_affinity", "NUMA Affinity": "numa_affinity", "GPU NUMA ID": "gpu_numa_id"}
    in_matrix = True
    for line in lines[start + 1:]:
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
        cells = _cells(line)
        row, values = cells[0], cells[1:]
        if row not in devices:
            result["unreadable_rows"].append("%s: row %r is not one of the header's devices in line %r"
                                             % (tool, row, stripped[:120]))
            continue
        result["matrix"][row] = dict((dev, values[i]) for i, dev in enumerate(devices) if i < len(values))
        # nvidia-smi pads the wide affinity columns with a second tab ("0\t\tN/A"): empty cells there are padding
        for name, value in zip(extras, [v for v in values[len(devices):] if v]):
            if name in keys:   # a column this version of nvidia-smi added: not read
                result[keys[name]][row] = value
    if not result["matrix"]:
        reason = result["unreadable_rows"][0] if result["unreadable_rows"] else "%s: no matrix rows in output" % tool
        raise ParseError(reason)
    for gpu, row in result["matrix"].items():
        if _GPU.match(gpu):
            result["gpu_nics"][gpu] = dict((result["nics"].get(dev, dev), rel) for dev, rel in row.items()
                                           if not _GPU.match(dev))
    return result


NVIDIA_SMI = Tool("nvidia-smi", {"topo": ["topo", "-m"]}, parsers={"topo": parse_nvidia_smi_topo})
