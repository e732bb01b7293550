# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What ``hpcnet.rdma.verify_info`` reads on a node for the controller-side findings.

The fabric facts of ``_fabric.gather`` once, then after ``interval`` seconds the counters again
(netdev sysfs and ``ethtool -S`` trouble counters, queue interrupts per CPU, softnet, TCP), so the
findings are about counters that *grow*; plus what ``fabric_info`` does not carry: the kernel
release, the rdma-core version, the data interfaces' IPv4 addresses, each queue IRQ's affinity,
irqbalance, coalescing, the NCCL/UCX traffic class, the memlock limit of the RDMA group, the
``/dev/infiniband`` modes and the recorded profile.  Only files and the argv tables of
``_ethtool``/``_iproute``; nothing is changed.  The pure parsers here are table-tested.
"""
from __future__ import annotations

import glob
import re
import time

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _ethtool
from ansible_collections.hpcnet.rdma.plugins.module_utils.facts import _fabric
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _iproute
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _pkgtools
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import ParseError

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Callable, Dict, List, Optional

DPKG_STATUS = _pkgtools.DPKG_STATUS
LIBIBVERBS_GLOBS = ("/usr/lib/*/libibverbs.so.1.*.*", "/usr/lib64/libibverbs.so.1.*.*", "/usr/lib/libibverbs.so.1.*.*")
LIMITS = "/etc/security/limits.conf"
LIMITS_D = "/etc/security/limits.d"
DEV_IB = "/dev/infiniband"
UNLIMITED = -1


def parse_dpkg_status_version(text: str, package: str) -> Optional[str]:
    """``Version:`` of an installed ``package`` in /var/lib/dpkg/status, None when absent: the first of its
    stanzas (``_pkgtools.dpkg_package_stanzas``) whose ``Status:`` says installed."""
    for fields in _pkgtools.dpkg_package_stanzas(text, [package])[package]:
        if "installed" in fields.get("Status", "").split():
            return fields.get("Version")
    return None


def libibverbs_version(path: str) -> Optional[str]:
    """``libibverbs.so.1.14.44.0`` -> ``44.0``: rdma-core names the library after its own release."""
    m = re.search(r"libibverbs\.so\.1\.\d+\.(\d+\.\d+)$", path)
    return m.group(1) if m else None


def parse_conf_value(text: str, key: str) -> Optional[str]:
    """``KEY=value`` (NCCL's /etc/nccl.conf, UCX's ucx.conf), the last one wins; comments ignored."""
    value = None
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if "=" in line:
            k, v = line.split("=", 1)
            if k.strip() == key:
                value = v.strip()
    return value


# What NCCL and UCX are told to use (the role fabric_app_config writes these keys): per app, its file option
# (verify_info's and the health check's nccl_conf / ucx_conf) and each field's key.
APP_KEYS = (("nccl", "nccl_conf", (("tc", "NCCL_IB_TC"), ("gid_index", "NCCL_IB_GID_INDEX"), ("devices", "NCCL_IB_HCA"))),
            ("ucx", "ucx_conf", (("tc", "UCX_IB_TRAFFIC_CLASS"), ("gid_index", "UCX_IB_GID_INDEX"),
                                 ("devices", "UCX_NET_DEVICES"))))


def app_settings(text: Optional[str], path: str, keys: Any) -> Dict[str, Any]:
    """One app's config file: {file, present, key/value (its traffic class, as before), keys, settings}."""
    keys = dict(keys)
    settings = dict((field, parse_conf_value(text, key)) for field, key in keys.items()) if text is not None else {}
    return {"file": path, "key": keys["tc"], "present": text is not None, "value": settings.get("tc"),
            "keys": keys, "settings": settings}


def memlock_kib(value: str) -> Optional[int]:
    """limits.conf memlock value in KiB; ``unlimited``/``infinity``/-1 -> UNLIMITED; junk -> None."""
    if value in ("unlimited", "infinity", "-1"):
        return UNLIMITED
    return int(value) if value.isdigit() else None


def parse_limits(files: List[Dict[str, str]], group: str) -> Dict[str, Any]:
    """The memlock limits a member of ``group`` gets from limits.conf + limits.d (files in read order).

    pam_limits reads limits.conf, then limits.d/*.conf in order; a later line for the same domain
    type overrides; ``@group`` beats ``*``.  Returns soft/hard in KiB (UNLIMITED = -1) and the lines.
    """
    found: Dict[str, Dict[str, Any]] = {}
    for f in files:
        for n, line in enumerate(f["text"].splitlines(), 1):
            parts = line.split("#", 1)[0].split()
            if len(parts) != 4 or parts[2] != "memlock":
                continue
            domain, kind, _item, value = parts
            if domain not in ("@" + group, "*"):
                continue
            for k in (("soft", "hard") if kind == "-" else (kind,)):
                if k not in ("soft", "hard"):
                    continue
                prev = found.get(k)
                if prev is not None and prev["domain"] != "*" and domain == "*":
                    continue  # a group line wins over a later wildcard
                found[k] = {"domain": domain, "kib": memlock_kib(value), "value": value,
                            "source": "%s:%d" % (f["path"], n)}
    return {"group": group, "soft": found.get("soft"), "hard": found.get("hard")}


