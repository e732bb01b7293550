# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ``sysctl`` domain: validate, observe, plan (pure) and write kernel parameters."""
from __future__ import annotations

import fnmatch
import re
import sys
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.hpcnet.rdma.plugins.module_utils import _files
from ansible_collections.hpcnet.rdma.plugins.module_utils._host import Host, HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils._plan import Plan

DEFAULT_FILE = "/etc/sysctl.d/90-hpcnet-rdma.conf"
# systemd-sysctl(8) / sysctl.d(5): same basename → the earlier directory wins; then all files are
# applied in basename order, so a later name overrides an earlier one.  procps' ``sysctl --system``
# reads /etc/sysctl.conf after them.
SEARCH_DIRS = ("/etc/sysctl.d", "/run/sysctl.d", "/usr/local/lib/sysctl.d", "/usr/lib/sysctl.d", "/lib/sysctl.d")
SYSCTL_CONF = "/etc/sysctl.conf"

# Tunables this collection knows: kind ("int", "ints:N", "str") and scope ("netns": each network
# namespace has its own copy; "global": one per kernel).  A known key that is absent or read-only
# in this context is "not settable here", not "unknown".
CATALOG: Dict[str, Tuple[str, str]] = {
    "net.core.rmem_max": ("int", "global"),
    "net.core.wmem_max": ("int", "global"),
    "net.core.rmem_default": ("int", "global"),
    "net.core.wmem_default": ("int", "global"),
    "net.core.optmem_max": ("int", "netns"),
    "net.core.netdev_max_backlog": ("int", "global"),
    "net.core.netdev_budget": ("int", "global"),
    "net.core.netdev_budget_usecs": ("int", "global"),
    "net.core.busy_poll": ("int", "global"),
    "net.core.busy_read": ("int", "global"),
    "net.core.somaxconn": ("int", "netns"),
    "net.core.default_qdisc": ("str", "global"),
    "net.ipv4.tcp_rmem": ("ints:3", "netns"),
    "net.ipv4.tcp_wmem": ("ints:3", "netns"),
    "net.ipv4.tcp_mem": ("ints:3", "global"),
    "net.ipv4.udp_mem": ("ints:3", "global"),
    "net.ipv4.udp_rmem_min": ("int", "netns"),
    "net.ipv4.udp_wmem_min": ("int", "netns"),
    "net.ipv4.tcp_congestion_control": ("str", "netns"),
    "net.ipv4.tcp_mtu_probing": ("int", "netns"),
    "net.ipv4.tcp_timestamps": ("int", "netns"),
    "net.ipv4.tcp_sack": ("int", "netns"),
    "net.ipv4.tcp_window_scaling": ("int", "netns"),
    "net.ipv4.tcp_adv_win_scale": ("int", "netns"),
    "net.ipv4.tcp_slow_start_after_idle": ("int", "netns"),
    "net.ipv4.tcp_no_metrics_save": ("int", "netns"),
    "net.ipv4.tcp_low_latency": ("int", "global"),
    "net.ipv4.tcp_fastopen": ("int", "netns"),
    "net.ipv4.ip_local_port_range": ("ints:2", "netns"),
    "net.ipv4.neigh.default.gc_thresh1": ("int", "netns"),
    "net.ipv4.neigh.default.gc_thresh2": ("int", "netns"),
    "net.ipv4.neigh.default.gc_thresh3": ("int", "netns"),
    "net.ipv6.neigh.default.gc_thresh3": ("int", "netns"),
    "vm.zone_reclaim_mode": ("int", "global"),
    "vm.swappiness": ("int", "global"),
    "vm.min_free_kbytes": ("int", "global"),
    "vm.nr_hugepages": ("int", "global"),
    "kernel.numa_balancing": ("int", "global"),
    "kernel.sched_autogroup_enabled": ("int", "global"),
}

_KEY_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:@+\-/]*$")
_INT_RE = re.compile(r"^-?[0-9]+$")


