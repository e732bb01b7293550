# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""NVIDIA's ``mlnx_qos`` (mlnx-tools, python/mlnx_qos): its argv table and the parser of the
report it prints after every call.

mlnx_qos has no JSON mode; the report is parsed by its labels ("Priority trust state:",
"PFC configuration:", "prio:N dscp:...").
"""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import (
    lazy_re, ParseError, int_or_none, is_not_supported, split_lines)
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._runner import Failure, Tool

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional, Tuple

_PRIOS = 8   # IEEE 802.1p priorities

_MLNX_DSCP_LINE = lazy_re(r"^prio:\s*(?P<prio>\d+)\s+dscp:\s*(?P<list>[\d,\s]*)$")
_MLNX_TC_LINE = lazy_re(r"^tc:\s*(?P<tc>\d+)\s+ratelimit:\s*(?P<rate>[^,]+),\s*tsa:\s*(?P<tsa>[^,]+?)"
                        r"(?:,\s*bw:\s*(?P<bw>\d+)\s*%?)?\s*$")
# the total printed after the 8 buffer sizes: "total_size=N" (MLNX_OFED 5.x) or "max_buffer_size=N" (mlnx-tools
# commit b8c08c5, MLNX_OFED/DOCA-OFED 23.10 and later); OFED 4.x-5.x of 2022 printed only a trailing comma
_MLNX_BUFFER_TOTAL = lazy_re(r"^(?P<name>[a-z_]+)=(?P<value>\d+)$")


def _int_row(line: str, label: str, tool: str) -> List[int]:
    tokens = line.split()[len(label.split()):]
    try:
        return [int(t) for t in tokens]
    except ValueError:
        raise ParseError("%s: expected integers after %r in line %r" % (tool, label, line)) from None


def _buffer_sizes(line: str, tool: str) -> Tuple[List[int], Optional[Dict[str, Any]]]:
    """``Receive buffer size (bytes): 130944,130944,0,...,max_buffer_size=262016``: the sizes and the total."""
    sizes, total = [], None  # type: List[int], Optional[Dict[str, Any]]
    for item in line.partition(":")[2].replace(" ", "").split(","):
        if not item:
            continue
        m = _MLNX_BUFFER_TOTAL.match(item)
        if m:
            total = {"name": m.group("name"), "bytes": int(m.group("value"))}
        elif all("0" <= c <= "9" for c in item):
            sizes.append(int(item))
        else:
            raise ParseError("%s: cannot parse buffer size %r in line %r" % (tool, item, line))
    return sizes, total


def parse_mlnx_qos(text: str) -> Dict[str, Any]:
    """Parse the report ``mlnx_qos -i IF`` prints (also after every set command).

    Returns ``{"dcbx_mode": "os"|"firmware"|None, "trust": "dscp"|"pcp"|"none"|None,
    "dscp2prio": {dscp: prio}, "default_priority": [prio, ...], "cable_len": int|None,
    "pfc": [priorities with PFC on], "pfc_buffer": [8 buffer indices]|None,
    "receive_buffer_size": [sizes]|None, "buffer_total": {"name": "max_buffer_size"|"total_size", "bytes": N}|None,
    "tc": {tc: {"ratelimit", "tsa", "bw": percent|None, "priorities"}}, "prio_tc": {priority: tc},
    "notes": [lines such as "Buffers commands are not supported on your system"]}``.

    mlnx_qos prints the dscp2prio table only when trust is dscp; a priority with more than eight
    DSCPs wraps onto further ``prio:N dscp:`` lines.  The ETS share of a TC is printed after its
    TSA (``tsa: ets, bw: 12%``) and is read into ``bw``; strict and vendor TCs have none.  The
    buffer line ends with ``total_size=N`` (MLNX_OFED 5.x), ``max_buffer_size=N`` (23.10+) or a
    bare comma (older).  ParseError when there is no ``PFC configuration`` with an ``enabled``
    row of 8 values, or when a known line holds something else than its numbers.
    """
    tool = "mlnx_qos"
    result = {
        "dcbx_mode": None, "trust": None, "dscp2prio": {}, "default_priority": [], "cable_len": None,
        "pfc": None, "pfc_buffer": None, "receive_buffer_size": None, "buffer_total": None, "tc": {},
        "prio_tc": {}, "notes": [],
    }  # type: Dict[str, Any]
    section = None  # type: Optional[str]
    pfc_header = None  # type: Optional[List[int]]
    current_tc = None  # type: Optional[int]
    for line in split_lines(text, tool):
        if not line:
            continue
        lower = line.lower()
        if lower.startswith("dcbx mode:"):
            mode = lower.split(":", 1)[1].strip()
            result["dcbx_mode"] = "os" if mode.startswith("os") else "firmware" if mode.startswith("firmware") else mode
            section = None
        elif lower.startswith("priority trust state:"):
            result["trust"] = lower.split(":", 1)[1].strip() or None
            section = None
        elif lower.startswith("dscp2prio mapping:"):
            section = "dscp"
        elif lower.startswith("default priority:"):
            section = "default"
        elif lower.startswith("receive buffer size"):
            result["receive_buffer_size"], result["buffer_total"] = _buffer_sizes(line, tool)
            section = None
        elif lower.startswith("cable len:"):
            result["cable_len"] = int_or_none(line.split(":", 1)[1], tool, line)
            section = None
        elif lower.startswith("pfc configuration:"):
            section = "pfc"
        elif section == "pfc" and lower.startswith("priority"):
            pfc_header = _int_row(line, "priority", tool)
        elif section == "pfc" and lower.startswith("enabled"):
            row = _int_row(line, "enabled", tool)
            header = pfc_header or list(range(_PRIOS))
            if len(row) != _PRIOS or len(header) != _PRIOS or any(v not in (0, 1) for v in row):
                raise ParseError("%s: PFC 'enabled' row must hold 8 values 0/1: %r" % (tool, line))
            result["pfc"] = sorted(p for p, v in zip(header, row) if v)
        elif section == "pfc" and lower.startswith("buffer"):
            result["pfc_buffer"] = _int_row(line, "buffer", tool)
        elif _MLNX_TC_LINE.match(line):
            m = _MLNX_TC_LINE.match(line)
            current_tc = int(m.group("tc"))
            bw = m.group("bw")
            if bw is not None and int(bw) > 100:
                raise ParseError("%s: ETS share above 100%% in line %r" % (tool, line))
            result["tc"][current_tc] = {"ratelimit": m.group("rate").strip(), "tsa": m.group("tsa").strip(),
                                        "bw": None if bw is None else int(bw), "priorities": []}
            section = "tc"
        elif section == "tc" and lower.startswith("priority:") and current_tc is not None:
            prio = int_or_none(line.split(":", 1)[1], tool, line)
            if prio is None or prio >= _PRIOS:
                raise ParseError("%s: priority out of 0..7 in line %r" % (tool, line))
            result["tc"][current_tc]["priorities"].append(prio)
            result["prio_tc"][prio] = current_tc
        elif section == "dscp" and _MLNX_DSCP_LINE.match(line):
            m = _MLNX_DSCP_LINE.match(line)
            prio = int(m.group("prio"))
            for item in m.group("list").replace(" ", "").split(","):
                if item:
                    dscp = int(item)
                    if dscp > 63 or prio >= _PRIOS:
                        raise ParseError("%s: dscp2prio line %r is out of range" % (tool, line))
                    result["dscp2prio"][dscp] = prio
        elif section == "default" and lower.startswith("prio:"):
            result["default_priority"].append(int_or_none(line.split(":", 1)[1], tool, line))
        elif "not supported" in lower or lower.startswith("*"):
            result["notes"].append(line.strip("* "))
    if result["pfc"] is None:
        raise ParseError("%s: no 'PFC configuration' with an 'enabled' row in output" % tool)
    return result


# --------------------------------------------------------------------------- the tool
def _report_check(rc: int, out: str, err: str) -> Optional[Failure]:
    """Every call prints the resulting state: a run without the ``PFC configuration`` report
    failed even when it exits 0 (mlnx_qos prints some errors and exits 0).  Its Python traceback
    can be long: the message keeps the last 300 characters."""
    text = (out or "") + (err or "")
    if rc == 0 and "PFC configuration" in text:
        return None
    return Failure(" ".join(text.split())[-300:], is_not_supported(text))


_REPORT = ("show", "set_pfc", "set_trust", "set_dscp2prio")
MLNX_QOS = Tool("mlnx_qos", {
    "show": ["-i", "{ifname}"],
    "set_pfc": ["-i", "{ifname}", "--pfc", "{pfc}"],
    "set_trust": ["-i", "{ifname}", "--trust", "{trust}"],
    "set_dscp2prio": ["-i", "{ifname}", "--dscp2prio", "{op},{dscp},{prio}"],
}, parsers=dict((a, parse_mlnx_qos) for a in _REPORT), checks=dict((a, _report_check) for a in _REPORT))


def report(host: Host, ifname: str) -> Dict[str, Any]:
    """Parsed ``mlnx_qos -i IF``; NotSupported when the driver has no DCB."""
    return MLNX_QOS.call(host, "show", ifname=ifname)
