# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The planner of nic_tuning (pure): validate everything, then plan the runtime ``nic:`` keys (MTU
changes ordered so a stacked device never exceeds its lower device) and the ``.link`` files.
"""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _files
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Plan
from ansible_collections.hpcnet.rdma.plugins.module_utils.nic._domain import current_value
from ansible_collections.hpcnet.rdma.plugins.module_utils.nic._guard import STACKED, ManagementPath, check_stack, guard
from ansible_collections.hpcnet.rdma.plugins.module_utils.nic._linkfile import DRIVER_LINK_FILE, LINK_FILE, match_lines, render_link
from ansible_collections.hpcnet.rdma.plugins.module_utils.nic._select import absent_values, desired_values

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional, Tuple


def _depth(name: str, net: Dict[str, Dict[str, Any]]) -> int:
    """How many stacked devices (VLAN on macvlan on NIC: 2) sit under ``name``."""
    depth, seen = 0, set()
    while name in net and net[name].get("kind") in STACKED and net[name].get("link") in net and name not in seen:
        seen.add(name)
        name = net[name]["link"]
        depth += 1
    return depth


def _order_mtu_changes(p: Plan, net: Dict[str, Dict[str, Any]]) -> Plan:
    """The same plan with its MTU changes (in the places they hold) reordered so a stacked
    device never exceeds its lower device, neither while applying nor while rolling back in
    reverse: decreases first, topmost device first; then increases, lowest device first."""
    changes = list(p)
    slots = [i for i, c in enumerate(changes) if c.key.startswith("nic:") and c.key.endswith(":mtu")]

    def rank(c: Any) -> Tuple[int, int]:
        depth = _depth(c.key.split(":")[1], net)
        return (0, -depth) if c.after < c.before else (1, depth)

    ordered = sorted((changes[i] for i in slots), key=rank)
    for i, c in zip(slots, ordered):
        changes[i] = c
    out = Plan()
    for c in changes:
        out.add(c.key, c.before, c.after)
    return out


def _add_link_file(p: Plan, previous: Dict[str, Any], link_files: Any, driver_files: Dict[str, Any],
                   who: Tuple[str, str, Dict[str, Any]], values: Dict[str, Any], journal_dir: str,
                   lines: List[str], driver: Optional[str]) -> None:
    """Plan the ``.link`` file of one selection - ``who``: (its label, the interface name the file
    is named after, what was observed of it) - or fold it into its driver's file (match: driver)."""
    label, ifname, obs = who
    if driver:
        _driver_file(driver_files, driver, label, lines, values)
        return
    path = LINK_FILE.format(ifname=ifname)
    before = link_files.get(path)
    previous["file:" + path] = before
    p.add("file:" + path, before, _files.owned(render_link(ifname, obs, values, journal_dir, lines)))


def plan(chosen: Dict[str, Dict[str, Any]], observed: Dict[str, Dict[str, Any]], mode: str, cap: bool,
         management: Any, allow_management: bool, link_files: Dict[str, Any],
         journal_dir: str, net: Optional[Dict[str, Dict[str, Any]]] = None,
         allow_low_mtu: bool = False, absent: Optional[Dict[str, Dict[str, Any]]] = None,
         match: str = "auto") -> Dict[str, Any]:
    """Validate everything, then plan runtime keys and .link files; raises ValueError first.

    ``management``: a :class:`ManagementPath`, or a list of interface names that carry the
    connection.  ``net``: every interface of the node (:func:`read_network`) for the stacking
    (defaults to ``observed``).  ``absent``: the selections :func:`select` found no interface
    for (mode persist only): a .link file each, from the entry alone.  ``match``: how a .link
    file matches its device where the entry does not say (:func:`match_lines`)."""
    if not isinstance(management, ManagementPath):
        names = list(management)
        management = ManagementPath(required=False)
        for name in names:
            management.protect(name, "holds the connection's address")
    net = observed if net is None else net
    runtime = mode in ("runtime", "both")
    capped: List[Dict[str, Any]] = []
    wanted = dict((n, desired_values(n, chosen[n], observed[n], cap, capped, allow_low_mtu, runtime))
                  for n in sorted(chosen))
    drags = check_stack(wanted, observed, net) if runtime else {}
    p = Plan()
    previous: Dict[str, Any] = {}
    diffs: Dict[str, List[str]] = {}
    driver_files: Dict[str, Tuple[List[str], Dict[str, Any], str]] = {}
    for ifname in sorted(wanted):
        values = wanted[ifname]
        if runtime:
            changed = [s for s in values if current_value(observed[ifname], s) != values[s]]
            if changed:
                diffs[ifname] = changed
            # adaptive coalescing first: drivers ignore fixed usecs while adaptive is on
            for setting in sorted(values, key=lambda s: (not s.startswith("coalesce.adaptive"), s)):
                key = "nic:%s:%s" % (ifname, setting)
                before = current_value(observed[ifname], setting)
                previous[key] = before
                if setting == "mtu":
                    for upper, upper_mtu, _relation in drags.get(ifname, []):
                        previous["nic:%s:mtu" % upper] = upper_mtu
                        p.add("nic:%s:mtu" % upper, upper_mtu, values["mtu"])
                p.add(key, before, values[setting])
        if mode in ("persist", "both"):
            lines, driver = match_lines(ifname, observed[ifname], *chosen[ifname].get("match", (match, None)),
                                        persist_only=not runtime)
            _add_link_file(p, previous, link_files, driver_files, (ifname, ifname, observed[ifname]), values,
                           journal_dir, lines, driver)
    for label in sorted(absent or {}):
        settings = absent[label]
        values = absent_values(label, settings, allow_low_mtu)
        wanted[label] = values
        kind, value = settings["selector"], settings["value"]
        how, how_value = settings.get("match", (match, None))
        if kind == "driver" and how != "driver":
            raise ValueError("interfaces[%d] (driver=%s): no interface of driver %s is present here, so its .link "
                             "file can only match by driver: set match: driver" % (settings["index"], value, value))
        lines, driver = match_lines(value if kind == "name" else label, {}, how,
                                    how_value if how_value is not None or kind == "name" else value,
                                    persist_only=not runtime)
        _add_link_file(p, previous, link_files, driver_files, (label, value, {}), values, journal_dir, lines, driver)
    for driver in sorted(driver_files):
        lines, values, _who = driver_files[driver]
        path = DRIVER_LINK_FILE.format(driver=driver)
        before = link_files.get(path)
        previous["file:" + path] = before
        p.add("file:" + path, before, _files.owned(render_link(driver, {}, values, journal_dir, lines,
                                                               driver_wide=True)))
    guard(diffs, management, allow_management)
    return {"plan": _order_mtu_changes(p, net), "previous": previous, "capped": capped, "desired": wanted,
            "dragged": dict((n, [u[0] for u in d]) for n, d in drags.items())}


def _driver_file(files: Dict[str, Tuple[List[str], Dict[str, Any], str]], driver: str, who: str,
                 lines: List[str], values: Dict[str, Any]) -> None:
    """One .link file per driver (match: driver): every interface it covers must want the same."""
    if driver in files and files[driver][1] != values:
        raise ValueError("interfaces: %s and %s both match by driver %s, which persists one .link file for every "
                         "NIC of the driver, but want different settings (%s, then %s); give them the same values, "
                         "or match one of them by path or original_name"
                         % (files[driver][2], who, driver, _show(files[driver][1]), _show(values)))
    files.setdefault(driver, (lines, values, who))


def _show(values: Dict[str, Any]) -> str:
    return ", ".join("%s=%s" % (k, values[k]) for k in sorted(values)) or "nothing"
