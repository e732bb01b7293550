# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""iproute2's ``dcb``: its argv table and the parsers of ``dcb -j pfc|app|apptrust show``.

``dcb -j`` prints one JSON object per command (dcb/dcb_pfc.c, dcb_app.c, dcb_apptrust.c):
booleans for on/off values (json_print's print_on_off), arrays for the per-priority maps.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from ansible_collections.hpcnet.rdma.plugins.module_utils._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils._parsing import (
    ParseError, is_not_supported, load_json_object)
from ansible_collections.hpcnet.rdma.plugins.module_utils._runner import Failure, Tool

_PRIOS = 8   # IEEE 802.1p priorities


def _json_bool(value: Any, tool: str, field: str) -> bool:
    # dcb prints booleans; accept "on"/"off" too (print_on_off before iproute2 5.11 era forks)
    if isinstance(value, bool):
        return value
    if value in ("on", "off"):
        return value == "on"
    raise ParseError("%s: %s holds %r, expected true/false" % (tool, field, value))


def _json_uint(value: Any, tool: str, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ParseError("%s: %s holds %r, expected an unsigned integer" % (tool, field, value))
    return value


def parse_dcb_pfc_json(text: str) -> Dict[str, Any]:
    """Parse ``dcb -j pfc show dev IF``.

    Returns ``{"pfc_cap": int|None, "macsec_bypass": bool|None, "delay": int|None,
    "enabled": [priorities with PFC on, ascending]}``.  ``prio_pfc`` must be 8 booleans.
    """
    tool = "dcb pfc show"
    data = load_json_object(text, tool)
    arr = data.get("prio_pfc")
    if not isinstance(arr, list) or len(arr) != _PRIOS:
        raise ParseError("%s: 'prio_pfc' is missing or not a list of %d values" % (tool, _PRIOS))
    enabled = [i for i, v in enumerate(arr) if _json_bool(v, tool, "prio_pfc[%d]" % i)]
    return {
        "pfc_cap": _json_uint(data["pfc_cap"], tool, "pfc_cap") if "pfc_cap" in data else None,
        "macsec_bypass": _json_bool(data["macsec_bypass"], tool, "macsec_bypass")
        if "macsec_bypass" in data else None,
        "delay": _json_uint(data["delay"], tool, "delay") if "delay" in data else None,
        "enabled": enabled,
    }


def _pairs(data: Dict[str, Any], field: str, tool: str, max_key: int) -> Dict[int, List[int]]:
    out = {}  # type: Dict[int, List[int]]
    items = data.get(field, [])
    if not isinstance(items, list):
        raise ParseError("%s: %r is not a list" % (tool, field))
    for item in items:
        if not isinstance(item, list) or len(item) != 2:
            raise ParseError("%s: %s entry %r is not a [key, priority] pair" % (tool, field, item))
        key = _json_uint(item[0], tool, field)
        prio = _json_uint(item[1], tool, field)
        if key > max_key or prio >= _PRIOS:
            raise ParseError("%s: %s entry %r is out of range (key 0..%d, priority 0..7)"
                             % (tool, field, item, max_key))
        out.setdefault(key, [])
        if prio not in out[key]:
            out[key].append(prio)
    return dict((k, sorted(v)) for k, v in out.items())


def parse_dcb_app_json(text: str) -> Dict[str, Any]:
    """Parse ``dcb -j app show dev IF`` (the IEEE APP table).

    Returns ``{"dscp_prio": {dscp: [priorities]}, "default_prio": [priorities],
    "ethtype_prio": {ethertype: [priorities]}, "stream_port_prio": {...}, "dgram_port_prio": {...},
    "port_prio": {...}}``.  The kernel's table may hold several priorities for one key, so every
    value is a sorted list.  An empty table prints ``{}`` and parses to empty maps.
    """
    tool = "dcb app show"
    data = load_json_object(text, tool)
    default = data.get("default_prio", [])
    if not isinstance(default, list):
        raise ParseError("%s: 'default_prio' is not a list" % tool)
    out = {
        "dscp_prio": _pairs(data, "dscp_prio", tool, 63),
        "default_prio": sorted(set(_json_uint(p, tool, "default_prio") for p in default)),
    }  # type: Dict[str, Any]
    for field in ("ethtype_prio", "stream_port_prio", "dgram_port_prio", "port_prio"):
        out[field] = _pairs(data, field, tool, 0xffff)
    return out


def parse_dcb_apptrust_json(text: str) -> List[str]:
    """Parse ``dcb -j apptrust show dev IF`` (iproute2 6.3+): the trusted selectors, in order
    (``["dscp", "pcp"]``); ``[]`` when the driver trusts none."""
    tool = "dcb apptrust show"
    data = load_json_object(text, tool)
    order = data.get("order", [])
    if not isinstance(order, list) or not all(isinstance(s, str) for s in order):
        raise ParseError("%s: 'order' is not a list of selector names" % tool)
    return list(order)


# --------------------------------------------------------------------------- the tool
def _show_check(rc: int, out: str, err: str) -> Optional[Failure]:
    """A show fails on a non-zero exit; an iproute2 without the object (apptrust before 6.3)
    answers 'Object "apptrust" is unknown', which counts as not supported like the driver's EOPNOTSUPP."""
    if rc == 0:
        return None
    msg = (err or out).strip()
    return Failure(msg, is_not_supported(msg) or "is unknown" in msg)


def _set_check(rc: int, out: str, err: str) -> Optional[Failure]:
    """A set fails on a non-zero exit or on anything on stderr: ``dcb app replace`` reports errors
    with exit code 0."""
    msg = (err or "").strip()
    if rc == 0 and not msg:
        return None
    text = msg or out.strip()
    return Failure(text, is_not_supported(text))


DCB = Tool("dcb", {
    "pfc": ["-j", "pfc", "show", "dev", "{ifname}"],
    "app": ["-j", "app", "show", "dev", "{ifname}"],
    "apptrust": ["-j", "apptrust", "show", "dev", "{ifname}"],
    "set_pfc": ["pfc", "set", "dev", "{ifname}", "prio-pfc", "{*prios}"],
    "set_apptrust": ["apptrust", "set", "dev", "{ifname}", "order", "{*order}"],
    "add_app": ["app", "add", "dev", "{ifname}", "dscp-prio", "{*pairs}"],
    "del_app": ["app", "del", "dev", "{ifname}", "dscp-prio", "{*pairs}"],
    "replace_app": ["app", "replace", "dev", "{ifname}", "dscp-prio", "{*pairs}"],
}, parsers={
    "pfc": parse_dcb_pfc_json,
    "app": parse_dcb_app_json,
    "apptrust": parse_dcb_apptrust_json,
}, checks={
    "pfc": _show_check, "app": _show_check, "apptrust": _show_check,
    "set_pfc": _set_check, "set_apptrust": _set_check, "add_app": _set_check, "del_app": _set_check,
    "replace_app": _set_check,
})


def show(host: Host, obj: str, ifname: str) -> Any:
    """Parsed ``dcb -j OBJ show dev IF`` (pfc, app, apptrust); NotSupported when the driver (or
    this iproute2) lacks it."""
    return DCB.call(host, obj, ifname=ifname)
