# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Verify findings, the per-node checklist (pure, no Ansible): interfaces and RDMA ports, IRQ
placement, counter growth between the two samples, and the settings (coalescing, memlock, device nodes).
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Set

from ansible_collections.hpcnet.rdma.plugins.module_utils.health import _judges
from ansible_collections.hpcnet.rdma.plugins.module_utils.irq._domain import format_cpulist
from ansible_collections.hpcnet.rdma.plugins.plugin_utils._findings_catalogue import (
    DEFAULTS, UNLIMITED, data_ports, ev, finding, irqbalance_active, memlock_required, profile_of, result_ok, usable)

_ERRORS = re.compile(r"(err|crc|fifo|over_?run|timeout)", re.IGNORECASE)
_DROPS = re.compile(r"(drop|discard|miss|out_of_buffer|no_?buf)", re.IGNORECASE)
_PFC_PAUSE = re.compile(r"(prio_?\d+_pause|pfc|priority)", re.IGNORECASE)
_BAD_OPERSTATES = ("down", "lowerlayerdown", "notpresent", "dormant")


def _cpus(text: str) -> List[int]:
    out: List[int] = []
    for part in (text or "").split(","):
        part = part.strip()
        if "-" in part:
            a, b = part.split("-", 1)
            if a.isdigit() and b.isdigit():
                out.extend(range(int(a), int(b) + 1))
        elif part.isdigit():
            out.append(int(part))
    return out


def _grown(delta: Dict[str, int], pattern: "re.Pattern[str]", exclude: Optional["re.Pattern[str]"] = None) -> Dict[str, int]:
    return dict((k, v) for k, v in sorted(delta.items())
                if v and pattern.search(k) and not (exclude and exclude.search(k)))


def checklist(nodes: Dict[str, Dict[str, Any]], hosts: List[str], options: Dict[str, Any]) -> List[Dict[str, Any]]:
    found = []
    any_rdma = any(data_ports(nodes[h]["info"]["fabric"], nodes[h]["info"].get("data_interfaces") or [])
                   for h in hosts if usable(nodes.get(h)))
    for h in hosts:
        node = nodes.get(h)
        if not usable(node):
            continue
        found.extend(_node_checklist(h, node, options, any_rdma))
    return found


def _node_checklist(h: str, node: Dict[str, Any], options: Dict[str, Any], any_rdma: bool) -> List[Dict[str, Any]]:
    found = []
    info = node["info"]
    fabric = info["fabric"]
    data = info.get("data_interfaces") or []
    netdevs = fabric.get("netdevs") or {}
    delta = info.get("delta") or {}
    prof = profile_of(node) or {}
    interval = delta.get("interval") or 0
    for name in info.get("missing_interfaces") or []:
        found.append(finding("interface.missing", [h], "%s: data interface %s does not exist" % (h, name),
                             [ev(h, "interface", name, "/sys/class/net/%s" % name)],
                             "fix rdma_verify_interfaces, or create the interface"))
    for name in data:
        state = (netdevs.get(name) or {}).get("operstate")
        if state in _BAD_OPERSTATES:
            found.append(finding("netdev.down", [h], "%s: %s is %s" % (h, name, state),
                                 [ev(h, "%s operstate" % name, state, "/sys/class/net/%s/operstate" % name)],
                                 "bring the link up (cable, switch port, ip link set %s up)" % name))
    ports = data_ports(fabric, data)
    if not ports:
        reason = "ib_core is not loaded" if "ib_core" not in (fabric.get("modules") or []) else "no RDMA device"
        found.append(finding("rdma.no_device", [h], "%s: no RDMA port on %s (%s)" % (h, ", ".join(data) or "any interface", reason),
                             [ev(h, "RDMA devices", sorted(fabric.get("devices") or {}), "/sys/class/infiniband")],
                             "rdma_stack: true with the NIC's RDMA driver or rdma_core_soft_roce (hpcnet.rdma.rdma_core)"
                             if any_rdma else "nothing to do on a node without RDMA hardware; rdma_core_soft_roce for a lab"))
    for dev, port, p in ports:
        src = "/sys/class/infiniband/%s/ports/%s" % (dev, port)
        if p.get("state") != "ACTIVE":
            found.append(finding("port.not_active", [h], "%s: %s port %s is %s (%s)" % (h, dev, port, p.get("state"), p.get("phys_state")),
                                 [ev(h, "%s/%s state" % (dev, port), {"state": p.get("state"), "phys_state": p.get("phys_state")},
                                     src + "/state, phys_state")],
                                 "check the cable and the switch port; for RoCE the netdev must be up; for IB a subnet manager"))
        if p.get("link_layer") == "Ethernet":
            v2 = [g for g in p.get("gids") or [] if g.get("type") == "RoCE v2" and g.get("netdev") in data]
            if not v2:
                found.append(finding("roce.no_v2_gid", [h], "%s: %s port %s has no RoCE v2 GID on %s" % (h, dev, port, ", ".join(data)),
                                     [ev(h, "%s/%s GIDs" % (dev, port), p.get("gids"), src + "/gids, gid_attrs/types")],
                                     "give the data interface an IP address (RoCE v2 GIDs follow them) and rdma_roce_qos.roce_mode v2"))
        for nd in p.get("netdevs") or []:
            mtu = (netdevs.get(nd) or {}).get("mtu")
            if p.get("active_mtu") and mtu and p["active_mtu"] > mtu:
                found.append(finding("rdma.mtu_above_netdev", [h], "%s: %s port %s active MTU %d is above %s's MTU %d"
                                     % (h, dev, port, p["active_mtu"], nd, mtu),
                                     [ev(h, "active_mtu / netdev mtu", [p["active_mtu"], mtu], "ibv_devinfo -v, /sys/class/net/%s/mtu" % nd)],
                                     "raise %s's MTU (nic.mtu) or lower rdma_roce_qos.rdma_mtu" % nd))
    found.extend(_app_findings(h, node, prof, ports))
    found.extend(_irq_findings(h, node, prof))
    found.extend(_counter_findings(h, node, interval))
    found.extend(_setting_findings(h, node, prof, options, bool(ports)))
    return found


