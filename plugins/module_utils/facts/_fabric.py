# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Read-only fabric facts: RDMA devices and ports from sysfs, their netdevs, counters, IRQs.

Everything comes from /sys and /proc (cheap file reads) plus at most one call of each checklist
tool that is installed (``ibv_devinfo -v``, ``rdma -j link`` and ``rdma -j dev``, ``ibstat``,
``nvidia-smi topo -m``) and ``ethtool -g/-l/-S`` per reported interface.

Fail small: an RDMA device whose sysfs tree cannot be read is ``{"unreadable": reason, "ports": {}}``,
a tool whose output cannot be read is ``{"error": reason}``, a device or CA a tool printed but the
parser could not read is ``{"unreadable": reason}`` inside that tool's result; the rest is kept, and
each unreadable part is a finding.
"""
from __future__ import annotations

import os
import re

from ansible_collections.hpcnet.rdma.plugins.module_utils.facts import _drivers
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _ethtool
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _ibtools
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _iproute
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _nvidia_smi
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _procnet
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import lazy_re, ParseError

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional

IB = "/sys/class/infiniband"
# ethtool -S counters that mean trouble (errors, drops, discards, pause frames, buffer exhaustion; ena's
# *_allowance_exceeded: packets queued or dropped at the instance's bandwidth/pps/conntrack limits)
_TROUBLE = lazy_re(r"(err|drop|discard|pause|out_of_buffer|crc|miss|timeout|fifo|over_?run|no_?buf|allowance_exceeded)",
                   re.IGNORECASE)
SYSFS_COUNTERS = ("rx_errors", "tx_errors", "rx_dropped", "tx_dropped", "rx_missed_errors",
                  "rx_crc_errors", "rx_fifo_errors", "tx_fifo_errors")
RDMA_MODULES = ("ib_core", "ib_uverbs", "ib_umad", "rdma_cm", "rdma_ucm", "ib_ipoib", "mlx5_ib", "mlx4_ib",
                "irdma", "bnxt_re", "efa", "rdma_rxe", "siw")
TOOLS = ("ibv_devinfo", "rdma", "ibstat", "nvidia-smi")


def _text(host: Host, path: str) -> Optional[str]:
    try:
        text = host.read(path)
    except HostError:  # e.g. gid_attrs/types of an unused GID entry answers EINVAL
        return None
    return None if text is None else text.strip()


def _int(text: Optional[str]) -> Optional[int]:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _after_colon(text: Optional[str]) -> Optional[str]:
    """sysfs "4: ACTIVE" -> "ACTIVE"."""
    if text is None:
        return None
    return text.split(":", 1)[1].strip() if ":" in text else text


def rate_gbps(rate: Optional[str]) -> Optional[float]:
    """sysfs ``100 Gb/sec (4X EDR)`` -> 100.0."""
    m = re.match(r"^([\d.]+)\s*Gb/sec", rate or "")
    return float(m.group(1)) if m else None


def rdma_device_or_unreadable(host: Host, name: str, listed: Optional[Dict[int, List[int]]] = None) -> Dict[str, Any]:
    """:func:`rdma_device`, or ``{"unreadable": reason, "ports": {}}`` when its tree cannot be read."""
    try:
        return rdma_device(host, name, listed)
    except (HostError, ParseError, ValueError, OSError) as e:
        return {"unreadable": "%s: %s" % (name, e), "ports": {}}


def rdma_device(host: Host, name: str, listed: Optional[Dict[int, List[int]]] = None) -> Dict[str, Any]:
    """The device's sysfs view; ``listed``: per port, the GID indexes ``ibv_devinfo -v`` listed (see
    :func:`rdma_port`)."""
    base = "%s/%s" % (IB, name)
    driver_link = host.readlink(base + "/device/driver")
    driver = os.path.basename(driver_link) if driver_link else None
    if driver is None and host.exists(base + "/parent"):
        driver = "rdma_rxe" if name.startswith("rxe") else ("siw" if name.startswith("siw") else None)
    dev = {"driver": driver, "fw_ver": _text(host, base + "/fw_ver") or None,
           "node_guid": _text(host, base + "/node_guid"), "node_type": _after_colon(_text(host, base + "/node_type")),
           "board_id": _text(host, base + "/board_id"), "hca_type": _text(host, base + "/hca_type"),
           "numa_node": _int(_text(host, base + "/device/numa_node")), "parent": _text(host, base + "/parent"),
           "ports": {}}
    for port in host.listdir(base + "/ports"):
        if port.isdigit():
            dev["ports"][int(port)] = rdma_port(host, "%s/ports/%s" % (base, port), (listed or {}).get(int(port)))
    return dev


def rdma_port(host: Host, base: str, listed: Optional[List[int]] = None) -> Dict[str, Any]:
    """The port's sysfs view.  Its GID table is read from sysfs, entry by entry: every entry of ``gids/``
    (a soft-RoCE port has 1024, mostly unused and reading as zeros - 0.4 s of the health check on a lab VM
    under TCG), or, with ``listed``, only the indexes ``ibv_devinfo -v`` listed - it prints the used entries
    of the kernel's table (one ioctl in rdma-core >= 32, the non-zero ones before) - each still read from
    sysfs with its type and netdev, so the facts are the same either way."""
    rate = _text(host, base + "/rate")
    gids = []
    indexes = [str(i) for i in sorted(set(listed))] if listed else host.listdir(base + "/gids")
    for index in indexes:
        gid = _text(host, "%s/gids/%s" % (base, index))
        if not index.isdigit() or not gid or gid.replace("0", "").replace(":", "") == "":
            continue
        gids.append({"index": int(index), "gid": gid,
                     "type": _text(host, "%s/gid_attrs/types/%s" % (base, index)),
                     "netdev": _text(host, "%s/gid_attrs/ndevs/%s" % (base, index))})
    gids.sort(key=lambda g: g["index"])
    netdevs = sorted(set(g["netdev"] for g in gids if g["netdev"]))
    types = sorted(set(g["type"] for g in gids if g["type"]))
    return {"state": _after_colon(_text(host, base + "/state")),
            "phys_state": _after_colon(_text(host, base + "/phys_state")),
            "rate": rate, "rate_gbps": rate_gbps(rate), "link_layer": _text(host, base + "/link_layer"),
            "lid": _text(host, base + "/lid"), "sm_lid": _text(host, base + "/sm_lid"),
            "gids": gids, "netdevs": netdevs, "roce_versions": [t for t in types if "RoCE" in t],
            "active_mtu": None}


def select_counters(stats: Dict[str, int], per_queue: bool = False, driver: Optional[str] = None) -> Dict[str, int]:
    """The error/drop/discard/pause counters of ``ethtool -S`` (per-queue ones only with ``per_queue``).

    Which counters are per queue is the driver table's answer (``_drivers.queue_counter``: bnxt_en's
    ``[0]: rx_discards``, mlx5's ``rx0_``, ena's ``queue_0_`` ...); a driver not in it is read by the
    generic shapes, which are all of them."""
    return dict((k, v) for k, v in sorted(stats.items())
                if _TROUBLE.search(k) and (per_queue or _drivers.queue_counter(k, driver) is None))


def netdev(host: Host, name: str, interrupts: Optional[Dict[int, Dict[str, Any]]], ethtool: bool) -> Dict[str, Any]:
    """One netdev's facts; ``irqs`` is None when ``interrupts`` (/proc/interrupts, parsed) is None: not read."""
    base = "/sys/class/net/%s" % name
    driver_link = host.readlink(base + "/device/driver")
    info: Dict[str, Any] = {
        "mtu": _int(_text(host, base + "/mtu")), "operstate": _text(host, base + "/operstate"),
        "driver": os.path.basename(driver_link) if driver_link else None,
        "numa_node": _int(_text(host, base + "/device/numa_node")),
        "counters": dict((c, _int(_text(host, "%s/statistics/%s" % (base, c)))) for c in SYSFS_COUNTERS
                         if host.exists("%s/statistics/%s" % (base, c))),
        "rings": None, "channels": None, "ethtool_counters": None, "irqs": None,
    }
    if ethtool:
        info["rings"] = _ethtool.read(host, "rings", name)
        info["channels"] = _ethtool.read(host, "channels", name)
        rc, out, _err = _ethtool.ETHTOOL.run(host, "stats", ifname=name)
        if rc == 0 and out.strip():
            try:
                info["ethtool_counters"] = select_counters(_ethtool.parse_ethtool_stats(out), driver=info["driver"])
            except ParseError:
                info["ethtool_counters"] = None
    if interrupts is not None:
        info["irqs"] = _netdev_irqs(host, name, interrupts)
    return info


