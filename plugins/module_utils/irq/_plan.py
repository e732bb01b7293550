# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Plan IRQ affinity, its coexistence with irqbalance and its boot-time applier (pure).

The runtime masks are ``irq:NAME`` keys (see _irq); irqbalance and the applier are ``file:`` and
``service:`` keys, so one journal and one rollback cover all of it.

Several ``irq_affinity`` calls add up: the irqbalance ban list and the boot applier's policy hold
every interface pinned so far (this call's entries replace earlier ones of the same interface),
so a second call never unbans or forgets the first call's IRQs.  Rollback restores the files as
they were before the first call.

irqbalance reads ``IRQBALANCE_ARGS`` from the file its unit names in ``EnvironmentFile=``:
``/etc/default/irqbalance`` on Debian/Ubuntu, ``/etc/sysconfig/irqbalance`` on the RHEL family
(and SUSE).  :func:`env_file` picks it from the installed unit, then from which of the two
exists, then from ``/etc/os-release`` (:func:`read_env_file` is the one place that reads them).
"""
from __future__ import annotations

import json
import re

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _files
from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _domain as _irq
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Plan

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional

IRQBALANCE_UNIT = "irqbalance.service"
IRQBALANCE_DEFAULTS = "/etc/default/irqbalance"      # Debian, Ubuntu
IRQBALANCE_SYSCONFIG = "/etc/sysconfig/irqbalance"    # RHEL, Rocky, Alma, Fedora, SUSE
ENV_FILES = (IRQBALANCE_DEFAULTS, IRQBALANCE_SYSCONFIG)
# where irqbalance.service may live, the administrator's copy first (systemd's precedence)
UNIT_PATHS = ("/etc/systemd/system/irqbalance.service", "/usr/lib/systemd/system/irqbalance.service",
              "/lib/systemd/system/irqbalance.service")
SYSCONFIG_FAMILY = ("rhel", "centos", "fedora", "rocky", "almalinux", "ol", "amzn", "suse", "sles", "opensuse")
BANNED_FILE = "/etc/hpcnet-rdma/irqbalance-banned"
POLICY_SCRIPT = "/usr/local/lib/hpcnet-rdma/irqbalance-policy"
APPLIER = "/usr/local/lib/hpcnet-rdma/hpcnet_irq.py"
POLICY_FILE = "/etc/hpcnet-rdma/irq-policy.json"
UNIT_FILE = "/etc/systemd/system/hpcnet-rdma-irq.service"
UNIT_LINK = "/etc/systemd/system/multi-user.target.wants/hpcnet-rdma-irq.service"

_POLICY_SH = """#!/bin/sh
# Managed by hpcnet.rdma (irq_affinity): irqbalance --policyscript.  irqbalance calls it with the
# device's sysfs path and the IRQ number; IRQs whose /proc/interrupts name is listed in
# {banned} (the names tuned here) or {run_banned} (the names the boot unit
# pinned at this boot, e.g. in a baked image) are pinned by hpcnet.rdma: irqbalance leaves them alone.
name=$(awk -v irq="$2:" '$1 == irq {{print $NF}}' /proc/interrupts)
if [ -n "$name" ] && cat {banned} {run_banned} 2>/dev/null | grep -qxF -- "$name"; then
    echo ban=true
fi
exit 0
"""

_UNIT = """# Managed by hpcnet.rdma (irq_affinity); rollback (hpcnet.rdma.tuning_state) removes it.
[Unit]
Description=hpcnet.rdma: re-apply NIC IRQ affinity by IRQ name (numbers change across boots)
Wants=systemd-udev-settle.service
After=systemd-udev-settle.service network-pre.target
Before=irqbalance.service network.target

[Service]
Type=oneshot
ExecStart=/usr/bin/python3 {applier} {policy}
RemainAfterExit=yes

[Install]
WantedBy=multi-user.target
"""


# ---------------------------------------------------------------------- input (pure)
def validate(entries: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Check every entry's own values before the node is looked at (a cpulist is a cpulist on a NIC
    without MSI-X too) and fold repeated interfaces: the same entry twice is kept once, two
    different entries for one interface are an error naming both.  ValueError names the field."""
    out: List[Dict[str, Any]] = []
    first: Dict[str, int] = {}
    for i, entry in enumerate(entries):
        _irq.parse_cpulist(entry.get("reserved_cpus") or "", "reserved_cpus")
        explicit = entry.get("explicit") or {}
        for pattern, cpulist in explicit.items():
            if not _irq.parse_cpulist(cpulist, "explicit[%s]" % pattern):
                raise ValueError("explicit[%s]: the cpulist is empty; allowed: CPU numbers and ranges like 0-3,8"
                                 % pattern)
        if entry.get("policy") == "explicit" and not explicit:
            raise ValueError("interfaces[%d].explicit: policy explicit needs IRQ-name patterns and cpulists, "
                             "e.g. {'*-input.*': '0-1'}" % i)
        if entry.get("cpu") is not None and int(entry["cpu"]) < 0:
            raise ValueError("interfaces[%d].cpu: %d is not a CPU number; allowed: 0 or more" % (i, entry["cpu"]))
        name = entry["interface"]
        if name not in first:
            first[name] = i
            out.append(entry)
            continue
        earlier = next(e for e in out if e["interface"] == name)
        if earlier != entry:
            differ = ", ".join("%s %s / %s" % (k, _show(earlier.get(k)), _show(entry.get(k)))
                               for k in sorted(set(earlier) | set(entry)) if earlier.get(k) != entry.get(k))
            raise ValueError("interfaces[%d] and interfaces[%d] both select %s with different settings (%s); "
                             "allowed: each interface once" % (first[name], i, name, differ))
    return out


def _show(value: Any) -> str:
    return json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) or value is None else str(value)


