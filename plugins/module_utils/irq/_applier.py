# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The boot-time IRQ applier: ``python3 hpcnet_irq.py POLICY.json`` re-applies the policy by IRQ name.

Installed on the node as ONE standard-library file (``/usr/local/lib/hpcnet-rdma/hpcnet_irq.py``):
``_domain.py``'s text followed by this file's (``_module.applier_source``), so the boot planner is
the tune-time one.  In the collection this file imports ``_domain``'s names; in the installed file
they are defined above it, and the import is not run.  (No ``__future__`` import here: in the
installed file this text follows ``_domain.py``'s, where one is not allowed.)
"""
import json
import os
import sys
from typing import Any, Dict, List, Optional

if "parse_interrupts" not in globals():   # in the collection; the installed applier has _domain's text above
    from ansible_collections.hpcnet.rdma.plugins.module_utils.irq._domain import (  # noqa: F401
        INTERRUPTS, RUN_BANNED, assign, nic_irqs, online_cpus, parse_interrupts, write_value)


# ---------------------------------------------------------------------- the boot-time applier
class BootHost(object):
    """Plain file access for the boot applier (no Ansible on the node at boot); ``root`` for tests."""

    def __init__(self, root: str = "/") -> None:
        self.root = root
        self.tool_facts = {}  # type: Dict[str, Any]

    def p(self, path: str) -> str:
        return path if self.root in ("", "/") else os.path.join(self.root, path.lstrip("/"))

    def read(self, path: str) -> Optional[str]:
        try:
            with open(self.p(path), "r", encoding="utf-8") as f:
                return f.read()
        except OSError:
            return None

    def exists(self, path: str) -> bool:
        return os.path.exists(self.p(path))

    def readlink(self, path: str) -> Optional[str]:
        try:
            return os.readlink(self.p(path))
        except OSError:
            return None

    def listdir(self, path: str) -> List[str]:
        try:
            return sorted(os.listdir(self.p(path)))
        except OSError:
            return []

    def write_proc(self, path: str, value: str) -> None:
        with open(self.p(path), "w", encoding="utf-8") as f:
            f.write(value)

    def write_run(self, path: str, text: str) -> None:
        os.makedirs(os.path.dirname(self.p(path)), exist_ok=True)
        with open(self.p(path), "w", encoding="utf-8") as f:
            f.write(text)


def hints_of(host: Any, nic: Dict[str, Any]) -> Dict[str, str]:
    return dict((i["name"], (host.read("/proc/irq/%d/affinity_hint" % i["irq"]) or "0").strip())
                for i in nic["irqs"])


def plan_all(host: Any, entries: List[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """interface → {"nic": info, "assign": {irq name: cpulist}} for every policy entry."""
    interrupts = parse_interrupts(host.read(INTERRUPTS) or "")
    online = online_cpus(host)
    out = {}
    for entry in entries:
        nic = nic_irqs(host, entry["interface"], interrupts)
        out[entry["interface"]] = {"nic": nic, "assign": assign(entry, nic, online, hints_of(host, nic))}
    return out


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")   # the boot unit's journal (systemd captures stdout)


def main(argv: List[str], root: str = "/") -> int:
    """``python3 hpcnet_irq.py POLICY.json``: re-apply the policy by IRQ name (boot unit)."""
    host = BootHost(root)
    with open(host.p(argv[1]), encoding="utf-8") as f:
        entries = json.load(f)["interfaces"]
    rc = 0
    pinned: List[str] = []
    for entry in entries:
        try:
            planned = plan_all(host, [entry])[entry["interface"]]
        except ValueError as e:
            _say("hpcnet-rdma-irq: %s: %s" % (entry["interface"], e))
            rc = 1
            continue
        for name, cpus in sorted(planned["assign"].items()):
            try:
                write_value(host, name, cpus)
                pinned.append(name)
                _say("hpcnet-rdma-irq: %s -> %s" % (name, cpus))
            except Exception as e:  # report and go on: one refused IRQ must not stop the rest
                _say("hpcnet-rdma-irq: %s: %s" % (name, e))
    try:
        host.write_run(RUN_BANNED, "".join(n + "\n" for n in sorted(pinned)))
    except OSError as e:
        _say("hpcnet-rdma-irq: %s: %s" % (RUN_BANNED, e))
        rc = 1
    return rc


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