_APP_FIX = ("render the apps' files from the node's own QoS and GIDs: role hpcnet.rdma.fabric_app_config "
            "(fabric_app_config_tos = rdma_roce_qos.tos, its GID index and HCAs from hpcnet.rdma.fabric_info), "
            "then re-run verify_rdma before a job starts")


def _app_device_missing(item: str, fabric: Dict[str, Any], prefix_match: bool) -> bool:
    """Whether ``dev[:port]`` (UCX_NET_DEVICES, NCCL_IB_HCA) names no RDMA device/port of the node (UCX also
    takes a netdev name; NCCL matches a name as a prefix unless the list starts with ``=``)."""
    name, _sep, port = item.partition(":")
    devices = fabric.get("devices") or {}
    if not port and name in (fabric.get("netdevs") or {}):
        return False
    matches = [d for d in devices if d == name or (prefix_match and d.startswith(name))]
    return not any(not port or port in [str(p) for p in (devices[d].get("ports") or {})] for d in matches)


def _app_findings(h: str, node: Dict[str, Any], prof: Dict[str, Any], ports: List[Any]) -> List[Dict[str, Any]]:
    """What NCCL's and UCX's files tell a job (verify_info's apps) against the node itself: the traffic class
    is the RoCE ToS the QoS set on the data ports (rdma_cm configfs), the GID index a GID of the RoCE version on
    each data port (the health check's judge_gids), the devices RDMA devices/ports the node has."""
    info = node["info"]
    fabric = info["fabric"]
    data = info.get("data_interfaces") or []
    qos = node.get("qos") if result_ok(node.get("qos")) else {}
    tos_ports = [p for p in ((qos or {}).get("rdma_ports") or []) if p.get("netdev") in data and p.get("tos") is not None]
    mode = (prof.get("qos") or {}).get("roce_mode")
    roce = {"mode": mode, "source": "the profile's qos.roce_mode"} if mode in ("v1", "v2") else {"mode": "v2", "source": "the default"}
    found = []
    for app, entry in sorted((info.get("apps") or {}).items()):
        settings, keys = entry.get("settings") or {}, entry.get("keys") or {}
        if not entry.get("present"):
            continue
        tc = settings.get("tc")
        for p in tos_ports:
            if tc is not None and str(tc) != str(p["tos"]):
                found.append(finding("app.tc", [h], "%s: %s=%s in %s, but the RoCE ToS of %s port %s is %s"
                                     % (h, keys["tc"], tc, entry["file"], p["device"], p["port"], p["tos"]),
                                     [ev(h, keys["tc"], tc, entry["file"]),
                                      ev(h, "RoCE ToS", p["tos"], "/sys/kernel/config/rdma_cm/%s/ports/%s/default_roce_tos"
                                         % (p["device"], p["port"]))], _APP_FIX, app=app))
        gid = settings.get("gid_index")
        if gid is not None:
            wanted = [{"key": keys["gid_index"], "file": entry["file"], "index": int(gid)}] if gid.isdigit() else []
            bad = [] if wanted else [{"evidence": "%s=%s in %s is not a GID index" % (keys["gid_index"], gid, entry["file"])}]
            for dev, port, p in ports:
                if p.get("link_layer") == "Ethernet":
                    bad += _judges.judge_gids(dev, port, p, wanted, roce)
            found.extend(finding("app.gid", [h], "%s: %s" % (h, b["evidence"]), [ev(h, keys["gid_index"], gid, entry["file"])],
                                 _APP_FIX, app=app) for b in bad)
        devices = (settings.get("devices") or "").strip()
        if devices and devices != "all" and not devices.startswith("^"):
            missing = [d for d in devices.lstrip("=").split(",") if d.strip() and _app_device_missing(
                d.strip(), fabric, app == "nccl" and not devices.startswith("="))]
            if missing:
                found.append(finding("app.device", [h], "%s: %s=%s in %s names %s, which the node does not have (RDMA devices: %s)"
                                     % (h, keys["devices"], devices, entry["file"], ", ".join(missing),
                                        ", ".join("%s:%s" % (d, ",".join(str(x) for x in sorted((i.get("ports") or {}), key=str)))
                                                  for d, i in sorted((fabric.get("devices") or {}).items())) or "none"),
                                     [ev(h, keys["devices"], devices, entry["file"]),
                                      ev(h, "RDMA devices", sorted(fabric.get("devices") or {}), "/sys/class/infiniband")],
                                     _APP_FIX, app=app))
    return found


