# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The RoCE QoS of a node as it is, and what is incoherent in it: ``roce_qos_info``.

One reader for the two modules that show it: ``roce_qos_info`` and ``verify_info`` (``qos=true``,
on the data interfaces, so a verify reads the node in one module call).  Per selected interface
the driver, backend, DCB support, trust, PFC priorities, DSCP map, ETS (prio->tc, TSA and
bandwidth share per TC), receive buffers and ECN (a DCB part whose output cannot be read is
reported with ``readable: false`` and the reason, or the interface as unsupported with it); the RDMA ports with
their RDMA CM ToS and mode; and the coherence checks ``roce_qos`` runs before it applies anything,
evaluated on the values in place.  Reads through ``_qos`` and ``nic``; changes nothing.
"""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _domain as _nic
from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _select
from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _check as _qoscheck
from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _observe as _qosobserve
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional

# The ToS the coherence is checked with when neither the caller nor the port's RDMA CM sets one.
DEFAULT_TOS = 106


def read(host: Host, selections: List[Dict[str, Any]], tos: Optional[int] = None, roce_mode: str = "v2",
         backend: str = "auto") -> Dict[str, Any]:
    """``{interfaces, rdma_ports, findings, unsupported}`` of the interfaces ``selections`` pick
    (``nic._select.select`` entries: one of name, glob, driver, subnet each).

    Raises ``HostError`` (a tool or file that cannot be read) and ``ValueError`` (a selection
    that picks nothing by name, a backend whose tool is missing)."""
    links = _nic.observe(host)
    chosen = _select.select(selections, links)
    ports = _qosobserve.observe_rdma(host, sorted(chosen), roce_mode)
    interfaces, findings, unsupported = {}, [], []
    for ifname in sorted(chosen):
        driver = links[ifname].get("driver")
        obs = _qosobserve.observe_nic(host, ifname, _qosobserve.choose_backend(host, backend, driver))
        obs["driver"] = driver
        mine = [p for p in ports if p["netdev"] == ifname]
        info = {"driver": driver, "backend": obs["backend"], "dcb": obs["supported"], "reason": obs["reason"]}
        interfaces[ifname] = info
        if not obs["supported"]:
            unsupported.append({"interface": ifname, "feature": "dcb", "reason": obs["reason"]})
            findings.extend(_qoscheck.check_mtu(ifname, links[ifname]["mtu"], mine, None))
            continue
        ecn = _qosobserve.observe_ecn(host, ifname)
        info.update(trust=obs["trust"], trust_control=obs["trust_control"], pfc=obs["pfc"],
                    dscp_map=_qoscheck._flat(obs["dscp"]), ecn=ecn, ets=obs.get("ets"), buffer=obs.get("buffer"))
        check_tos = tos
        if check_tos is None:
            set_tos = [p["tos"] for p in mine if p.get("tos") is not None]
            check_tos = set_tos[0] if set_tos else DEFAULT_TOS
        current = _qoscheck.validate({"tos": check_tos, "trust": None, "pfc": None, "dscp_map": {},
                                      "roce_mode": roce_mode})
        try:
            final = _qoscheck.check(ifname, obs, current, ecn, mine, links[ifname]["mtu"], [])
            info.update(priority=final["priority"], cnp=final["cnp"])
        except _qoscheck.Incoherent as e:
            findings.extend(e.errors)
    return {"interfaces": interfaces, "rdma_ports": ports, "findings": findings, "unsupported": unsupported}
