# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ``service`` domain: whether a systemd unit runs and starts at boot (``service:UNIT``).

Value: ``{"active": bool, "enabled": "enabled"|"disabled"|...}``, or None when the unit is not
installed or the node does not run systemd (containers): nothing to manage then.
"""
from __future__ import annotations

import sys
from typing import Any, Dict, Optional

from ansible_collections.hpcnet.rdma.plugins.module_utils._host import Host, HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils._systemd import SYSTEMCTL


def systemd_running(host: Host) -> bool:
    return host.isdir("/run/systemd/system")


def read_value(host: Host, unit: str) -> Optional[Dict[str, Any]]:
    if not systemd_running(host):
        return None
    _rc, enabled, _err = SYSTEMCTL.run(host, "is_enabled", unit=unit)
    enabled = enabled.strip() or "not-found"
    if enabled == "not-found":
        return None
    _rc, active, _err = SYSTEMCTL.run(host, "is_active", unit=unit)
    return {"active": active.strip() in ("active", "activating", "reloading"), "enabled": enabled}


def write_value(host: Host, unit: str, value: Optional[Dict[str, Any]]) -> None:
    if value is None:
        return
    current = read_value(host, unit)
    if current is None:
        raise HostError("service %s is not installed (or systemd is not running)" % unit)
    if current["enabled"] != value["enabled"] and value["enabled"] in ("enabled", "disabled"):
        SYSTEMCTL.call(host, "enable" if value["enabled"] == "enabled" else "disable", unit=unit)
    if current["active"] != value["active"]:
        SYSTEMCTL.call(host, "start" if value["active"] else "stop", unit=unit)


def same(actual: Any, wanted: Any) -> bool:
    return actual == wanted


# the domain contract (_domain.Domain): this file's read_value, write_value and same
DOMAINS = {"service": sys.modules[__name__]}


def try_restart(host: Host, unit: str) -> None:
    """Restart ``unit`` if it is running (after its configuration changed)."""
    if systemd_running(host):
        SYSTEMCTL.call(host, "try_restart", unit=unit)
