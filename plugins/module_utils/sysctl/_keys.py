# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""sysctl names, values and files, pure: the tunables this collection knows (:data:`CATALOG`), a key's
canonical form, /proc path and scope, a value checked against its kind and against what the kernel
offers, and where the collection's sysctl.d file may live (:func:`check_file`).  ValueError names the
field, the value and what is allowed."""
from __future__ import annotations

import re

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _files
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import lazy_re

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, Optional, Tuple

DEFAULT_FILE = "/etc/sysctl.d/90-hpcnet-rdma.conf"
# systemd-sysctl(8) / sysctl.d(5): same basename → the earlier directory wins; then all files are
# applied in basename order, so a later name overrides an earlier one.  procps' ``sysctl --system``
# reads /etc/sysctl.conf after them.
SEARCH_DIRS = ("/etc/sysctl.d", "/run/sysctl.d", "/usr/local/lib/sysctl.d", "/usr/lib/sysctl.d", "/lib/sysctl.d")
SYSCTL_CONF = "/etc/sysctl.conf"
# Where the file this collection owns may live: the admin's persistent sysctl.d directories.
# /run/sysctl.d does not survive a reboot; /usr/lib/sysctl.d and /lib/sysctl.d are the packages'.
FILE_DIRS = ("/etc/sysctl.d", "/usr/local/lib/sysctl.d")
_FILE_NAME = lazy_re(r"^[A-Za-z0-9_][A-Za-z0-9_.@+-]*\.conf$")

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

_KEY_RE = lazy_re(r"^[A-Za-z0-9_][A-Za-z0-9_.:@+\-/]*$")
_INT_RE = lazy_re(r"^-?[0-9]+$")
_SWAP = str.maketrans("./", "/.")
# String sysctls whose values the kernel names somewhere: a list in /proc, and the modules it
# loads on write (tcp_NAME, sch_NAME).  tcp_diag is socket monitoring, not a congestion control.
# Qdiscs net/sched/sch_api.c registers in every kernel with CONFIG_NET_SCHED.
CORE_QDISCS = ("pfifo_fast", "pfifo", "bfifo", "pfifo_head_drop", "mq", "noqueue")
OFFERED = {
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


def value_kind(key: str, current: Optional[str]) -> str:
    if key in CATALOG:
        return CATALOG[key][0]
    if current is not None:
        tokens = current.split()
        if tokens and all(_INT_RE.match(t) for t in tokens):
            return "int" if len(tokens) == 1 else "ints:%d" % len(tokens)
    return "str"


def check_value(key: str, value: str, current: Optional[str]) -> None:
    kind = value_kind(key, current)
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
