# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``fabric_topology_info``'s body: read the node's link neighbours, change nothing.

LLDP: one ``lldpcli -f json show neighbors details`` when lldpcli is installed (lldpd must run for
it to answer).  InfiniBand: one ``ibnetdiscover`` when the tool is installed and the node has an
InfiniBand port (sysfs ``link_layer``), or the file a user names (the output saved on the subnet
manager's node, say).  A tool that is missing is ``installed: false``; one that fails or prints
what cannot be read is ``error: reason`` with the rest of the facts kept, and both are named in
``findings``.  The node's own HCA node GUIDs and host name let the controller match it to the
CAs ``ibnetdiscover`` lists.
"""
from __future__ import annotations

import fnmatch

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import ParseError
from ansible_collections.hpcnet.rdma.plugins.module_utils.topology import _ibnet, _lldp

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional

IB = "/sys/class/infiniband"


def _read(host: Host, path: str) -> Optional[str]:
    try:
        text = host.read(path)
    except HostError:
        return None
    return None if text is None else text.strip()


def _run(host: Host, tool: Any, action: str) -> Dict[str, Any]:
    """``{"data": parsed}`` or ``{"error": reason}``; never raises."""
    argv = tool.argv(action)
    try:
        rc, out, err = host.run(argv)
    except HostError as e:
        return {"error": str(e)}
    if rc != 0:
        return {"error": "%s exited %d: %s" % (" ".join(argv), rc, " ".join((err or out).split())[-300:])}
    try:
        return {"data": tool.parsers[action](out)}
    except ParseError as e:
        return {"error": str(e)}


def lldp(host: Host, patterns: List[str]) -> Dict[str, Any]:
    if host.which("lldpcli") is None:
        return {"installed": False, "error": None, "interfaces": {}}
    got = _run(host, _lldp.LLDPCLI, "neighbors")
    found = got.get("data") or {}
    if patterns:
        found = dict((k, v) for k, v in found.items() if any(fnmatch.fnmatchcase(k, p) for p in patterns))
    return {"installed": True, "error": got.get("error"), "interfaces": dict(sorted(found.items()))}


def local_ib(host: Host) -> Dict[str, Any]:
    """The node's RDMA devices with an InfiniBand port, and their node GUIDs."""
    out = {}
    for dev in host.listdir(IB):
        ports = [p for p in host.listdir("%s/%s/ports" % (IB, dev))
                 if _read(host, "%s/%s/ports/%s/link_layer" % (IB, dev, p)) == "InfiniBand"]
        if ports:
            node_guid = _read(host, "%s/%s/node_guid" % (IB, dev))
            out[dev] = {"node_guid": _ibnet.guid(node_guid) if node_guid else None, "ports": sorted(ports)}
    return out


def infiniband(host: Host, path: Optional[str]) -> Dict[str, Any]:
    local = local_ib(host)
    res: Dict[str, Any] = {"source": None, "error": None, "local": local, "switches": {}, "cas": {}, "routers": {}}
    if path:
        text = _read(host, path)
        if text is None:
            raise ValueError("ibnetdiscover_file: %r does not exist or cannot be read on the node" % path)
        res["source"] = path
        try:
            res.update(_ibnet.parse_ibnetdiscover(text))
        except ParseError as e:
            res["error"] = "%s: %s" % (path, e)
        return res
    if not local:
        return res
    if host.which("ibnetdiscover") is None:
        res["error"] = "the node has an InfiniBand port but no ibnetdiscover (infiniband-diags)"
        return res
    res["source"] = "ibnetdiscover"
    got = _run(host, _ibnet.IBNETDISCOVER, "topology")
    res["error"] = got.get("error")
    res.update(got.get("data") or {})
    return res


def gather(host: Host, params: Dict[str, Any]) -> Dict[str, Any]:
    facts: Dict[str, Any] = {"hostname": _read(host, "/proc/sys/kernel/hostname"), "findings": []}
    facts["lldp"] = lldp(host, params["interfaces"]) if params["lldp"] else None
    facts["infiniband"] = infiniband(host, params["ibnetdiscover_file"]) if params["infiniband"] else None
    found = facts["findings"]
    if facts["lldp"] is not None:
        if not facts["lldp"]["installed"]:
            found.append("lldpcli is not installed (package lldpd): no LLDP neighbours read")
        elif facts["lldp"]["error"]:
            found.append("LLDP unreadable: %s" % facts["lldp"]["error"])
        elif not facts["lldp"]["interfaces"]:
            found.append("lldpd reports no LLDP neighbour%s" % (" on %s" % ", ".join(params["interfaces"]) if params["interfaces"] else ""))
    if facts["infiniband"] is not None and facts["infiniband"]["error"]:
        found.append("InfiniBand topology unreadable: %s" % facts["infiniband"]["error"])
    return facts
