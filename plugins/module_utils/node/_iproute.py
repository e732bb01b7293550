# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""iproute2's ``ip``: its argv table, the parsers of ``ip -j link`` / ``ip -j addr`` /
``ip -j route get``, and the network interfaces of the node (``/sys/class/net``)."""
from __future__ import annotations

import os

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import ParseError, load_json_list
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._runner import Tool

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional, Tuple


def _load_json_list(text: str, tool: str) -> List[Dict[str, Any]]:
    data = load_json_list(text, tool, "interfaces")
    for index, item in enumerate(data):
        if not isinstance(item.get("ifname"), str):
            raise ParseError("%s: entry %d has no 'ifname' field" % (tool, index))
    return data


def parse_ip_link_json(text: str) -> List[Dict[str, Any]]:
    """Parse ``ip -j -d link show`` into one dict per interface, in the order printed.

    Keys: ifname, ifindex, mtu, min_mtu, max_mtu, operstate, address, permaddr, link_type,
    flags (list), master, kind (``linkinfo.info_kind``), slave_kind (``linkinfo.info_slave_kind``:
    ``bridge``, ``bond`` for a port), link, link_index, link_netnsid, parentbus, parentdev,
    numtxqueues, numrxqueues.  Anything the tool did not print is None (flags: []); min_mtu,
    max_mtu, kind, slave_kind, parentbus, parentdev and the queue counts need ``-d``.

    ``link`` names the device this one sits on (a VLAN's or macvlan's lower device) or, for a
    veth, its peer, when that device is in the same network namespace; otherwise ip prints
    ``link_index`` (and ``link_netnsid``) instead.
    """
    tool = "ip -j link"
    result = []  # type: List[Dict[str, Any]]
    for item in _load_json_list(text, tool):
        linkinfo = item.get("linkinfo")
        kind = linkinfo.get("info_kind") if isinstance(linkinfo, dict) else None
        slave_kind = linkinfo.get("info_slave_kind") if isinstance(linkinfo, dict) else None
        flags = item.get("flags")
        result.append({
            "ifname": item["ifname"],
            "ifindex": item.get("ifindex"),
            "mtu": item.get("mtu"),
            "min_mtu": item.get("min_mtu"),
            "max_mtu": item.get("max_mtu"),
            "operstate": item.get("operstate"),
            "address": item.get("address"),
            "permaddr": item.get("permaddr"),
            "link_type": item.get("link_type"),
            "flags": list(flags) if isinstance(flags, list) else [],
            "master": item.get("master"),
            "kind": kind,
            "slave_kind": slave_kind,
            "link": item.get("link"),
            "link_index": item.get("link_index"),
            "link_netnsid": item.get("link_netnsid"),
            "parentbus": item.get("parentbus"),
            "parentdev": item.get("parentdev"),
            # iproute2 prints "num_tx_queues" in JSON ("numtxqueues" in text mode); accept both
            "numtxqueues": item.get("num_tx_queues", item.get("numtxqueues")),
            "numrxqueues": item.get("num_rx_queues", item.get("numrxqueues")),
        })
    return result


def parse_ip_addr_json(text: str) -> Dict[str, List[Dict[str, Any]]]:
    """Parse ``ip -j addr show`` into ``{ifname: [{"family", "local", "prefixlen"}, ...]}``.

    Every interface printed is a key (an empty list when it has no address); addr_info
    entries without a ``local`` address are skipped.
    """
    tool = "ip -j addr"
    result = {}  # type: Dict[str, List[Dict[str, Any]]]
    for item in _load_json_list(text, tool):
        addrs = result.setdefault(item["ifname"], [])
        addr_info = item.get("addr_info") or []
        if not isinstance(addr_info, list):
            raise ParseError("%s: 'addr_info' of %s is not a list" % (tool, item["ifname"]))
        for addr in addr_info:
            if not isinstance(addr, dict) or "local" not in addr:
                continue
            addrs.append({"family": addr.get("family"), "local": addr["local"], "prefixlen": addr.get("prefixlen")})
    return result


def parse_ip_route_get_json(text: str) -> Dict[str, Any]:
    """Parse ``ip -j route get ADDR`` into ``{"dst", "dev", "type", "gateway", "prefsrc"}``.

    ``dev`` is the interface the node sends to ``dst`` through; ``type`` is ``"local"`` when
    ``dst`` is one of the node's own addresses (then ``dev`` is ``lo``), else None (a unicast
    route).  Anything not printed is None.
    """
    tool = "ip -j route get"
    data = load_json_list(text, tool, "routes")
    if not data:
        raise ParseError("%s: no route printed" % tool)
    item = data[0]
    if not isinstance(item.get("dev"), str):
        raise ParseError("%s: the route has no 'dev' field" % tool)
    return {"dst": item.get("dst"), "dev": item["dev"], "type": item.get("type"),
            "gateway": item.get("gateway"), "prefsrc": item.get("prefsrc")}


# --------------------------------------------------------------------------- the tool
IP = Tool("ip", {
    "links": ["-j", "-d", "link", "show"],
    "addrs": ["-j", "addr", "show"],
    "route_get": ["-j", "route", "get", "{address}"],
    "route_get_oif": ["-j", "route", "get", "{address}", "oif", "{ifname}"],
    "set_mtu": ["link", "set", "dev", "{ifname}", "mtu", "{mtu}"],
}, parsers={"links": parse_ip_link_json, "addrs": parse_ip_addr_json,
            "route_get": parse_ip_route_get_json, "route_get_oif": parse_ip_route_get_json})


def links(host: Host) -> List[Dict[str, Any]]:
    """Every link as :func:`parse_ip_link_json` returns it (``ip -j -d link show``)."""
    return IP.call(host, "links")


def addrs(host: Host) -> Dict[str, List[Dict[str, Any]]]:
    """``{ifname: [addresses]}`` as :func:`parse_ip_addr_json` returns it (``ip -j addr show``)."""
    return IP.call(host, "addrs")


def route_get(host: Host, address: str, oif: Optional[str] = None) -> Tuple[Optional[Dict[str, Any]], str]:
    """The route the node takes to ``address`` (through ``oif`` when given: a link-local address
    needs its interface), as :func:`parse_ip_route_get_json` returns it, and ``""``; or None and
    the reason when there is none (unreachable, no ``ip``, unparsable output).  Never raises:
    a missing route is an answer here, not a failure."""
    try:
        if oif:
            rc, out, err = IP.run(host, "route_get_oif", address=address, ifname=oif)
        else:
            rc, out, err = IP.run(host, "route_get", address=address)
    except HostError as e:
        return None, str(e)
    if rc != 0:
        return None, (err or out).strip() or "ip route get exited %d" % rc
    try:
        return parse_ip_route_get_json(out), ""
    except ParseError as e:
        return None, str(e)


def set_mtu(host: Host, ifname: str, mtu: int) -> None:
    IP.call(host, "set_mtu", ifname=ifname, mtu=mtu)


def interfaces(host: Host) -> List[str]:
    """Names of the node's network interfaces, sorted (``/sys/class/net``)."""
    return host.listdir("/sys/class/net")


def iface_driver(host: Host, ifname: str) -> Optional[str]:
    """The kernel driver behind an interface (its device's driver link), else its link kind
    (``veth``, ``bond`` ...) from ``ip -d link``, else None."""
    target = host.readlink("/sys/class/net/%s/device/driver" % ifname)
    if target:
        return os.path.basename(target)
    kind = None
    for link in links(host):
        if link["ifname"] == ifname:
            kind = link.get("kind")
    return kind
