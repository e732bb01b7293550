# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parsers of the kernel's network files: /proc/net/softnet_stat (hex columns, one row per CPU),
/proc/net/snmp or /proc/net/netstat (header/value line pairs) and /proc/net/tcp, tcp6 (one
socket per line).  Files, not tools: the callers read them through the Host."""
from __future__ import annotations

import sys

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import ParseError, split_lines

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List


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


TCP_ESTABLISHED = 1


def _hex_address(text: str, byteorder: str) -> str:
    """'0100007F' -> '127.0.0.1': the kernel prints each 32-bit word of the address in the
    CPU's byte order (``%08X``), 1 word for IPv4, 4 for IPv6."""
    import ipaddress  # here: only the bench's socket reader needs it, not the node health check's start
    raw = b"".join(int(text[i:i + 8], 16).to_bytes(4, byteorder) for i in range(0, len(text), 8))  # type: ignore[arg-type]
    return str(ipaddress.ip_address(raw))


def parse_proc_net_tcp(text: str, byteorder: str = sys.byteorder) -> List[Dict[str, Any]]:
    """Parse /proc/net/tcp or /proc/net/tcp6 into ``[{"local", "local_port", "remote",
    "remote_port", "state", "inode"}]`` (addresses as text, ``state`` the kernel's number:
    1 = ESTABLISHED, 10 = LISTEN).  ``byteorder`` is the node's (the file is read there)."""
    tool = "/proc/net/tcp"
    out = []
    for line in split_lines(text, tool)[1:]:
        if not line:
            continue
        cols = line.split()
        try:
            local, lport = cols[1].split(":")
            remote, rport = cols[2].split(":")
            if len(local) not in (8, 32) or len(remote) != len(local):
                raise ValueError(local)
            out.append({"local": _hex_address(local, byteorder), "local_port": int(lport, 16),
                        "remote": _hex_address(remote, byteorder), "remote_port": int(rport, 16),
                        "state": int(cols[3], 16), "inode": int(cols[9])})
        except (IndexError, ValueError):
            raise ParseError("%s: unexpected line %r" % (tool, line)) from None
    return out
