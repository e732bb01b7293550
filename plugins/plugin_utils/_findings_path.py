# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Verify findings, the path MTU (pure, no Ansible): a ring of full-size, do-not-fragment pings over
the hosts' data addresses (O(n) probes), and the findings from their results.
"""
from __future__ import annotations

import re
from typing import Any, Dict, Iterable, List, Optional, Tuple

from ansible_collections.hpcnet.rdma.plugins.plugin_utils._findings_catalogue import ev, finding, usable


def _data_mtu(info: Dict[str, Any], ifname: str) -> Optional[int]:
    return ((info["fabric"].get("netdevs") or {}).get(ifname) or {}).get("mtu")


def data_address(info: Dict[str, Any]) -> Tuple[Optional[str], Optional[str]]:
    """(interface, first IPv4 address) of the first data interface with an address (verify_info's result)."""
    for n in info.get("data_interfaces") or []:
        addrs = (info.get("addresses") or {}).get(n) or []
        if addrs:
            return n, addrs[0]
    return None, None


def pairs_of(values: Iterable[Any], mode: str = "ring") -> List[Tuple[Any, Any]]:
    """Pairs of hosts in order: ``ring`` (i -> i+1 and the last -> the first, O(n) pairs; two hosts give one
    pair each way) or ``pairs`` (0-1, 2-3, ...; an odd last host is left out).  The path MTU probes use the
    ring; hpcnet.rdma.rdma_bench either."""
    items = list(values)
    if mode == "ring":
        return [(items[i], items[(i + 1) % len(items)]) for i in range(len(items))] if len(items) > 1 else []
    if mode == "pairs":
        return [(items[i], items[i + 1]) for i in range(0, len(items) - 1, 2)]
    raise ValueError("pairing %r is not one of ring, pairs" % (mode,))


def plan_probes(nodes: Dict[str, Dict[str, Any]], hosts: List[str], path_mtu: Optional[int] = None) -> Dict[str, Any]:
    """A ring over the hosts with a data address: host i pings host i+1 (O(n) pings in all).

    The size is ``path_mtu - 28`` when given, else the larger of both ends' data MTUs minus 28 (IPv4 + ICMP
    headers), so a pair whose ends disagree fails in at least one direction.  A host without a data address
    gets ``{"skip": reason}``.
    """
    probes: Dict[str, Any] = {}
    ring = []
    for h in hosts:
        node = nodes.get(h)
        if not usable(node):
            probes[h] = {"skip": "its facts could not be read"}
            continue
        ifname, addr = data_address(node["info"])
        if addr is None:
            probes[h] = {"skip": "no IPv4 address on its data interfaces %s" % (node["info"].get("data_interfaces") or [])}
            continue
        ring.append((h, ifname, addr))
    if len(ring) < 2:
        for h, _i, _a in ring:
            probes[h] = {"skip": "no other host with a data address to ping"}
        return probes
    for (h, ifname, addr), (peer, peer_if, peer_addr) in pairs_of(ring, "ring"):
        mtus = [m for m in (_data_mtu(nodes[h]["info"], ifname), _data_mtu(nodes[peer]["info"], peer_if)) if m]
        mtu = path_mtu or (max(mtus) if mtus else 1500)
        probes[h] = {"peer": peer, "address": peer_addr, "interface": ifname, "source": addr, "mtu": mtu,
                     "size": mtu - 28,
                     "argv": ["ping", "-M", "do", "-s", str(mtu - 28), "-c", "2", "-W", "1", "-I", ifname, peer_addr]}
    return probes


def path_mtu(nodes: Dict[str, Dict[str, Any]], hosts: List[str], probes: Dict[str, Any]) -> List[Dict[str, Any]]:
    found = []
    planned = [h for h in hosts if "argv" in (probes.get(h) or {})]
    if len([h for h in hosts if usable(nodes.get(h))]) < 2:
        if hosts:
            found.append(finding("path_mtu.single_host", list(hosts), "only %s: no path to probe" % ", ".join(hosts),
                                 [], "run verify on a group of at least two hosts (rdma_hosts)"))
        return found
    for h in hosts:
        probe = probes.get(h) or {}
        if "skip" in probe and usable(nodes.get(h)):
            found.append(finding("path_mtu.no_address", [h], "%s was not probed: %s" % (h, probe["skip"]),
                                 [ev(h, "data addresses", (nodes[h]["info"].get("addresses") or {}), "ip -j addr show")],
                                 "give the data interface an IPv4 address, or name the data interface in rdma_verify_interfaces"))
    for h in planned:
        probe = probes[h]
        res = (nodes.get(h) or {}).get("ping")
        if not isinstance(res, dict) or res.get("skipped"):
            continue
        out = " ".join(((res.get("stdout") or "") + " " + (res.get("stderr") or "")).split())
        if res.get("rc") is None or "No such file" in str(res.get("msg", "")) + out:
            found.append(finding("path_mtu.no_ping", [h], "%s: ping could not run: %s" % (h, res.get("msg") or out),
                                 [ev(h, "ping", res.get("msg") or out, " ".join(probe["argv"]))],
                                 "install iputils-ping (rdma_core_extra_packages)"))
            continue
        if res.get("rc") == 0:
            continue
        m = re.search(r"mtu[= ](\d+)", out)
        loss = re.search(r"(\d+)% packet loss", out)
        detail = ("a hop or %s's own route allows only %s bytes" % (h, m.group(1)) if m
                  else "%s%% of the full-size packets were lost" % loss.group(1) if loss else "ping failed")
        found.append(finding("path_mtu.failed", [h, probe["peer"]],
                             "%s -> %s (%s) does not carry MTU %d unfragmented: %s"
                             % (h, probe["peer"], probe["address"], probe["mtu"], detail),
                             [ev(h, "ping rc %s" % res.get("rc"), out[-400:], " ".join(probe["argv"]))],
                             "make every hop carry MTU %d: the NICs (nic.mtu), the switch ports and any route MTU "
                             "(ip route ... mtu); or lower the fabric's MTU everywhere" % probe["mtu"],
                             mtu=probe["mtu"], limit=int(m.group(1)) if m else None))
    return found