def normalize_key(key: str) -> str:
    if not isinstance(key, str) or not _KEY_RE.match(key) or ".." in key or "//" in key:
        raise ValueError("sysctls: key %r is not a sysctl name (letters, digits, '_', '-', "
                         "separated by '.' or '/')" % (key,))
    return key.replace("/", ".") if "." not in key else key


def proc_path(key: str) -> str:
    return "/proc/sys/" + key.replace(".", "/")


def scope_of(key: str) -> str:
    if key in CATALOG:
        return CATALOG[key][1]
    if key.startswith(("net.ipv4.", "net.ipv6.", "net.unix.", "net.netfilter.", "net.mptcp.")):
        return "netns"
    return "global"


def normalize_value(key: str, value: Any) -> str:
    """One canonical text per value: list/int/str → whitespace-collapsed string."""
    if isinstance(value, bool):
        raise ValueError("sysctls.%s: value %r is a boolean; give 0 or 1" % (key, value))
    if isinstance(value, (list, tuple)):
        text = " ".join(str(v) for v in value)
    else:
        text = str(value)
    text = " ".join(text.split())
    if text == "":
        raise ValueError("sysctls.%s: value is empty" % key)
    return text


def _kind(key: str, current: Optional[str]) -> str:
    if key in CATALOG:
        return CATALOG[key][0]
    if current is not None:
        tokens = current.split()
        if tokens and all(_INT_RE.match(t) for t in tokens):
            return "int" if len(tokens) == 1 else "ints:%d" % len(tokens)
    return "str"


def check_value(key: str, value: str, current: Optional[str]) -> None:
    kind = _kind(key, current)
    if kind == "str":
        return
    count = 1 if kind == "int" else int(kind.split(":")[1])
    tokens = value.split()
    if not all(_INT_RE.match(t) for t in tokens):
        raise ValueError("sysctls.%s: value %r is not numeric; allowed: %s" % (key, value, _describe(count)))
    if len(tokens) != count:
        raise ValueError("sysctls.%s: value %r has %d number(s); allowed: %s"
                         % (key, value, len(tokens), _describe(count)))


def _describe(count: int) -> str:
    return "one integer" if count == 1 else "%d integers separated by spaces (or a list)" % count


# ---------------------------------------------------------------------- domain interface
def read_value(host: Host, key: str) -> Optional[str]:
    text = host.read(proc_path(key))
    return None if text is None else " ".join(text.split())


def write_value(host: Host, key: str, value: Optional[str]) -> None:
    if value is None:
        raise HostError("sysctl %s had no original value to restore" % key)
    host.write_proc(proc_path(key), value)


def same(actual: Any, wanted: Any) -> bool:
    if actual is None or wanted is None:
        return actual is wanted
    return " ".join(str(actual).split()) == " ".join(str(wanted).split())


# the domain contract (_domain.Domain): this file's read_value, write_value and same
DOMAINS = {"sysctl": sys.modules[__name__]}


# ---------------------------------------------------------------------- observe (I/O)
def observe(host: Host, keys: List[str]) -> Dict[str, Dict[str, Any]]:
    out = {}
    for key in keys:
        path = proc_path(key)
        exists = host.exists(path)
        out[key] = {
            "exists": exists,
            "writable": exists and host.proc_writable(path),
            "value": read_value(host, key) if exists else None,
        }
    return out


def boot_files(host: Host, our_file: str) -> Dict[str, str]:
    """Every sysctl.d file systemd-sysctl would apply, in application order (path → text)."""
    chosen: Dict[str, str] = {}
    for directory in SEARCH_DIRS:
        for name in host.listdir(directory):
            if name.endswith(".conf") and name not in chosen:
                chosen[name] = directory + "/" + name
    ordered = [chosen[n] for n in sorted(chosen)]
    links = [host.readlink(p) or "" for p in ordered]
    if not any(link.endswith("sysctl.conf") and "/" in link for link in links) and host.exists(SYSCTL_CONF):
        ordered.append(SYSCTL_CONF)
    out: Dict[str, str] = {}
    for path in ordered:
        if path == our_file:
            out[path] = ""
            continue
        text = host.read(path)
        if text is not None:
            out[path] = text
    return out


