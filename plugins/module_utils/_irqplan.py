# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Plan IRQ affinity, its coexistence with irqbalance and its boot-time applier (pure).

The runtime masks are ``irq:NAME`` keys (see _irq); irqbalance and the applier are ``file:`` and
``service:`` keys, so one journal and one rollback cover all of it.
"""
from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Optional

from ansible_collections.hpcnet.rdma.plugins.module_utils import _files
from ansible_collections.hpcnet.rdma.plugins.module_utils._plan import Plan

IRQBALANCE_UNIT = "irqbalance.service"
IRQBALANCE_DEFAULTS = "/etc/default/irqbalance"
BANNED_FILE = "/etc/hpcnet-rdma/irqbalance-banned"
POLICY_SCRIPT = "/usr/local/lib/hpcnet-rdma/irqbalance-policy"
APPLIER = "/usr/local/lib/hpcnet-rdma/hpcnet_irq.py"
POLICY_FILE = "/etc/hpcnet-rdma/irq-policy.json"
UNIT_FILE = "/etc/systemd/system/hpcnet-rdma-irq.service"
UNIT_LINK = "/etc/systemd/system/multi-user.target.wants/hpcnet-rdma-irq.service"

_POLICY_SH = """#!/bin/sh
# Managed by hpcnet.rdma (irq_affinity): irqbalance --policyscript.  irqbalance calls it with the
# device's sysfs path and the IRQ number; IRQs whose /proc/interrupts name is listed in
# {banned} are pinned by hpcnet.rdma, so irqbalance must leave them alone.
name=$(awk -v irq="$2:" '$1 == irq {{print $NF}}' /proc/interrupts)
if [ -n "$name" ] && grep -qxF -- "$name" {banned} 2>/dev/null; then
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


def irqbalance_defaults(current: Optional[str]) -> str:
    """/etc/default/irqbalance with our --policyscript in IRQBALANCE_ARGS (other args kept)."""
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
         files: Dict[str, Any], applier_source: str) -> Dict[str, Any]:
    """Plan everything.  ``assignments``: interface → {irq name: cpulist}; ``current``: irq name →
    present cpulist; ``files``: node path → current FileState for every file planned here."""
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
        add_file(BANNED_FILE, _files.owned("".join(n + "\n" for n in names)))
        add_file(POLICY_SCRIPT, _files.owned(_POLICY_SH.format(banned=BANNED_FILE), "0755"))
        base = files.get(IRQBALANCE_DEFAULTS)
        text = base.get("content") if base else None
        add_file(IRQBALANCE_DEFAULTS, _files.owned(irqbalance_defaults(text), base.get("mode", "0644") if base else "0644"),
                 notify=IRQBALANCE_UNIT)
    if mode in ("runtime", "both"):
        for ifname in sorted(assignments):
            for name, cpus in sorted(assignments[ifname].items()):
                previous["irq:" + name] = current.get(name)
                if current.get(name) != cpus:
                    p.add("irq:" + name, current.get(name), cpus)
    if mode in ("persist", "both"):
        add_file(APPLIER, _files.owned(applier_source, "0644"))
        add_file(POLICY_FILE, _files.owned(json.dumps({"interfaces": entries}, indent=1, sort_keys=True) + "\n"))
        add_file(UNIT_FILE, _files.owned(_UNIT.format(applier=APPLIER, policy=POLICY_FILE)))
        add_file(UNIT_LINK, {"link": UNIT_FILE})
    return {"plan": p, "previous": previous, "notes": notes}


def planned_paths(mode: str, irqbalance: str) -> List[str]:
    paths = []
    if irqbalance == "ban":
        paths += [BANNED_FILE, POLICY_SCRIPT, IRQBALANCE_DEFAULTS]
    if mode in ("persist", "both"):
        paths += [APPLIER, POLICY_FILE, UNIT_FILE, UNIT_LINK]
    return paths
