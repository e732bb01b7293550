# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""infiniband-diags' ``ibnetdiscover``: the argv table and the pure parser of its two layouts.

The topology file (plain ``ibnetdiscover``) lists each node, then one line per cabled port::

    Switch  24 "S-005442ba00003080"         # "ISR9024 Voltaire" base port 0 lid 6 lmc 0
    [22]    "H-0008f10403961354"[1](8f10403961355)         # "MT23108 InfiniHost ..." lid 4 4xSDR
    Ca      2 "H-0008f10403960984"          # "MT23108 InfiniHost Mellanox Technologies"
    [1](8f10403960985)     "S-0008f10400410015"[6]         # lid 16 lmc 1 "SW-6IB4 Voltaire" lid 3 4xSDR

The ports report (``ibnetdiscover -p``) is one line per port, its peer after `` - ``::

    CA   134  1 0x7cfe9003003b4bde 4x EDR - SW  1719 10 0x7cfe9003009ce5b0 ( 'o0001 HCA-1' - 'ib-i1l1s01' )
    SW  2052 37 0x506b4b03005c2740 4x ???                                    'ib-i4l1s01'

Both give the same result: ``{"switches": {guid: node}, "cas": {guid: node}, "routers": {...}}``, a
node ``{"guid", "name", "lid", "ports": {port: peer}}`` and a peer ``{"type": "switch"|"ca"|"router",
"guid", "port", "name", "link"}``.  GUIDs are 16 lower-case hex digits.  Header and grouping lines
(``vendid=``, ``# ...``, ``Chassis ...``) are skipped; a port line before any node, or a line that
starts like a port or node line but does not parse, is a ParseError naming the line.
"""
from __future__ import annotations

import re

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import lazy_re, ParseError, split_lines
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._runner import Tool

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, Optional

TOOL = "ibnetdiscover"
KINDS = {"S": "switch", "H": "ca", "R": "router", "SW": "switch", "CA": "ca", "RT": "router",
         "Switch": "switch", "Ca": "ca", "Rt": "router"}
_TABLE = {"switch": "switches", "ca": "cas", "router": "routers"}
_NODE = lazy_re(r'^(Switch|Ca|Rt)\s+(\d+)\s+"([SHR])-([0-9a-fA-F]{1,16})"\s*(?:#\s*"([^"]*)"(.*))?$')
_LINK = lazy_re(r'^\[(\d+)\](?:\[ext \d+\])?(?:\(([0-9a-fA-F]+)\))?\s+"([SHR])-([0-9a-fA-F]{1,16})"\[(\d+)\]'
                r'(?:\[ext \d+\])?(?:\(([0-9a-fA-F]+)\))?\s*(?:#\s*(.*))?$')
_PORT = lazy_re(r"^(SW|CA|RT)\s+(\d+)\s+(\d+)\s+0x([0-9a-fA-F]{1,16})\s+(\S+)\s+(\S+)\s*(.*)$")
_PEER = lazy_re(r"^-\s+(SW|CA|RT)\s+(\d+)\s+(\d+)\s+0x([0-9a-fA-F]{1,16})\s+\(\s*'(.*?)'\s+-\s+'(.*)'\s*\)$")
_LID = lazy_re(r"\blid (\d+)")


def guid(text: str) -> str:
    """'0x8f10400410015' / '0008f10400410015' / '0008:f104:0041:0015' -> '0008f10400410015'."""
    return text.lower().replace("0x", "").replace(":", "").zfill(16)


def _new(result: Dict[str, Any], kind: str, node_guid: str, name: Optional[str], lid: Optional[int]) -> Dict[str, Any]:
    node = result[_TABLE[kind]].setdefault(node_guid, {"guid": node_guid, "name": None, "lid": None, "ports": {}})
    if name is not None and node["name"] is None:
        node["name"] = name
    if lid is not None and node["lid"] is None:
        node["lid"] = lid
    return node


def _back(result: Dict[str, Any], node: Dict[str, Any], port: str, peer: Dict[str, Any], kind: Optional[str] = None) -> None:
    """The cable seen from the peer's side, when the capture does not list it (a partial capture, or the
    ports report printing one side): the peer is a node of the fabric even without its own record."""
    other = _new(result, peer["type"], peer["guid"], peer["name"], peer["lid"])
    if kind is None:
        kind = next(k for k, table in _TABLE.items() if result[table].get(node["guid"]) is node)
    other["ports"].setdefault(peer["port"], {"type": kind, "guid": node["guid"], "port": int(port),
                                             "name": node["name"], "lid": node["lid"], "link": peer["link"]})


def _link_comment(comment: str, kind: str) -> Dict[str, Any]:
    """The comment of a port line: the peer's NodeDescription, its LID (the last one) and the link (4xEDR)."""
    name = re.search(r'"([^"]*)"', comment)
    lids = _LID.findall(comment)
    tail = comment.rsplit(None, 1)[-1] if comment.strip() else None
    return {"name": name.group(1) if name else None, "lid": int(lids[-1]) if lids else None,
            "link": tail if tail and re.match(r"^\d+x\S+$", tail) else None}