def _netdev_irqs(host: Host, name: str, interrupts: Dict[int, Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """The netdev's queue interrupts per CPU; None when the driver's IRQs are not found."""
    # here, not at the top: the health check reads without IRQs and never imports irq/_domain
    from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _domain as _irq
    try:
        nic = _irq.nic_irqs(host, name, interrupts)
    except ValueError:
        return None
    per_cpu: List[int] = []
    for i in nic["irqs"]:
        counts = interrupts[i["irq"]]["counts"]
        per_cpu = [a + b for a, b in zip(per_cpu, counts)] if per_cpu else list(counts)
    return {"count": len(nic["irqs"]), "per_cpu": per_cpu, "local_cpus": _irq.format_cpulist(nic["local_cpus"])}


def host_counters(host: Host) -> Dict[str, Any]:
    out: Dict[str, Any] = {"softnet": None, "tcp": None}
    text = _text(host, "/proc/net/softnet_stat")
    if text:
        rows = _procnet.parse_softnet_stat(text)
        out["softnet"] = {"per_cpu": rows, "dropped": sum(r["dropped"] for r in rows),
                          "time_squeeze": sum(r["time_squeeze"] for r in rows)}
    text = _text(host, "/proc/net/snmp")
    if text:
        tcp = _procnet.parse_proc_net_snmp(text).get("Tcp", {})
        out_segs, retrans = tcp.get("OutSegs", 0), tcp.get("RetransSegs", 0)
        out["tcp"] = {"out_segs": out_segs, "retrans_segs": retrans,
                      "retrans_ratio": round(float(retrans) / out_segs, 6) if out_segs else 0.0}
    return out


# tool -> the (runner, action) calls it makes, each result under its own key ("rdma" also reads ``rdma dev``)
COMMANDS = {
    "ibv_devinfo": (("ibv_devinfo", _ibtools.IBV_DEVINFO, "verbose"),),
    "rdma": (("rdma", _ibtools.RDMA, "links"), ("rdma_dev", _ibtools.RDMA, "devices")),
    "ibstat": (("ibstat", _ibtools.IBSTAT, "show"),),
    "nvidia-smi": (("nvidia-smi", _nvidia_smi.NVIDIA_SMI, "topo"),),
}


def run_tool(host: Host, runner: Any, action: str) -> Any:
    """One tool call parsed; ``{"error": reason}`` when it fails or its output cannot be read (never raises)."""
    argv, parser = runner.argv(action), runner.parsers[action]
    try:
        rc, text, err = host.run(argv)
    except HostError as e:
        return {"error": str(e)}
    if rc != 0:
        return {"error": " ".join((err or text).split())[-300:]}
    try:
        return parser(text)
    except ParseError as e:
        return {"error": str(e)}


def tool_outputs(host: Host, wanted: List[str]) -> Dict[str, Any]:
    """Parsed output of each wanted checklist tool that is installed (None when it is not)."""
    out: Dict[str, Any] = {}
    rdma_core_loaded = host.isdir("/sys/module/ib_core")
    for tool in wanted:
        for key, runner, action in COMMANDS[tool]:
            binary = runner.argv(action)[0]
            if host.which(binary) is None:
                out[key] = None
            elif tool != "nvidia-smi" and not rdma_core_loaded:
                # the RDMA netlink socket these open would make the kernel load ib_core: facts change nothing
                out[key] = {"skipped": "ib_core is not loaded (no RDMA device); running %s would load it" % binary}
            else:
                out[key] = run_tool(host, runner, action)
    return out


def unreadable_parts(outputs: Dict[str, Any]) -> List[str]:
    """One sentence per tool that failed and per device/CA/link a tool printed but could not be read."""
    found = []
    for tool, result in sorted(outputs.items()):
        if isinstance(result, dict) and "error" in result and len(result) == 1:
            found.append("%s output unreadable: %s" % (tool, result["error"]))
        elif isinstance(result, dict):
            for name, part in sorted(result.items()):
                if isinstance(part, dict) and "unreadable" in part:
                    found.append("%s: %s unreadable: %s" % (tool, name, part["unreadable"]))
        elif isinstance(result, list):
            for part in result:
                if isinstance(part, dict) and "unreadable" in part:
                    found.append("%s: %s unreadable: %s" % (tool, part.get("device") or "an entry", part["unreadable"]))
    return found


def findings(facts: Dict[str, Any]) -> List[str]:
    """The classic checklist as sentences: ports down, MTU mismatches, drops, retransmits, pauses."""
    found = []
    for dev, info in sorted(facts["devices"].items()):
        if "unreadable" in info:
            found.append("%s: sysfs unreadable: %s" % (dev, info["unreadable"]))
        for port, p in sorted(info["ports"].items()):
            if p["state"] != "ACTIVE":
                found.append("%s port %d is %s (%s)" % (dev, port, p["state"], p["phys_state"]))
            for nd in p["netdevs"]:
                mtu = (facts["netdevs"].get(nd) or {}).get("mtu")
                if p["active_mtu"] and mtu and mtu < p["active_mtu"]:
                    found.append("%s port %d: active RDMA MTU %d is above %s's MTU %d"
                                 % (dev, port, p["active_mtu"], nd, mtu))
    for nd, info in sorted(facts["netdevs"].items()):
        bad = dict((k, v) for k, v in (info["ethtool_counters"] or {}).items() if v)
        bad.update((k, v) for k, v in info["counters"].items() if v)
        if bad:
            found.append("%s: non-zero error/drop/pause counters: %s"
                         % (nd, ", ".join("%s=%d" % kv for kv in sorted(bad.items()))))
        irqs = info.get("irqs")
        if irqs and irqs["per_cpu"] and sum(irqs["per_cpu"]) > 0 and len(irqs["per_cpu"]) > 1:
            top = max(irqs["per_cpu"])
            if irqs["count"] > 1 and top > 0.9 * sum(irqs["per_cpu"]):
                found.append("%s: %d%% of its queue interrupts land on one CPU (CPU %d)"
                             % (nd, int(100 * top / sum(irqs["per_cpu"])), irqs["per_cpu"].index(top)))
    found.extend(unreadable_parts(facts.get("tools") or {}))
    net = facts["host"]
    if net["softnet"] and net["softnet"]["dropped"]:
        found.append("softnet backlog drops: %d (net.core.netdev_max_backlog too small?)" % net["softnet"]["dropped"])
    if net["tcp"] and net["tcp"]["retrans_segs"]:
        found.append("TCP retransmitted %d of %d segments (%.4f%%)" % (
            net["tcp"]["retrans_segs"], net["tcp"]["out_segs"], 100 * net["tcp"]["retrans_ratio"]))
    return found


def _readable(result: Any) -> Dict[str, Any]:
    """The per-device entries of a tool result that were read (none when the tool failed or was skipped)."""
    if not isinstance(result, dict) or set(result) & {"error", "skipped"}:
        return {}
    return dict((k, v) for k, v in result.items() if isinstance(v, dict) and "unreadable" not in v)


def merge_tools(devices: Dict[str, Any], outputs: Dict[str, Any]) -> None:
    """What the tools add to the sysfs view: the active MTU (``ibv_devinfo -v``); node type, firmware
    and capabilities (``rdma dev``) where sysfs had none."""
    for dev, info in _readable(outputs.get("ibv_devinfo")).items():
        for port, p in (info.get("ports") or {}).items():
            if dev in devices and port in devices[dev]["ports"]:
                devices[dev]["ports"][port]["active_mtu"] = p["active_mtu"]
    for dev, info in _readable(outputs.get("rdma_dev")).items():
        if dev not in devices or "unreadable" in devices[dev]:
            continue
        if not devices[dev].get("node_type") and info.get("node_type"):
            devices[dev]["node_type"] = info["node_type"]
        if not devices[dev].get("fw_ver") and info.get("fw"):
            devices[dev]["fw_ver"] = info["fw"]
        devices[dev]["caps"] = info.get("caps")


def listed_gids(outputs: Dict[str, Any]) -> Dict[str, Dict[int, List[int]]]:
    """{device: {port: [GID index]}} of the ports ``ibv_devinfo -v`` printed GIDs for (a port it printed
    none for, or a device it could not read, is read from sysfs whole)."""
    out: Dict[str, Dict[int, List[int]]] = {}
    for dev, info in _readable(outputs.get("ibv_devinfo")).items():
        for port, p in (info.get("ports") or {}).items():
            indexes = [g["index"] for g in p.get("gids") or [] if isinstance(g.get("index"), int)]
            if indexes:
                out.setdefault(dev, {})[port] = indexes
    return out


def gather(host: Host, interfaces: List[str], tools: List[str], ethtool: bool, irqs: bool = True) -> Dict[str, Any]:
    """fabric_info's facts.  ``irqs``: each netdev's queue interrupts per CPU (/proc/interrupts, the driver's IRQ
    naming); the health check, which judges none of them, reads without (its netdevs' ``irqs`` are None): the
    IRQ names' patterns were a tenth of its fabric stage on a lab VM under TCG."""
    ethtool = ethtool and host.which("ethtool") is not None
    outputs = tool_outputs(host, tools)
    listed = listed_gids(outputs)
    devices = dict((d, rdma_device_or_unreadable(host, d, listed.get(d))) for d in host.listdir(IB))
    merge_tools(devices, outputs)
    names = list(interfaces)
    for info in devices.values():
        for p in info["ports"].values():
            names.extend(n for n in p["netdevs"] if n not in names)
    missing = [n for n in interfaces if not host.exists("/sys/class/net/" + n)]
    if missing:
        raise ValueError("interfaces: unknown interface %s (interfaces: %s)"
                         % (", ".join(repr(m) for m in missing), ", ".join(_iproute.interfaces(host))))
    interrupts = None
    if irqs:
        from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _domain as _irq
        interrupts = _irq.parse_interrupts(host.read(_irq.INTERRUPTS) or "CPU0\n")
    facts = {
        "devices": devices,
        "netdevs": dict((n, netdev(host, n, interrupts, ethtool)) for n in names if host.exists("/sys/class/net/" + n)),
        "host": host_counters(host),
        "modules": [m for m in RDMA_MODULES if host.isdir("/sys/module/" + m)],
        "netns_mode": None,
        "tools": outputs,
    }
    param = _text(host, "/sys/module/ib_core/parameters/netns_mode")
    if param is not None:
        facts["netns_mode"] = "shared" if param in ("Y", "1") else "exclusive"
    facts["findings"] = findings(facts)
    return facts
