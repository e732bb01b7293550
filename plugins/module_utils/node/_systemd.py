# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""systemd's tools: the argv tables of ``systemctl`` and ``udevadm``.

Their output is one word (``is-enabled``, ``is-active``), ``KEY=value`` blocks (``show``) or a listing
searched for a name (``list-jobs``): the callers (``_service``, ``_rdma``, ``_rdmaplan``) read it and judge the exit
codes themselves, so there are no parsers here.  ``daemon-reload`` makes systemd load the unit files
as they are on disk (after one was written or removed).  ``--`` ends systemctl's options before a
unit name, so no name is ever read as an option.  As root, units' properties are read over systemd's
private bus without systemctl (:func:`unit_properties`, node/_dbus), as systemctl itself reads them.
"""
from __future__ import annotations

import os

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _dbus
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._runner import Tool

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Dict, List, Optional, Sequence

# The unit properties services/_domain.read_values asks (of systemd's bus, else of ``systemctl show``)
STATE_PROPERTIES = ("Id", "UnitFileState", "ActiveState")
SYSTEMCTL = Tool("systemctl", {
    "is_enabled": ["is-enabled", "--", "{unit}"],
    "is_active": ["is-active", "--", "{unit}"],
    "enable": ["enable", "--", "{unit}"],
    "disable": ["disable", "--", "{unit}"],
    "start": ["start", "--", "{unit}"],
    "stop": ["stop", "--", "{unit}"],
    "try_restart": ["try-restart", "--", "{unit}"],
    "daemon_reload": ["daemon-reload"],
    "list_jobs": ["list-jobs", "--no-legend", "--plain"],
    # one block per unit, in the order given, blank-line separated
    "show_states": ["show", "--property=" + ",".join(STATE_PROPERTIES), "--", "{*units}"],
})
UDEVADM = Tool("udevadm", {
    "settle": ["settle", "--timeout={timeout:d}"],
    "reload": ["control", "--reload"],
    # the RDMA character devices: uverbs* (infiniband_verbs), umad*/issm* (infiniband_mad)
    "trigger_rdma_subsystems": ["trigger", "--action=change", "--subsystem-match=infiniband_verbs",
                                "--subsystem-match=infiniband_mad"],
    "trigger_sysname": ["trigger", "--action=change", "--sysname-match={sysname}"],
})


def systemd_running(host: Host) -> bool:
    """systemd is the running init (its runtime directory exists): units can be asked and restarted."""
    return host.isdir("/run/systemd/system")


def try_restart(host: Host, unit: str) -> None:
    """Restart ``unit`` if it is running (after its configuration changed); nothing without systemd."""
    if systemd_running(host):
        SYSTEMCTL.call(host, "try_restart", unit=unit)


def unit_properties(host: Host, units: List[str], names: Sequence[str]) -> Optional[Dict[str, Dict[str, str]]]:
    """{unit: {property: value}} of the ``org.freedesktop.systemd1.Unit`` string properties ``names``, asked
    of systemd on its private bus - what ``systemctl show --property=...`` prints, without starting
    systemctl (0.2-0.4 s of the health check on a lab VM).  None when it cannot be asked that way (not
    root: the private bus is root's; no socket; an answer this does not take): the caller asks systemctl."""
    if not units or os.geteuid() != 0:
        return None
    payload, asked = _dbus.unit_properties_request(units, names)
    answers = _dbus.Answers(len(asked))
    try:
        host.converse(_dbus.PRIVATE, _dbus.auth(os.geteuid()), _dbus.BEGIN + payload, answers.feed)
        return _dbus.unit_properties_answer(asked, answers.messages)
    except (HostError, _dbus.DBusError):
        return None
