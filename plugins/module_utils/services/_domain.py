# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ``service`` domain: whether a systemd unit runs and starts at boot (``service:UNIT``).

Value: ``{"active": bool, "enabled": "enabled"|"disabled"|...}``, or None when the unit is not
installed or the node does not run systemd (containers): nothing to manage then.  A unit whose file
was removed while it still runs (systemd keeps a loaded unit until a daemon-reload) is
``{"active": True, "enabled": "not-found"}``: it can still be stopped, and is then gone.

One write path for both directions: ``service_state`` stops, disables, starts and enables through
:func:`write_value`, and a rollback writes the journal's original through it too, so it starts what
was stopped, stops what was started, and so on.  A rollback restores keys newest first, so a unit
started after its unit file was written is stopped (and disabled) before that file is removed;
should the file be gone first all the same, the unit is stopped as a loaded unit and systemd reloaded.
"""
from __future__ import annotations

import sys

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._systemd import STATE_PROPERTIES, SYSTEMCTL, systemd_running, unit_properties

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional


NOT_FOUND = "not-found"
# boot states in which a unit starts at boot by its own [Install] links
AT_BOOT = ("enabled", "enabled-runtime")


def read_value(host: Host, unit: str) -> Optional[Dict[str, Any]]:
    if not systemd_running(host):
        return None
    _rc, enabled, _err = SYSTEMCTL.run(host, "is_enabled", unit=unit)
    enabled = enabled.strip() or NOT_FOUND
    _rc, active, _err = SYSTEMCTL.run(host, "is_active", unit=unit)
    running = active.strip() in ("active", "activating", "reloading")
    if enabled == NOT_FOUND and not running:
        return None
    return {"active": running, "enabled": enabled}


# ``systemctl show``'s UnitFileState that is-enabled prints as the same word; any other (a SysV script's
# or a generated unit's, a unit file that is gone: empty), and a name whose Id is another unit (an alias:
# is-enabled says "alias", show the target's state), is asked as read_value asks, unit by unit.  Checked
# on a lab VM against is-enabled/is-active for all of its 131 unit files (12 masked, 7 aliases among them).
SHOWN_STATES = ("enabled", "enabled-runtime", "disabled", "static", "masked", "masked-runtime", "linked",
                "linked-runtime", "indirect")


def _state(block: str, key: str) -> str:
    for line in block.splitlines():
        if line.startswith(key + "="):
            return line[len(key) + 1:].strip()
    return ""


def read_values(host: Host, units: List[str]) -> Dict[str, Any]:
    """read_value of each unit with one question for all of them (status and the health check read every
    journaled unit: is-enabled and is-active were two runs of ~100 ms each per unit on a lab VM): as root,
    systemd's private bus (node/_systemd.unit_properties, no tool started); else one ``systemctl show``."""
    if not systemd_running(host):
        return dict((u, None) for u in units)
    props = unit_properties(host, units, STATE_PROPERTIES)
    if props is None:
        try:
            rc, text, _err = SYSTEMCTL.run(host, "show_states", units=units)
        except HostError:
            rc, text = 1, ""
        blocks = text.strip("\n").split("\n\n") if rc == 0 else []
        props = dict((unit, dict((key, _state(blocks[i], key)) for key in STATE_PROPERTIES))
                     for i, unit in enumerate(units) if len(blocks) == len(units))
    out: Dict[str, Any] = {}
    for unit in units:
        shown = props.get(unit) or {}
        enabled = shown.get("UnitFileState", "")
        if enabled in SHOWN_STATES and shown.get("Id") == unit:
            out[unit] = {"active": shown.get("ActiveState") in ("active", "activating", "reloading"), "enabled": enabled}
            continue
        try:
            out[unit] = read_value(host, unit)
        except HostError as e:
            out[unit] = e
    return out


def write_value(host: Host, unit: str, value: Optional[Dict[str, Any]]) -> None:
    """Bring ``unit`` to ``value``: boot state first (``enable``/``disable``), then the running state
    (``start``/``stop``).  A unit that is not installed already is every state that neither runs nor
    starts at boot (:func:`same`); a loaded unit whose file is gone is stopped, then systemd reloads."""
    if value is None:
        return
    current = read_value(host, unit)
    if same(current, value):
        return
    if current is None:
        raise HostError("service %s is not installed (or systemd is not running)" % unit)
    orphan = current["enabled"] == NOT_FOUND
    if orphan and value["enabled"] not in AT_BOOT:
        # best effort: systemd >= 256 removes the [Install] links of a unit whose file is gone, older
        # ones refuse ("Unit file ... does not exist"); the read-back below judges the result
        SYSTEMCTL.run(host, "disable", unit=unit)
    elif current["enabled"] != value["enabled"] and value["enabled"] in ("enabled", "disabled"):
        SYSTEMCTL.call(host, "enable" if value["enabled"] == "enabled" else "disable", unit=unit)
    if current["active"] != value["active"]:
        SYSTEMCTL.call(host, "start" if value["active"] else "stop", unit=unit)
    if orphan:
        daemon_reload(host)     # systemd forgets the stopped unit whose file is gone


def same(actual: Any, wanted: Any) -> bool:
    """Equal states; and a unit that is not installed (None) is the same as any state that neither
    runs nor starts at boot (a rollback that stops a unit and then removes its file)."""
    if actual is None and isinstance(wanted, dict):
        return not wanted.get("active") and wanted.get("enabled") not in AT_BOOT
    return actual == wanted


def daemon_reload(host: Host) -> None:
    """``systemctl daemon-reload``: systemd loads the unit files as they are on disk now."""
    if systemd_running(host):
        SYSTEMCTL.call(host, "daemon_reload")


# the domain contract (_domain.Domain): this file's read_value, write_value and same
DOMAINS = {"service": sys.modules[__name__]}