def parse_group_file(text: str) -> Dict[int, str]:
    out = {}
    for line in text.splitlines():
        parts = line.split(":")
        if len(parts) >= 3 and parts[2].isdigit():
            out[int(parts[2])] = parts[0]
    return out


def counter_delta(before: Optional[Dict[str, Any]], after: Optional[Dict[str, Any]]) -> Dict[str, int]:
    """Growth of each counter present in both samples (a counter that went down, e.g. reset, is 0)."""
    out = {}
    for k, v in (after or {}).items():
        b = (before or {}).get(k)
        if isinstance(v, int) and isinstance(b, int):
            out[k] = max(0, v - b)
    return out


def sample_delta(first: Dict[str, Any], second: Dict[str, Any], interval: float) -> Dict[str, Any]:
    """What grew between two samples: per netdev counters and IRQs per CPU, softnet, TCP."""
    netdevs = {}
    for name, a in first["netdevs"].items():
        b = second["netdevs"].get(name)
        if b is None:
            continue
        irqs_a, irqs_b = (a.get("irqs") or {}).get("per_cpu") or [], (b.get("irqs") or {}).get("per_cpu") or []
        netdevs[name] = {"counters": counter_delta(a.get("counters"), b.get("counters")),
                         "ethtool_counters": counter_delta(a.get("ethtool_counters"), b.get("ethtool_counters")),
                         "irqs_per_cpu": [max(0, y - x) for x, y in zip(irqs_a, irqs_b)]}
    out: Dict[str, Any] = {"interval": interval, "netdevs": netdevs, "softnet": None, "tcp": None}
    sa, sb = first["host"].get("softnet"), second["host"].get("softnet")
    if sa and sb:
        out["softnet"] = counter_delta(dict((k, sa[k]) for k in ("dropped", "time_squeeze")),
                                       dict((k, sb[k]) for k in ("dropped", "time_squeeze")))
    ta, tb = first["host"].get("tcp"), second["host"].get("tcp")
    if ta and tb:
        out["tcp"] = counter_delta(dict((k, ta[k]) for k in ("out_segs", "retrans_segs")),
                                   dict((k, tb[k]) for k in ("out_segs", "retrans_segs")))
    return out


def data_interfaces(facts: Dict[str, Any], explicit: List[str], fallback: List[str]) -> List[str]:
    """The data interfaces: ``explicit`` when given, else the netdevs under RDMA ports, else ``fallback``."""
    if explicit:
        return list(explicit)
    names: List[str] = []
    for dev in facts["devices"].values():
        for port in dev["ports"].values():
            names.extend(n for n in port["netdevs"] if n not in names)
    return names or list(fallback)


def _counters(host: Host, names: List[str], ethtool: bool) -> Dict[str, Any]:
    from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _domain as _irq
    interrupts = _irq.parse_interrupts(host.read(_irq.INTERRUPTS) or "CPU0\n")
    return {"netdevs": dict((n, _fabric.netdev(host, n, interrupts, ethtool)) for n in names
                            if host.exists("/sys/class/net/" + n)),
            "host": _fabric.host_counters(host)}