def _irq_cpus(irq: Dict[str, Any]) -> Set[int]:
    """The CPUs an IRQ is served on: its effective affinity, unless that lies outside the mask set
    in smp_affinity_list - then a move is pending (x86 moves an MSI at its next interrupt, so an
    idle queue keeps its old CPU in effective_affinity_list) and the mask is where it will run."""
    mask = set(_cpus(irq.get("affinity") or ""))
    effective = set(_cpus(irq.get("effective") or ""))
    return effective if effective and (not mask or effective <= mask) else mask


def _irq_findings(h: str, node: Dict[str, Any], prof: Dict[str, Any]) -> List[Dict[str, Any]]:
    found = []
    info = node["info"]
    policy = (prof.get("irq") or {}).get("policy")
    for name, detail in sorted((info.get("irqs") or {}).items()):
        if not detail or not detail.get("irqs"):
            continue
        src = "/proc/irq/N/smp_affinity_list, effective_affinity_list"
        local = _cpus(detail.get("local_cpus") or "")
        where = dict((i["name"], _irq_cpus(i)) for i in detail["irqs"])
        used = set().union(*where.values()) if where else set()
        shown = dict((n, format_cpulist(list(cpus))) for n, cpus in where.items())
        if len(detail["irqs"]) > 1 and len(used) == 1 and len(local) > 1 and policy != "single":
            found.append(finding("irq.concentrated", [h], "%s: all %d queue IRQs of %s are on CPU %d (local CPUs %s)"
                                 % (h, len(detail["irqs"]), name, next(iter(used)), detail.get("local_cpus")),
                                 [ev(h, "%s queue IRQ affinity" % name, shown, src)],
                                 "spread them: rdma_irq_interfaces with policy spread-local (hpcnet.rdma.irq_affinity), "
                                 "or the profile's irq.policy single if one CPU is meant"))
        online = set(_cpus(detail.get("online_cpus") or ""))
        off = sorted(used - set(local)) if local and set(local) != online else []
        if off:
            found.append(finding("irq.off_numa", [h], "%s: queue IRQs of %s run on CPUs %s outside its NUMA node %s (local CPUs %s)"
                                 % (h, name, off, detail.get("numa_node"), detail.get("local_cpus")),
                                 [ev(h, "%s queue IRQ affinity" % name, shown, src)],
                                 "pin them NUMA-local: rdma_irq_interfaces (hpcnet.rdma.irq_affinity, policy spread-local)"))
    ib = info.get("irqbalance") or {}
    tuned_irqs = bool(prof.get("irq")) and any((d or {}).get("irqs") for d in (info.get("irqs") or {}).values())
    if tuned_irqs and irqbalance_active(node) and not ib.get("policyscript"):
        found.append(finding("irqbalance.not_banned", [h], "%s: irqbalance runs without the collection's policy script: "
                             "it will move the pinned IRQs" % h,
                             [ev(h, "irqbalance", ib, "systemctl is-active irqbalance, /etc/default/irqbalance")],
                             "rdma_irqbalance: ban (or stop) and re-run hpcnet.rdma.tune_rdma --tags irq"))
    return found


