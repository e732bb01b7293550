# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which interfaces an ``interfaces`` list selects, with what settings, and the values each ends
with, validated against what the NIC offers (pure): :func:`select`,
:func:`drop_unsupported_defaults`, :func:`desired_values`, :func:`absent_values` (a selection that
is not present here, a bake) and the MTU floors of :func:`check_mtu_floor`.
"""
from __future__ import annotations

import fnmatch
import ipaddress

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _ethtool
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._spec import SELECTORS
from ansible_collections.hpcnet.rdma.plugins.module_utils.nic._domain import GROUPS, KNOBS, fields

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional, Tuple

# Selectors that can plan a .link file for an interface that is not present (a bake).
ABSENT_SELECTORS = ("name", "driver")

# Below this an IPv4 host need not accept a datagram (RFC 791); below IPV6_MIN_MTU the kernel
# removes the interface's IPv6 configuration (RFC 8200: 1280 is IPv6's minimum link MTU).
IPV4_MIN_MTU = 576
IPV6_MIN_MTU = 1280


# ---------------------------------------------------------------------- selection (pure)
def _selector(entry: Dict[str, Any], index: int) -> Tuple[str, str]:
    given = [s for s in SELECTORS if entry.get(s)]
    if len(given) != 1:
        raise ValueError("interfaces[%d]: give exactly one of %s (got %s)"
                         % (index, ", ".join(SELECTORS), ", ".join(given) or "none"))
    return given[0], str(entry[given[0]])


def _holds_subnet(obs: Dict[str, Any], net: Any) -> bool:
    for a in obs.get("addresses", []):
        try:
            if ipaddress.ip_address(a["local"]) in net:
                return True
        except ValueError:
            continue
    return False


def _fields(entry: Optional[Dict[str, Any]]) -> List[Tuple[str, str, Any]]:
    """(section, field, value) of every setting an entry gives; field "" for mtu."""
    out: List[Tuple[str, str, Any]] = []
    for section in ("mtu",) + GROUPS:
        v = (entry or {}).get(section)
        if v is None:
            continue
        if section == "mtu":
            out.append(("mtu", "", v))
        else:
            out.extend((section, k, x) for k, x in sorted(v.items()) if x is not None)
    return out


def _merge(into: Dict[str, Any], entry: Optional[Dict[str, Any]]) -> None:
    for section, field, value in _fields(entry):
        if section == "mtu":
            into["mtu"] = value
        else:
            into.setdefault(section, {})[field] = value


def _conflicts(ifname: str, setters: Dict[str, Tuple[int, str]], index: int, kind: str, value: str,
               entry: Dict[str, Any], merged: Dict[str, Any]) -> None:
    """Raise when ``entry`` gives a setting of ``ifname`` another entry already gave differently.

    A ``name`` entry may refine what earlier glob/driver/subnet entries set (documented); any
    other pair of entries disagreeing is a mistake, named with both entries."""
    for section, field, wanted in _fields(entry):
        label = section if section == "mtu" else "%s.%s" % (section, field)
        earlier = setters.get(label)
        have = merged.get("mtu") if section == "mtu" else (merged.get(section) or {}).get(field)
        if earlier is not None and have != wanted and not (kind == "name" and earlier[1].split("=", 1)[0] != "name"):
            raise ValueError("interfaces[%d] (%s) and interfaces[%d] (%s=%s) both select %s with a different %s "
                             "(%s, then %s); make them agree, or select %s by name to override the broader entry"
                             % (earlier[0], earlier[1], index, kind, value, ifname, label, have, wanted, ifname))
        setters[label] = (index, "%s=%s" % (kind, value))


def _set_match(target: str, settings: Dict[str, Any], entry: Dict[str, Any], index: int, kind: str,
               value: str) -> None:
    """Record the entry's ``match``/``match_value`` on one interface's settings; an entry selecting
    by name overrides a broader entry's, two other entries disagreeing is an error naming both."""
    if not entry.get("match") and not entry.get("match_value"):
        return
    mine = (entry.get("match") or "auto", entry.get("match_value"))
    earlier = settings.get("match_by")
    if earlier is not None and settings["match"] != mine and not (kind == "name" and earlier[1] != "name"):
        raise ValueError("interfaces[%d] (%s=%s) and interfaces[%d] (%s=%s) give %s a different match "
                         "(%s, then %s); make them agree, or select it by name to override the broader entry"
                         % (earlier[0], earlier[1], earlier[2], index, kind, value, target,
                            "/".join(str(x) for x in settings["match"] if x), "/".join(str(x) for x in mine if x)))
    settings["match"] = mine
    settings["match_by"] = (index, kind, value)


