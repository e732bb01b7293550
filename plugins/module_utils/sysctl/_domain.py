# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ``sysctl`` domain: validate, observe, plan (pure) and write kernel parameters."""
from __future__ import annotations

import errno
import fnmatch
import os
import re
import sys
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _files
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _kmodfiles
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Plan

DEFAULT_FILE = "/etc/sysctl.d/90-hpcnet-rdma.conf"
# systemd-sysctl(8) / sysctl.d(5): same basename → the earlier directory wins; then all files are
# applied in basename order, so a later name overrides an earlier one.  procps' ``sysctl --system``
# reads /etc/sysctl.conf after them.
SEARCH_DIRS = ("/etc/sysctl.d", "/run/sysctl.d", "/usr/local/lib/sysctl.d", "/usr/lib/sysctl.d", "/lib/sysctl.d")
SYSCTL_CONF = "/etc/sysctl.conf"
# Where the file this collection owns may live: the admin's persistent sysctl.d directories.
# /run/sysctl.d does not survive a reboot; /usr/lib/sysctl.d and /lib/sysctl.d are the packages'.
FILE_DIRS = ("/etc/sysctl.d", "/usr/local/lib/sysctl.d")
_FILE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.@+-]*\.conf$")

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
_SWAP = str.maketrans("./", "/.")
# String sysctls whose values the kernel names somewhere: a list in /proc, and the modules it
# loads on write (tcp_NAME, sch_NAME).  tcp_diag is socket monitoring, not a congestion control.
# Qdiscs net/sched/sch_api.c registers in every kernel with CONFIG_NET_SCHED.
CORE_QDISCS = ("pfifo_fast", "pfifo", "bfifo", "pfifo_head_drop", "mq", "noqueue")
_OFFERED = {
    "net.ipv4.tcp_congestion_control": ("/proc/sys/net/ipv4/tcp_available_congestion_control", ("reno",),
                                        "tcp_", ("diag", "probe")),
    "net.core.default_qdisc": (None, CORE_QDISCS, "sch_", ()),
}


def canonical_key(key: str) -> str:
    """The dotted spelling of a sysctl name.  sysctl.d(5): when the first separator is a slash,
    the remaining slashes and dots are swapped (``net/ipv4/conf/eth0.100/rp_filter`` is
    ``net.ipv4.conf.eth0/100.rp_filter``)."""
    first = re.search(r"[./]", key)
    return key.translate(_SWAP) if first and first.group() == "/" else key


def normalize_key(key: str) -> str:
    if not isinstance(key, str) or not _KEY_RE.match(key) or ".." in key or "//" in key:
        raise ValueError("sysctls: key %r is not a sysctl name (letters, digits, '_', '-', "
                         "separated by '.' or '/')" % (key,))
    out = canonical_key(key)
    if any(part == "" or set(part) == {"/"} for part in out.split(".")):
        raise ValueError("sysctls: key %r is not a sysctl name (an empty or '.' component)" % (key,))
    return out


def normalize_keys(sysctls: Dict[str, Any]) -> Dict[str, Any]:
    """The mapping with canonical keys; ValueError naming both spellings of one sysctl."""
    out: Dict[str, Any] = {}
    given: Dict[str, str] = {}
    for key, value in sysctls.items():
        name = normalize_key(key)
        if name in given:
            raise ValueError("sysctls: %r and %r are the same sysctl %s; give it once" % (given[name], key, name))
        given[name] = key
        out[name] = value
    return out


def check_file(path: str) -> str:
    """The normalised path of the sysctl.d file to own; ValueError unless it is a plain NAME.conf
    directly in one of :data:`FILE_DIRS`."""
    norm, reason = "", None
    if not isinstance(path, str) or not path.startswith("/"):
        reason = "is not an absolute path"
    elif ".." in path.split("/"):
        reason = "has a '..' component"
    else:
        try:
            norm = _files.normal_path(path)
        except ValueError:
            reason = "is not a file path (a control character, or ending in '/')"
    reason = reason or _file_problem(norm)
    if reason is None:
        return norm
    raise ValueError("file: %r %s; allowed: a NAME.conf directly in %s (/run/sysctl.d does not survive a "
                     "reboot, /usr/lib/sysctl.d and /lib/sysctl.d belong to the packages)"
                     % (path, reason, " or ".join(FILE_DIRS)))