def _counter_findings(h: str, node: Dict[str, Any], interval: float) -> List[Dict[str, Any]]:
    found = []
    info = node["info"]
    delta = info.get("delta") or {}
    per = " in %.1f s" % interval
    pfc_on = _pfc_on(node)
    for name, d in sorted((delta.get("netdevs") or {}).items()):
        counters = dict(d.get("counters") or {})
        counters.update(d.get("ethtool_counters") or {})
        src = "/sys/class/net/%s/statistics/*, ethtool -S %s (sampled twice%s)" % (name, name, per)
        errors = _grown(counters, _ERRORS)
        if errors:
            found.append(finding("netdev.errors", [h], "%s: %s error counters grew%s: %s" % (h, name, per, _kv(errors)),
                                 [ev(h, "%s counter growth" % name, errors, src)],
                                 "check the cable/optics and the switch port (CRC, FIFO), the driver and firmware"))
        drops = _grown(counters, _DROPS, _ERRORS)
        if drops:
            found.append(finding("netdev.drops", [h], "%s: %s drop/discard counters grew%s: %s" % (h, name, per, _kv(drops)),
                                 [ev(h, "%s counter growth" % name, drops, src)],
                                 "larger rings (nic.rings), more channels, NUMA-local IRQs (irq.policy), "
                                 "lossless QoS for RoCE (rdma_roce_qos.pfc)"))
        pause = _grown(counters, re.compile("pause", re.IGNORECASE))
        if pause:
            found.append(finding("netdev.pause", [h], "%s: %s pause frames grew%s: %s" % (h, name, per, _kv(pause)),
                                 [ev(h, "%s pause counter growth" % name, pause, src)],
                                 "a congested receiver or switch: check buffers, ECN (rdma_roce_qos.ecn) and PFC priorities"))
            pfc = dict((k, v) for k, v in pause.items() if _PFC_PAUSE.search(k))
            glob = dict((k, v) for k, v in pause.items() if not _PFC_PAUSE.search(k))
            if pfc_on is not None and ((pfc_on and glob) or (not pfc_on and pfc)):
                found.append(finding("flow_control.mismatch", [h], "%s: %s has PFC %s but %s pause frames grew: %s"
                                     % (h, name, "on" if pfc_on else "off", "global" if pfc_on else "per-priority",
                                        _kv(glob if pfc_on else pfc)),
                                     [ev(h, "%s pause counter growth" % name, pause, src),
                                      ev(h, "%s PFC" % name, pfc_on, "dcb -j pfc (hpcnet.rdma.roce_qos_info)")],
                                     "configure the switch port and the host alike: PFC on the RoCE priority on both "
                                     "(rdma_roce_qos.pfc), global pause off"))
    sn = delta.get("softnet") or {}
    if sn.get("dropped"):
        found.append(finding("softnet.drops", [h], "%s: softnet backlog dropped %d packets%s" % (h, sn["dropped"], per),
                             [ev(h, "softnet dropped growth", sn["dropped"], "/proc/net/softnet_stat (column 2)")],
                             "raise net.core.netdev_max_backlog (profile sysctls) and spread RX (irq.policy, RPS)"))
    if sn.get("time_squeeze"):
        found.append(finding("softnet.squeeze", [h], "%s: softnet ran out of budget %d times%s" % (h, sn["time_squeeze"], per),
                             [ev(h, "softnet time_squeeze growth", sn["time_squeeze"], "/proc/net/softnet_stat (column 3)")],
                             "raise net.core.netdev_budget / netdev_budget_usecs (profile sysctls), spread IRQs"))
    return found


def _kv(d: Dict[str, Any]) -> str:
    return ", ".join("%s=+%s" % kv for kv in sorted(d.items()))