# ---------------------------------------------------------------------- irqbalance's environment file
def env_file(units: List[Optional[str]], existing: List[str], os_release: Optional[str]) -> str:
    """The file irqbalance reads IRQBALANCE_ARGS from (pure).

    ``units``: the text of each UNIT_PATHS entry (None when absent), in precedence order; the first
    unit found decides when it names one of ENV_FILES in ``EnvironmentFile=``.  Otherwise the one
    of ENV_FILES that exists (``existing``), otherwise /etc/os-release: ID or ID_LIKE of the RHEL or
    SUSE family means /etc/sysconfig/irqbalance; everything else /etc/default/irqbalance."""
    for text in units:
        if text is None:
            continue
        for line in text.splitlines():
            m = re.match(r"^\s*EnvironmentFile\s*=\s*-?\s*(\S+)\s*$", line)
            if m and m.group(1) in ENV_FILES:
                return m.group(1)
        break
    for path in ENV_FILES:
        if path in existing:
            return path
    ids: List[str] = []
    for line in (os_release or "").splitlines():
        key, _sep, value = line.partition("=")
        if key.strip() in ("ID", "ID_LIKE"):
            ids += value.strip().strip("\"'").lower().split()
    return IRQBALANCE_SYSCONFIG if any(i in SYSCONFIG_FAMILY for i in ids) else IRQBALANCE_DEFAULTS


def read_env_file(host: Any) -> str:
    """:func:`env_file` for this node: reads the irqbalance units and /etc/os-release."""
    return env_file([host.read(p) for p in UNIT_PATHS], [p for p in ENV_FILES if host.exists(p)],
                    host.read("/etc/os-release"))


def irqbalance_installed(host: Any) -> bool:
    return host.exists("/usr/sbin/irqbalance") or any(host.exists(p) for p in UNIT_PATHS[1:])


# ---------------------------------------------------------------------- earlier calls' files
def _content(state: Any) -> Optional[str]:
    text = state.get("content") if isinstance(state, dict) else None
    if isinstance(text, bytes):
        return text.decode("utf-8", "replace")
    return None if text is None else _files.text(state)   # a file that is not UTF-8 is journaled base64


def merged_banned(current: Any, names: List[str]) -> List[str]:
    """The ban list: the IRQ names earlier calls banned (``current`` file state) plus ``names``."""
    kept = [line.strip() for line in (_content(current) or "").splitlines()]
    return sorted(set(n for n in kept if n and not n.startswith("#")) | set(names))