def _file_problem(path: str) -> Optional[str]:
    directory, _sep, name = path.rpartition("/")
    if directory not in FILE_DIRS:
        return "is not in a sysctl.d directory this collection writes"
    if name.startswith("."):
        return "is hidden: systemd-sysctl skips it"
    if not name.endswith(".conf"):
        return "does not end in .conf, so systemd-sysctl would not read it"
    if not _FILE_NAME.match(name):
        return "is not a plain file name (letters, digits, '_', '-', '.', '@', '+')"
    return None


def proc_path(key: str) -> str:
    return "/proc/sys/" + key.translate(_SWAP)


def scope_of(key: str) -> str:
    if key in CATALOG:
        return CATALOG[key][1]
    if key.startswith(("net.ipv4.", "net.ipv6.", "net.unix.", "net.netfilter.", "net.mptcp.")):
        return "netns"
    return "global"


def normalize_value(key: str, value: Any, numeric: bool = False) -> str:
    """One canonical text per value: list/int/str → whitespace-collapsed string.  A control
    character is refused (a value is one line of a sysctl.d file); a tab only separates the
    numbers of a ``numeric`` key, as the kernel prints them."""
    if isinstance(value, bool):
        raise ValueError("sysctls.%s: value %r is a boolean; give 0 or 1" % (key, value))
    if isinstance(value, (list, tuple)):
        text = " ".join(str(v) for v in value)
    else:
        text = str(value)
    bad = [ch for ch in text if (ord(ch) < 0x20 or ord(ch) == 0x7f) and not (numeric and ch == "\t")]
    if bad:
        raise ValueError("sysctls.%s: value %r has a control character (%r); a sysctl value is one line "
                         "of printable text" % (key, text, bad[0]))
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


def check_offered(key: str, value: str, obs: Dict[str, Any], mode: str) -> Optional[str]:
    """Refuse a string value the running kernel does not offer (ValueError); a warning when that
    cannot be known here, or in persist mode, where the kernel that boots the file may differ."""
    known = obs.get("offered")
    if not known or value == obs.get("value") or value in known["names"]:
        return None
    if not known["complete"]:
        return ("sysctl %s: %r not checked against the kernel: %s; the kernel refuses it when written if it "
                "has none" % (key, value, known["why"]))
    allowed = ", ".join(known["names"])
    if mode == "persist":
        return ("sysctl %s: %r is not offered by the running kernel (it offers %s); persisted anyway, as the "
                "kernel this file boots may offer it" % (key, value, allowed))
    raise ValueError("sysctls.%s: %r is not offered by this kernel; allowed: %s (what it lists and the "
                     "modules it can load)" % (key, value, allowed))


def _describe(count: int) -> str:
    return "one integer" if count == 1 else "%d integers separated by spaces (or a list)" % count


# ---------------------------------------------------------------------- domain interface
def read_value(host: Host, key: str) -> Optional[str]:
    text = host.read(proc_path(key))
    return None if text is None else " ".join(text.split())


# The bounds the kernel enforces on some keys (its handler's min/max), for the message of a refused
# write.  Source: net/ipv4/sysctl_net_ipv4.c (ip_ttl_min/max, ip_local_port_range_min/max,
# tcp_adv_win_scale_min/max) and kernel/sysctl.c / mm (vm.swappiness: 0-200 since Linux 5.8, 0-100 before;
# vm.dirty_ratio and vm.dirty_background_ratio: proc_dointvec_minmax 0..100, mm/page-writeback.c).
RANGES: Dict[str, str] = {
    "net.ipv4.ip_default_ttl": "1-255",
    "net.ipv4.ip_local_port_range": "two ports of 1-65535, the first not above the second",
    "net.ipv4.tcp_adv_win_scale": "-31-31",
    "vm.dirty_background_ratio": "0-100",
    "vm.dirty_ratio": "0-100",
    "vm.swappiness": "0-200 (0-100 before Linux 5.8)",
}
# What a kernel's sysctl handler answers a value outside what it accepts (ENOENT: a congestion
# control or qdisc name it does not know).
_REFUSALS = (errno.EINVAL, errno.ERANGE, errno.EOVERFLOW, errno.ENOENT)