def _pfc_on(node: Dict[str, Any]) -> Optional[bool]:
    qos = node.get("qos")
    if not result_ok(qos):
        return None
    data = node["info"].get("data_interfaces") or []
    ifs = [i for n, i in (qos.get("interfaces") or {}).items() if n in data and i.get("dcb")]
    if not ifs:
        return None
    return any(i.get("pfc") for i in ifs)


def _setting_findings(h: str, node: Dict[str, Any], prof: Dict[str, Any], options: Dict[str, Any],
                      has_rdma: bool) -> List[Dict[str, Any]]:
    found = []
    info = node["info"]
    delta = info.get("delta") or {}
    tcp = delta.get("tcp") or {}
    ratio = float(options.get("retrans_ratio", DEFAULTS["retrans_ratio"]))
    if tcp.get("out_segs") and tcp.get("retrans_segs") and float(tcp["retrans_segs"]) / tcp["out_segs"] > ratio:
        found.append(finding("tcp.retransmits", [h], "%s: TCP retransmitted %d of %d segments (%.2f%%) in %.1f s"
                             % (h, tcp["retrans_segs"], tcp["out_segs"], 100.0 * tcp["retrans_segs"] / tcp["out_segs"],
                                delta.get("interval") or 0),
                             [ev(h, "Tcp RetransSegs/OutSegs growth", tcp, "/proc/net/snmp")],
                             "look for drops on the path (netdev.drops, path_mtu), tcp_mtu_probing=1, buffers (profile sysctls)"))
    wanted = dict((prof.get("nic") or {}).get("coalesce") or {})
    overrides = dict((e.get("name"), e.get("coalesce") or {}) for e in node.get("interfaces") or [] if isinstance(e, dict))
    for name, live in sorted((info.get("coalesce") or {}).items()):
        want = dict(wanted)
        want.update(overrides.get(name) or {})
        diff = dict((k, {"wanted": v, "live": (live or {}).get(k)}) for k, v in sorted(want.items())
                    if v is not None and live and k in live and live.get(k) != v)
        if diff:
            found.append(finding("coalesce.profile_mismatch", [h], "%s: %s coalescing differs from the profile %s: %s"
                                 % (h, name, prof.get("name"),
                                    ", ".join("%s %s (wanted %s)" % (k, d["live"], d["wanted"]) for k, d in diff.items())),
                                 [ev(h, "%s coalesce" % name, diff, "ethtool -c %s; profile nic.coalesce" % name)],
                                 "re-apply the profile (hpcnet.rdma.tune_rdma --tags nic) or change nic.coalesce"))
    if has_rdma:
        required = memlock_required(options.get("memlock", DEFAULTS["memlock"]))
        ml = info.get("memlock") or {}
        line = ml.get("soft") or ml.get("hard")
        have = line.get("kib") if line else None
        low = have is None or (required == UNLIMITED and have != UNLIMITED) or \
            (required != UNLIMITED and have != UNLIMITED and have < (required or 0))
        if low:
            found.append(finding("memlock.too_low", [h], "%s: members of %s get memlock %s, below %s"
                                 % (h, ml.get("group"), line.get("value") if line else "the default (8192 KiB; no limits line)",
                                    options.get("memlock", DEFAULTS["memlock"])),
                                 [ev(h, "memlock for @%s" % ml.get("group"), ml, (line or {}).get("source") or
                                     "/etc/security/limits.conf, limits.d/*.conf")],
                                 "rdma_core_memlock_group / rdma_core_memlock_limit (hpcnet.rdma.rdma_core, rdma_stack: true)"))
        allowed = int(str(options.get("device_mode", DEFAULTS["device_mode"])), 8)
        wide = dict((n, d) for n, d in sorted((info.get("devnodes") or {}).items())
                    if int(d.get("mode", "0"), 8) & ~allowed)
        if wide:
            found.append(finding("devnode.too_open", [h], "%s: /dev/infiniband nodes wider than %s: %s"
                                 % (h, options.get("device_mode", DEFAULTS["device_mode"]),
                                    ", ".join("%s %s (%s)" % (n, d.get("mode"), d.get("group")) for n, d in wide.items())),
                                 [ev(h, "/dev/infiniband modes", wide, "stat /dev/infiniband/*")],
                                 "rdma_core_devices / rdma_core_device_group / rdma_core_device_mode (hpcnet.rdma.rdma_core)"))
    return found