def select(entries: List[Dict[str, Any]], links: Dict[str, Dict[str, Any]],
           defaults: Optional[Dict[str, Any]] = None,
           absent: Optional[Dict[str, Dict[str, Any]]] = None) -> Dict[str, Dict[str, Any]]:
    """Interface name → merged settings: ``defaults``, then each selecting entry in order.

    An entry selecting by name overrides, per setting, what earlier glob/driver/subnet entries
    set; two entries that otherwise give one interface's setting different values are an error
    naming both.

    ``absent`` (persist-only mode, a bake): a dict that receives, instead of an error, each
    ``name`` or ``driver`` selection that matches no interface here, keyed ``name=X`` /
    ``driver=X`` with its merged settings: its .link file is planned from the entry alone.  A
    ``glob`` or ``subnet`` selection needs the interfaces themselves and stays an error."""
    chosen: Dict[str, Dict[str, Any]] = {}
    setters: Dict[str, Dict[str, Tuple[int, str]]] = {}
    explicit: Dict[str, set] = {}
    present = ", ".join("%s (%s)" % (n, links[n].get("driver") or "?") for n in sorted(links)) or "none"
    for i, entry in enumerate(entries):
        kind, value = _selector(entry, i)
        if kind == "name":
            names = [value] if value in links else []
            if not names and absent is None:
                raise ValueError("interfaces[%d].name: unknown interface %r; present: %s" % (i, value, present))
        elif kind == "glob":
            names = [n for n in sorted(links) if fnmatch.fnmatchcase(n, value)]
        elif kind == "driver":
            names = [n for n in sorted(links) if links[n].get("driver") == value]
        else:
            try:
                net = ipaddress.ip_network(value, strict=False)
            except ValueError:
                raise ValueError("interfaces[%d].subnet: %r is not an IPv4/IPv6 network (e.g. 10.0.0.0/24)"
                                 % (i, value))
            names = [n for n in sorted(links) if _holds_subnet(links[n], net)]
        if not names and absent is not None and kind in ABSENT_SELECTORS:
            label = "%s=%s" % (kind, value)
            if label not in absent:
                absent[label] = {"selected_by": [], "selector": kind, "value": value, "index": i}
                _merge(absent[label], defaults)
            _conflicts(label, setters.setdefault(label, {}), i, kind, value, entry, absent[label])
            absent[label]["selected_by"].append(label)
            _merge(absent[label], entry)
            _set_match(label, absent[label], entry, i, kind, value)
            continue
        if not names:
            raise ValueError("interfaces[%d]: selector %s=%r matched no interface; present: %s%s"
                             % (i, kind, value, present,
                                "" if absent is None else
                                " (in mode persist an interface that is not here can be selected by name or "
                                "driver, with match; glob and subnet need the interfaces themselves)"))
        for n in names:
            if n not in chosen:
                chosen[n] = {"selected_by": []}
                _merge(chosen[n], defaults)
            _conflicts(n, setters.setdefault(n, {}), i, kind, value, entry, chosen[n])
            chosen[n]["selected_by"].append("%s=%s" % (kind, value))
            _merge(chosen[n], entry)
            _set_match(n, chosen[n], entry, i, kind, value)
            explicit.setdefault(n, set()).update((sec, f) for sec, f, _v in _fields(entry))
    for n, settings in chosen.items():   # what only the defaults (a profile) give: skipped where unsupported
        settings["from_defaults"] = sorted(set((sec, f) for sec, f, _v in _fields(defaults)) - explicit[n])
    return chosen