def refused_message(key: str, value: str, code: int, current: Optional[str]) -> str:
    """The words for a value the kernel refused: key, value, the errno and its text, the range where
    it is known, and what the key still holds."""
    allowed = RANGES.get(key)
    return "the kernel refused %r for %s (%s: %s): out of the range or set of values it allows%s; it still holds %r" % (
        value, key, errno.errorcode.get(code, str(code)), os.strerror(code),
        "; allowed: %s" % allowed if allowed else "", current)


def write_value(host: Host, key: str, value: Optional[str]) -> None:
    if value is None:
        raise HostError("sysctl %s had no original value to restore" % key)
    try:
        host.write_proc(proc_path(key), value)
    except HostError as e:
        if e.errno not in _REFUSALS or not host.exists(proc_path(key)):   # ENOENT of a file that is gone
            raise
        try:
            current = read_value(host, key)
        except HostError:
            current = None
        err = HostError(refused_message(key, value, e.errno, current))
        err.errno = e.errno
        raise err


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
        if key in _OFFERED:
            out[key]["offered"] = offered(host, key)
    return out


def _kernel_modules(host: Host) -> Tuple[Optional[List[str]], str]:
    """Every module the running kernel has or can load (modules.dep + modules.builtin), or None
    and why it cannot be told."""
    release = (host.read("/proc/sys/kernel/osrelease") or "").strip()
    if not release or "/" in release:
        return None, "the running kernel's release (/proc/sys/kernel/osrelease) is unknown"
    base = "/lib/modules/%s/" % release
    dep = host.read(base + "modules.dep")
    if dep is None:
        return None, "%smodules.dep is not readable, so which modules could provide it is unknown" % base
    names = set(_kmodfiles.parse_modules_dep(dep))
    names.update(_kmodfiles.parse_modules_builtin(host.read(base + "modules.builtin") or ""))
    return sorted(names), ""


def offered(host: Host, key: str) -> Dict[str, Any]:
    """What the running kernel accepts for a string sysctl of :data:`_OFFERED`: the names it lists
    plus the modules it would load on write; ``complete`` False when that cannot be known here."""
    listing, core, prefix, skip = _OFFERED[key]
    names = set(core)
    complete = True
    why = ""
    if listing is not None:
        text = host.read(listing) if host.exists(listing) else None
        if text is None:
            complete, why = False, "%s is not readable here" % listing
        names.update((text or "").split())
    modules, mod_why = _kernel_modules(host)
    if modules is None:
        complete, why = False, mod_why
    names.update(m[len(prefix):] for m in modules or [] if m.startswith(prefix) and m[len(prefix):] not in skip)
    return {"names": sorted(names), "complete": complete, "why": why}


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
        key = canonical_key(key.strip().lstrip("-").strip())
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

    Returns ``{"plan", "previous", "unsettable", "desired", "warnings"}``.
    """
    desired: Dict[str, str] = {}
    warnings: List[str] = []
    for key in desired_raw:
        obs = observed[key]
        if not obs["exists"] and key not in CATALOG:
            raise ValueError("sysctls: unknown key %r: %s does not exist on this node and it is not "
                             "a tunable this collection knows (e.g. net.core.rmem_max, net.ipv4.tcp_rmem)"
                             % (key, proc_path(key)))
        value = normalize_value(key, desired_raw[key], numeric=_kind(key, obs["value"]) != "str")
        check_value(key, value, obs["value"])
        warning = check_offered(key, value, obs, mode)
        if warning:
            warnings.append(warning)
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
    return {"plan": p, "previous": previous, "unsettable": unsettable, "desired": desired, "warnings": warnings}
