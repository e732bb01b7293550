# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ``sysctl`` domain: observe, plan (pure) and write kernel parameters; the rules for keys, values
and files are ``_keys``."""
from __future__ import annotations

import errno
import fnmatch
import os
import sys

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _files
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _kmodfiles
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Plan
from ansible_collections.hpcnet.rdma.plugins.module_utils.sysctl._keys import (
    CATALOG, OFFERED, SEARCH_DIRS, SYSCTL_CONF, canonical_key, check_offered, check_value, normalize_value, proc_path, scope_of,
    value_kind)

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional, Tuple


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
        if key in OFFERED:
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
    """What the running kernel accepts for a string sysctl of :data:`OFFERED`: the names it lists
    plus the modules it would load on write; ``complete`` False when that cannot be known here."""
    listing, core, prefix, skip = OFFERED[key]
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
        value = normalize_value(key, desired_raw[key], numeric=value_kind(key, obs["value"]) != "str")
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