def _irq_detail(host: Host, name: str, interrupts: Dict[int, Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _domain as _irq
    try:
        nic = _irq.nic_irqs(host, name, interrupts)
    except ValueError:
        return None
    irqs = []
    for i in nic["irqs"]:
        irqs.append({"irq": i["irq"], "name": i["name"],
                     "affinity": (host.read("/proc/irq/%d/smp_affinity_list" % i["irq"]) or "").strip(),
                     "effective": (host.read("/proc/irq/%d/effective_affinity_list" % i["irq"]) or "").strip()})
    return {"numa_node": nic["numa_node"], "local_cpus": _irq.format_cpulist(nic["local_cpus"]),
            "online_cpus": _irq.format_cpulist(_irq.online_cpus(host)), "irqs": irqs}


def device_nodes(host: Host, groups: Dict[int, str]) -> Dict[str, Dict[str, Any]]:
    """Group and mode of each device node in /dev/infiniband.  udev's by-ibdev/ and by-path/ are
    directories of links (0755 by design), not device nodes: they are not access the profile limits."""
    out = {}
    for name in host.listdir(DEV_IB):
        path = "%s/%s" % (DEV_IB, name)
        perms = None if host.isdir(path) else host.node_perms(path)
        if perms is not None:
            out[name] = dict(perms, group=groups.get(perms["gid"]))
    return out


def _read_json(host: Host, path: str) -> Any:
    try:
        return host.read_json(path)
    except HostError as e:
        return {"file": path, "error": str(e)}


def rdma_core_version(host: Host, globber: Callable[[str], List[str]] = glob.glob) -> Dict[str, Optional[str]]:
    text = host.read(DPKG_STATUS)
    if text:
        version = parse_dpkg_status_version(text, "rdma-core")
        if version:
            return {"version": version, "source": DPKG_STATUS}
    prefix = "" if host.root in ("", "/") else host.root.rstrip("/")
    for pattern in LIBIBVERBS_GLOBS:
        for path in sorted(globber(host.p(pattern))):
            version = libibverbs_version(path)
            if version:
                return {"version": version, "source": path[len(prefix):]}
    return {"version": None, "source": None}


def gather(host: Host, params: Dict[str, Any], sleep: Callable[[float], None] = time.sleep,
           globber: Callable[[str], List[str]] = glob.glob,
           during: Optional[Callable[[List[str]], Dict[str, Any]]] = None) -> Dict[str, Any]:
    """The node's facts; ``during(data_interfaces)`` (verify_info's drift and QoS parts) runs between
    the two counter samples, inside the interval, and what it returns is added to the facts.

    The second sample waits for what is left of ``interval`` after ``during``: reading the journal,
    the live values and the QoS tools sends nothing on the data path, so the counters still grow
    only with the node's own traffic, and the delta's ``interval`` is the time actually measured."""
    from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _domain as _irq
    from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _plan as _irqplan
    from ansible_collections.hpcnet.rdma.plugins.module_utils.services import _domain as _service
    ethtool = params["ethtool"] and host.which("ethtool") is not None
    wanted = [n for n in params["interfaces"] if host.exists("/sys/class/net/" + n)]
    missing = [n for n in params["interfaces"] if n not in wanted]
    facts = _fabric.gather(host, wanted, params["tools"], ethtool)
    data = [n for n in data_interfaces(facts, wanted if params["interfaces"] else [], params["fallback_interfaces"])
            if host.exists("/sys/class/net/" + n)]
    extra = [n for n in data if n not in facts["netdevs"]]
    if extra:   # fallback interfaces not under an RDMA port: report them like fabric_info would
        interrupts = _irq.parse_interrupts(host.read(_irq.INTERRUPTS) or "CPU0\n")
        facts["netdevs"].update((n, _fabric.netdev(host, n, interrupts, ethtool)) for n in extra)
    first = {"netdevs": dict((n, facts["netdevs"][n]) for n in facts["netdevs"]), "host": facts["host"]}
    started = time.time()
    parts = during(data) if during is not None else {}
    left = params["interval"] - (time.time() - started)
    if left > 0:
        sleep(left)
    second = _counters(host, sorted(first["netdevs"]), ethtool)
    delta = sample_delta(first, second, round(max(params["interval"], time.time() - started), 3))

    try:
        addrs = _iproute.addrs(host)
    except (HostError, ParseError, ValueError) as e:
        addrs, addr_error = {}, str(e)
    else:
        addr_error = None
    interrupts = _irq.parse_interrupts(host.read(_irq.INTERRUPTS) or "CPU0\n")
    coalesce = {}
    for n in data:
        coalesce[n] = _ethtool.read(host, "coalesce", n) if ethtool else None
    limit_files = [{"path": LIMITS, "text": host.read(LIMITS) or ""}]
    for name in host.listdir(LIMITS_D):
        if name.endswith(".conf"):
            limit_files.append({"path": "%s/%s" % (LIMITS_D, name), "text": host.read("%s/%s" % (LIMITS_D, name)) or ""})
    groups = parse_group_file(host.read("/etc/group") or "")
    devnodes = device_nodes(host, groups)
    apps = {}
    for app, option, keys in APP_KEYS:
        apps[app] = app_settings(host.read(params[option]), params[option], keys)
    installed = _irqplan.irqbalance_installed(host)
    defaults = host.read(_irqplan.read_env_file(host)) or ""
    out = {
        "fabric": facts,
        "data_interfaces": data,
        "missing_interfaces": missing,
        "addresses": dict((n, [a["local"] for a in addrs.get(n, []) if a["family"] == "inet"]) for n in data),
        "addresses_error": addr_error,
        "delta": delta,
        "kernel": (host.read("/proc/sys/kernel/osrelease") or "").strip() or None,
        "rdma_core": rdma_core_version(host, globber),
        "irqs": dict((n, _irq_detail(host, n, interrupts)) for n in data),
        "irqbalance": {"installed": installed,
                       "service": _service.read_value(host, _irqplan.IRQBALANCE_UNIT) if installed else None,
                       "policyscript": _irqplan.POLICY_SCRIPT in defaults},
        "coalesce": coalesce,
        "memlock": parse_limits(limit_files, params["memlock_group"]),
        "devnodes": devnodes,
        "apps": apps,
        "profile": _read_json(host, params["profile_file"]),
    }
    out.update(parts)
    return out