# ---------------------------------------------------------------------- plan (pure)
def parse_conf(text: str) -> List[Tuple[str, str]]:
    """``key = value`` pairs of a sysctl.d file (comments, '-' prefixes and blanks skipped)."""
    pairs = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;" or "=" not in line:
            continue
        key, value = line.split("=", 1)
        key = key.strip().lstrip("-").strip()
        if "." not in key:
            key = key.replace("/", ".")
        pairs.append((key, " ".join(value.split())))
    return pairs


def boot_overrides(our_file: str, desired: Dict[str, str], files: Dict[str, str]) -> List[str]:
    """Warnings for files applied after ``our_file`` at boot that set one of our keys differently."""
    base = our_file.rsplit("/", 1)[-1]
    warnings = []
    for path, text in files.items():
        if path == our_file or (path != SYSCTL_CONF and path.rsplit("/", 1)[-1] <= base):
            continue
        for key, value in parse_conf(text):
            for ours, wanted in desired.items():
                if (key == ours or fnmatch.fnmatchcase(ours, key)) and not same(value, wanted):
                    warnings.append("sysctl %s: %s sets %r and is applied after %s at boot, "
                                    "overriding %r" % (ours, path, value, our_file, wanted))
    return warnings


def render_file(module: str, journal_dir: str, desired: Dict[str, str]) -> str:
    lines = [_files.HEADER.format(module=module, journal=journal_dir)]
    lines.extend("%s = %s\n" % (k, desired[k]) for k in sorted(desired))
    return "".join(lines)


def plan(desired_raw: Dict[str, Any], observed: Dict[str, Dict[str, Any]], mode: str,
         in_container: bool, on_unsettable: str, file_path: str, file_before: Any,
         journal_dir: str) -> Dict[str, Any]:
    """Validate and plan.  Raises ValueError (bad input or refused key) before any change.

    Returns ``{"plan", "previous", "unsettable", "desired"}``.
    """
    desired: Dict[str, str] = {}
    for key in desired_raw:
        obs = observed[key]
        if not obs["exists"] and key not in CATALOG:
            raise ValueError("sysctls: unknown key %r: %s does not exist on this node and it is not "
                             "a tunable this collection knows (e.g. net.core.rmem_max, net.ipv4.tcp_rmem)"
                             % (key, proc_path(key)))
        value = normalize_value(key, desired_raw[key])
        check_value(key, value, obs["value"])
        desired[key] = value

    p = Plan()
    previous: Dict[str, Any] = {}
    unsettable: List[Dict[str, str]] = []
    if mode in ("runtime", "both"):
        for key, value in desired.items():
            obs = observed[key]
            reason = None
            if in_container and scope_of(key) == "global":
                reason = "kernel-global key: inside a container it would change the host's kernel"
            elif not obs["exists"]:
                reason = "not present in this kernel or network namespace"
            elif not obs["writable"]:
                reason = "read-only here (a kernel-global key seen from a child network namespace)"
            if reason:
                unsettable.append({"key": key, "value": value, "current": obs["value"], "reason": reason})
                continue
            previous["sysctl:" + key] = obs["value"]
            if not same(obs["value"], value):
                p.add("sysctl:" + key, obs["value"], value)
        if unsettable and on_unsettable == "fail":
            raise ValueError("sysctls not settable here: %s; set on_unsettable=warn to apply the rest "
                             "and report them" % "; ".join("%s (%s)" % (u["key"], u["reason"]) for u in unsettable))
    if mode in ("persist", "both"):
        after = _files.owned(render_file("sysctl_tuning", journal_dir, desired))
        previous["file:" + file_path] = file_before
        p.add("file:" + file_path, file_before, after)
    return {"plan": p, "previous": previous, "unsettable": unsettable, "desired": desired}