def merged_policy(current: Any, entries: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The boot applier's entries: earlier calls' interfaces (in their order) with this call's
    entries replacing those of the same interface, then this call's new interfaces."""
    try:
        earlier = json.loads(_content(current) or "{}").get("interfaces") or []
    except (ValueError, AttributeError, RecursionError):
        earlier = []
    mine = dict((e["interface"], e) for e in entries)
    out = [mine.pop(e["interface"], e) for e in earlier if isinstance(e, dict) and e.get("interface")]
    return out + [e for e in entries if e["interface"] in mine]


def irqbalance_defaults(current: Optional[str]) -> str:
    """irqbalance's environment file with our --policyscript in IRQBALANCE_ARGS (other args kept)."""
    flag = "--policyscript=%s" % POLICY_SCRIPT
    lines = (current or "").splitlines()
    out = []
    found = False
    for line in lines:
        m = re.match(r'^\s*IRQBALANCE_ARGS\s*=\s*"?(.*?)"?\s*$', line)
        if m and not found:
            args = [a for a in m.group(1).split() if not a.startswith("--policyscript")]
            out.append('IRQBALANCE_ARGS="%s"' % " ".join(args + [flag]))
            found = True
        else:
            out.append(line)
    if not found:
        out.append("# hpcnet.rdma: keep irqbalance away from the NIC IRQs it pins")
        out.append('IRQBALANCE_ARGS="%s"' % flag)
    return "\n".join(out) + "\n"


def plan(assignments: Dict[str, Dict[str, str]], current: Dict[str, Optional[str]], entries: List[Dict[str, Any]],
         mode: str, irqbalance: str, irqbalance_installed: bool, irqbalance_state: Optional[Dict[str, Any]],
         files: Dict[str, Any], applier_source: str, env_path: str = IRQBALANCE_DEFAULTS) -> Dict[str, Any]:
    """Plan everything.  ``assignments``: interface → {irq name: cpulist}; ``current``: irq name →
    present cpulist; ``files``: node path → current FileState for every file planned here;
    ``env_path``: irqbalance's environment file (:func:`env_file`)."""
    p = Plan()
    previous: Dict[str, Any] = {}
    notes: List[str] = []
    names = sorted(set(n for a in assignments.values() for n in a))

    def add_file(path: str, after: Any, notify: Optional[str] = None) -> None:
        before = files.get(path)
        if notify:
            before, after = _files.with_notify(before, notify), _files.with_notify(after, notify)
        previous["file:" + path] = before
        p.add("file:" + path, before, after)

    # irqbalance first: it must not move the IRQs back once we pin them
    if irqbalance != "leave" and not irqbalance_installed:
        notes.append("irqbalance is not installed: nothing to coordinate")
    elif irqbalance == "stop" and irqbalance_state is None:
        notes.append("irqbalance cannot be stopped here (systemd is not running): use irqbalance: ban")
    elif irqbalance == "stop":
        after = {"active": False, "enabled": "disabled"}
        previous["service:" + IRQBALANCE_UNIT] = irqbalance_state
        p.add("service:" + IRQBALANCE_UNIT, irqbalance_state, after)
    elif irqbalance == "ban":
        banned = merged_banned(files.get(BANNED_FILE), names)
        add_file(BANNED_FILE, _files.owned("".join(n + "\n" for n in banned)))
        add_file(POLICY_SCRIPT, _files.owned(_POLICY_SH.format(banned=BANNED_FILE, run_banned=_irq.RUN_BANNED), "0755"))
        base = files.get(env_path)
        add_file(env_path, _files.owned(irqbalance_defaults(_content(base)), base.get("mode", "0644") if base else "0644"),
                 notify=IRQBALANCE_UNIT)
    if mode in ("runtime", "both"):
        for ifname in sorted(assignments):
            for name, cpus in sorted(assignments[ifname].items()):
                previous["irq:" + name] = current.get(name)
                if current.get(name) != cpus:
                    p.add("irq:" + name, current.get(name), cpus)
    if mode in ("persist", "both"):
        add_file(APPLIER, _files.owned(applier_source, "0644"))
        policy = merged_policy(files.get(POLICY_FILE), entries)
        add_file(POLICY_FILE, _files.owned(json.dumps({"interfaces": policy}, indent=1, sort_keys=True) + "\n"))
        add_file(UNIT_FILE, _files.owned(_UNIT.format(applier=APPLIER, policy=POLICY_FILE)))
        add_file(UNIT_LINK, {"link": UNIT_FILE})
    return {"plan": p, "previous": previous, "notes": notes}


def planned_paths(mode: str, irqbalance: str, env_path: str = IRQBALANCE_DEFAULTS) -> List[str]:
    paths = []
    if irqbalance == "ban":
        paths += [BANNED_FILE, POLICY_SCRIPT, env_path]
    if mode in ("persist", "both"):
        paths += [APPLIER, POLICY_FILE, UNIT_FILE, UNIT_LINK]
    return paths