def drop_unsupported_defaults(chosen: Dict[str, Dict[str, Any]],
                              observed: Dict[str, Dict[str, Any]]) -> List[Dict[str, str]]:
    """Remove from ``chosen`` every setting that only the defaults give and the interface's driver
    does not offer (its ethtool group or field is missing, or its maximum is 0): a profile applies
    where the NIC allows.  The same setting given in an interface entry stays, and is refused by
    :func:`desired_values` naming the driver.  Returns ``{interface, setting, reason}`` for each."""
    dropped = []
    for n in sorted(chosen):
        settings, obs = chosen[n], observed.get(n, {})
        driver = obs.get("driver") or "unknown"
        for section, field in settings.get("from_defaults", []):
            if section == "mtu":
                continue
            state = obs.get(section)
            if state is None:
                reason = "%s not supported by driver %s" % (section, driver)
            elif section == "coalesce" and state.get(field) is None:
                reason = "coalesce.%s not supported by driver %s" % (field, driver)
            elif section != "coalesce" and not state["max"].get(field):
                reason = "%s.%s not supported by driver %s (maximum %s)" % (
                    section, field, driver, state["max"].get(field))
            else:
                continue
            settings[section].pop(field, None)
            if not settings[section]:
                del settings[section]
            dropped.append({"interface": n, "setting": "%s.%s" % (section, field), "reason": reason})
    return dropped


# ---------------------------------------------------------------------- wanted values (pure)
def _limit(ifname: str, what: str, value: int, maximum: Optional[int], cap: bool,
           capped: List[Dict[str, Any]]) -> int:
    if maximum is None or value <= maximum:
        return value
    if cap:
        capped.append({"interface": ifname, "setting": what, "requested": value, "applied": maximum})
        return maximum
    raise ValueError("interfaces: %s %s=%d is above the hardware maximum %d; use %d or less, "
                     "or cap: true" % (ifname, what, value, maximum, maximum))


def _ipv6_addresses(obs: Dict[str, Any]) -> List[str]:
    return [a["local"] for a in obs.get("addresses", []) if a.get("family") == "inet6"]


def check_mtu_floor(ifname: str, mtu: int, obs: Dict[str, Any], allow_low_mtu: bool, runtime: bool,
                    relation: str = "") -> None:
    """Refuse an MTU the interface's protocols cannot live with: below 1280 where IPv6 is
    configured (the kernel would drop the interface's IPv6 addresses and settings, and a
    rollback would not bring them back), below 576 unless ``allow_low_mtu``.

    ``obs`` is the interface whose IPv6 is checked: ``ifname`` itself, or a device stacked on
    it (``relation`` says how) that the kernel lowers with it."""
    if mtu < IPV4_MIN_MTU and not allow_low_mtu:
        raise ValueError("interfaces: %s mtu=%d is below %d, the smallest datagram every IPv4 host must accept "
                         "(RFC 791); set allow_low_mtu: true if that is really meant" % (ifname, mtu, IPV4_MIN_MTU))
    v6 = _ipv6_addresses(obs) if runtime else []
    if mtu < IPV6_MIN_MTU and v6:
        raise ValueError("interfaces: %s mtu=%d is below %d, the IPv6 minimum MTU (RFC 8200), and %s%s has IPv6 "
                         "configured (%s): the kernel would drop its IPv6 addresses and settings. Disable IPv6 on "
                         "%s first (net.ipv6.conf.%s.disable_ipv6 = 1) or use %d or more"
                         % (ifname, mtu, IPV6_MIN_MTU, obs["name"], relation, ", ".join(v6), obs["name"],
                            obs["name"], IPV6_MIN_MTU))


