# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parsers of the kernel's network statistics files: /proc/net/softnet_stat (hex columns, one row
per CPU) and /proc/net/snmp or /proc/net/netstat (header/value line pairs).  Files, not tools:
the callers read them through the Host."""
from __future__ import annotations

from typing import Dict, List

from ansible_collections.hpcnet.rdma.plugins.module_utils._parsing import ParseError, split_lines


def parse_softnet_stat(text: str) -> List[Dict[str, int]]:
    """Parse /proc/net/softnet_stat (one hex row per online CPU) into ``[{"cpu", "processed",
    "dropped", "time_squeeze", "received_rps", "flow_limit_count"}]``.

    Columns (net/core/net-procfs.c): processed, dropped, time_squeeze, six zeros (fastroute,
    cpu_collision), received_rps, flow_limit_count, then (5.10+) backlog length and the CPU
    number, then (6.x) input and process queue lengths.  ``cpu`` is that CPU column when
    printed, else the row number."""
    tool = "/proc/net/softnet_stat"
    out = []
    for row, line in enumerate(line for line in split_lines(text, tool) if line):
        try:
            cols = [int(c, 16) for c in line.split()]
        except ValueError:
            raise ParseError("%s: non-hex column in line %r" % (tool, line)) from None
        if len(cols) < 3:
            raise ParseError("%s: fewer than 3 columns in line %r" % (tool, line))
        out.append({"cpu": cols[12] if len(cols) >= 13 else row, "processed": cols[0], "dropped": cols[1],
                    "time_squeeze": cols[2], "received_rps": cols[9] if len(cols) > 9 else 0,
                    "flow_limit_count": cols[10] if len(cols) > 10 else 0})
    return out


def parse_proc_net_snmp(text: str) -> Dict[str, Dict[str, int]]:
    """Parse /proc/net/snmp (and /proc/net/netstat): ``{"Tcp": {"RetransSegs": 0, ...}, ...}``."""
    tool = "/proc/net/snmp"
    lines = [line for line in split_lines(text, tool) if line]
    out = {}  # type: Dict[str, Dict[str, int]]
    for head, values in zip(lines[::2], lines[1::2]):
        hname, _sep, hcols = head.partition(":")
        vname, _sep, vcols = values.partition(":")
        names, numbers = hcols.split(), vcols.split()
        if hname != vname or len(names) != len(numbers):
            raise ParseError("%s: header %r and values %r do not pair up" % (tool, head, values))
        try:
            out[hname] = dict((n, int(v)) for n, v in zip(names, numbers))
        except ValueError:
            raise ParseError("%s: non-integer value in line %r" % (tool, values)) from None
    if len(lines) % 2:
        raise ParseError("%s: header line %r has no value line" % (tool, lines[-1]))
    return out