def _full(lines, result: Dict[str, Any]) -> None:
    node = None
    for line in lines:
        if not line or line.startswith("#") or "=" in line.split(None, 1)[0] or line.startswith("Chassis") \
                or line == "Non-Chassis Nodes":
            continue
        m = _NODE.match(line)
        if m:
            lid = _LID.search(m.group(6) or "")
            node = _new(result, KINDS[m.group(1)], guid(m.group(4)), m.group(5), int(lid.group(1)) if lid else None)
            continue
        if line.startswith("[") or line.split(None, 1)[0] in ("Switch", "Ca", "Rt"):
            m = _LINK.match(line)
            if not m:
                raise ParseError("%s: cannot read the line %r" % (TOOL, line))
            if node is None:
                raise ParseError("%s: port line %r before any Switch/Ca record" % (TOOL, line))
            info = _link_comment(m.group(7) or "", m.group(3))
            peer = {"type": KINDS[m.group(3)], "guid": guid(m.group(4)), "port": int(m.group(5)),
                    "name": info["name"], "lid": info["lid"], "link": info["link"]}
            node["ports"][int(m.group(1))] = peer
            _back(result, node, m.group(1), peer)


def _ports(lines, result: Dict[str, Any]) -> None:
    for line in lines:
        if not line:
            continue
        m = _PORT.match(line)
        if not m:
            raise ParseError("%s -p: cannot read the line %r" % (TOOL, line))
        kind, lid, port, node_guid, width, speed, rest = m.groups()
        peer = _PEER.match(rest)
        if peer is None:
            # an unconnected port: only the NodeDescription follows ('quoted' or not)
            _new(result, KINDS[kind], guid(node_guid), rest.strip().strip("'") or None, int(lid))
            continue
        pkind, plid, pport, pguid, name, pname = peer.groups()
        node = _new(result, KINDS[kind], guid(node_guid), name, int(lid))
        node["ports"][int(port)] = {"type": KINDS[pkind], "guid": guid(pguid), "port": int(pport), "name": pname,
                                    "lid": int(plid), "link": width + speed}
        _back(result, node, port, node["ports"][int(port)], KINDS[kind])


def parse_ibnetdiscover(text: str) -> Dict[str, Any]:
    """Switches, CAs and routers with their cabled ports, from either layout of ``ibnetdiscover``."""
    lines = split_lines(text, TOOL)
    result: Dict[str, Any] = {"switches": {}, "cas": {}, "routers": {}}
    if any(_PORT.match(line) for line in lines):
        _ports(lines, result)
    else:
        _full(lines, result)
    if not (result["switches"] or result["cas"] or result["routers"]):
        raise ParseError("%s: no Switch, Ca or Rt record in %d lines" % (TOOL, len(lines)))
    return result


IBNETDISCOVER = Tool("ibnetdiscover", {"topology": []}, parsers={"topology": parse_ibnetdiscover})