def desired_values(ifname: str, settings: Dict[str, Any], obs: Dict[str, Any],
                   cap: bool, capped: List[Dict[str, Any]], allow_low_mtu: bool = False,
                   runtime: bool = True) -> Dict[str, Any]:
    """Validate one interface's wanted settings against its capabilities: setting → value."""
    out: Dict[str, Any] = {}
    driver = obs.get("driver") or "unknown"
    if settings.get("mtu") is not None:
        mtu = settings["mtu"]
        lo = obs.get("min_mtu") or 68
        hi = obs.get("max_mtu") or 65535
        if not lo <= mtu <= hi:
            raise ValueError("interfaces: %s mtu=%d is outside what the device allows (%d..%d)"
                             % (ifname, mtu, lo, hi))
        check_mtu_floor(ifname, mtu, obs, allow_low_mtu, runtime)
        out["mtu"] = mtu
    for section in ("rings", "channels"):
        wanted = settings.get(section) or {}
        if not wanted:
            continue
        state = obs.get(section)
        if state is None:
            raise ValueError("interfaces: %s: %s not supported by driver %s (ethtool %s: Operation not "
                             "supported)" % (ifname, section, driver, _ethtool.ETHTOOL.formats[section][0]))
        for knob in KNOBS:
            field = knob.field
            if knob.group != section or field not in wanted:
                continue
            value = wanted[field]
            floor = 1 if section == "rings" else 0
            if value < floor:
                raise ValueError("interfaces: %s %s.%s=%d is invalid; allowed: %d..%s"
                                 % (ifname, section, field, value, floor, state["max"].get(field)))
            maximum = state["max"].get(field)
            if not maximum:
                raise ValueError("interfaces: %s %s.%s is not supported by driver %s (maximum %s)"
                                 % (ifname, section, field, driver, maximum))
            out[knob.name] = _limit(ifname, "%s.%s" % (section, field), value, maximum, cap, capped)
    wanted = settings.get("coalesce") or {}
    for field in fields("coalesce", "int"):
        if wanted.get(field) is not None and wanted[field] < 0:
            raise ValueError("interfaces: %s coalesce.%s=%d is negative; allowed: 0 or more"
                             % (ifname, field, wanted[field]))
    if wanted:
        state = obs.get("coalesce")
        if state is None:
            raise ValueError("interfaces: %s: coalesce not supported by driver %s (ethtool -c: Operation "
                             "not supported)" % (ifname, driver))
        for field in fields("coalesce"):
            if field not in wanted:
                continue
            value = wanted[field]
            if state.get(field) is None:
                raise ValueError("interfaces: %s coalesce.%s is not supported by driver %s"
                                 % (ifname, field, driver))
            out["coalesce." + field] = value
    return out


def absent_values(label: str, settings: Dict[str, Any], allow_low_mtu: bool = False) -> Dict[str, Any]:
    """Validate the settings of a selection that is not present here (a bake): only what holds for
    every NIC (ranges); its driver's limits are checked by nobody until udev applies the file at
    boot (systemd-udevd logs what the device refuses, and applies the rest)."""
    out: Dict[str, Any] = {}
    if settings.get("mtu") is not None:
        mtu = settings["mtu"]
        if not 68 <= mtu <= 65535:
            raise ValueError("interfaces: %s mtu=%d is outside 68..65535" % (label, mtu))
        check_mtu_floor(label, mtu, {"name": label}, allow_low_mtu, False)
        out["mtu"] = mtu
    for section in ("rings", "channels"):
        wanted = settings.get(section) or {}
        floor = 1 if section == "rings" else 0
        for knob in KNOBS:
            field = knob.field
            if knob.group != section or wanted.get(field) is None:
                continue
            if wanted[field] < floor:
                raise ValueError("interfaces: %s %s.%s=%d is invalid; allowed: %d or more"
                                 % (label, section, field, wanted[field], floor))
            out[knob.name] = wanted[field]
    wanted = settings.get("coalesce") or {}
    for field in fields("coalesce"):
        if wanted.get(field) is None:
            continue
        if field in fields("coalesce", "int") and wanted[field] < 0:
            raise ValueError("interfaces: %s coalesce.%s=%d is negative; allowed: 0 or more"
                             % (label, field, wanted[field]))
        out["coalesce." + field] = wanted[field]
    return out
