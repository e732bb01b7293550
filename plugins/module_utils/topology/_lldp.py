# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lldpd's ``lldpcli -f json show neighbors details``: the argv table and the pure parser.

lldpd's JSON writer prints a list only where there are several of a thing and the thing itself
where there is one, so every level comes in two shapes:

* ``lldp.interface`` is ``{"eth0": {...}}`` for one neighbour and a list of one-key objects
  ``[{"eth0": {...}}, {"eth1": {...}}]`` for several (an interface with two neighbours appears twice);
* ``chassis`` is keyed by the neighbour's SysName (``{"leaf1": {"id": ...}}``), or is the
  chassis itself when the neighbour sends no SysName;
* ``capability`` and ``mgmt-ip`` are a list, or one object / one string.

The TTL moved between versions: lldpd before 1.0 prints it in the chassis, 1.0 and later in the
port.  No neighbour at all is ``{"lldp": {}}``.  Every neighbour is returned in one flat shape
(:func:`neighbour`); anything else is a ParseError naming the interface and the field.
"""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import ParseError, load_json_object
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._runner import Tool

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional, Tuple

TOOL = "lldpcli -f json"


def _many(value: Any) -> List[Any]:
    """lldpd's one-or-several: a list stays a list, anything else is one element, None none."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _text(value: Any, where: str) -> Optional[str]:
    if value is None:
        return None
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return str(value)
    raise ParseError("%s: %s is %s, expected text" % (TOOL, where, type(value).__name__))


def _obj(value: Any, where: str) -> Dict[str, Any]:
    if not isinstance(value, dict):
        raise ParseError("%s: %s is %s, expected an object" % (TOOL, where, type(value).__name__))
    return value


def _id(value: Any, where: str) -> Tuple[Optional[str], Optional[str]]:
    """``{"type": "mac", "value": "..."}`` -> (value, type)."""
    if value is None:
        return None, None
    ident = _obj(value, where)
    return _text(ident.get("value"), where + ".value"), _text(ident.get("type"), where + ".type")


def _is_chassis(value: Dict[str, Any]) -> bool:
    """The chassis itself (no SysName key): it holds an ``id`` object with a value."""
    ident = value.get("id")
    return isinstance(ident, dict) and "value" in ident


def _chassis(value: Any, where: str) -> Tuple[Optional[str], Dict[str, Any]]:
    chassis = _obj(value, where)
    if not chassis or _is_chassis(chassis):
        return None, chassis
    if len(chassis) != 1:
        raise ParseError("%s: %s holds %d chassis (%s), expected one" % (TOOL, where, len(chassis), ", ".join(sorted(chassis))))
    name = next(iter(chassis))
    return name, _obj(chassis[name], "%s.%s" % (where, name))


def _ttl(value: Any, where: str) -> Optional[int]:
    text = _text(value, where)
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        raise ParseError("%s: %s is %r, expected an integer" % (TOOL, where, text)) from None


def neighbour(ifname: str, entry: Any) -> Dict[str, Any]:
    """One neighbour entry of interface ``ifname`` in the flat shape the module returns."""
    where = "interface %s" % ifname
    entry = _obj(entry, where)
    name, chassis = _chassis(entry.get("chassis", {}), where + " chassis")
    port = _obj(entry.get("port", {}), where + " port")
    chassis_id, chassis_id_type = _id(chassis.get("id"), where + " chassis id")
    port_id, port_id_type = _id(port.get("id"), where + " port id")
    caps = {}
    for cap in _many(chassis.get("capability")):
        cap = _obj(cap, where + " capability")
        kind = _text(cap.get("type"), where + " capability type")
        if kind:
            caps[kind.lower()] = bool(cap.get("enabled"))
    mgmt = [_text(ip, where + " mgmt-ip") for ip in _many(chassis.get("mgmt-ip"))]
    ttl = port.get("ttl", chassis.get("ttl"))
    return {
        "chassis_name": name if name is not None else _text(chassis.get("name"), where + " chassis name"),
        "chassis_id": chassis_id, "chassis_id_type": chassis_id_type,
        "chassis_descr": _text(chassis.get("descr"), where + " chassis descr"),
        "port_id": port_id, "port_id_type": port_id_type,
        "port_descr": _text(port.get("descr"), where + " port descr"),
        "capabilities": caps, "bridge": caps.get("bridge", False), "router": caps.get("router", False),
        "mgmt_ip": [ip for ip in mgmt if ip], "ttl": _ttl(ttl, where + " ttl"),
        "via": _text(entry.get("via"), where + " via"),
    }


def _entries(interfaces: Any) -> List[Tuple[str, Any]]:
    """(ifname, entry) of every neighbour, in lldpd's order, from either shape of ``interface``."""
    out = []
    if isinstance(interfaces, dict):
        return [(str(k), v) for k, v in interfaces.items()]
    if not isinstance(interfaces, list):
        raise ParseError("%s: lldp.interface is %s, expected an object or a list" % (TOOL, type(interfaces).__name__))
    for index, item in enumerate(interfaces):
        item = _obj(item, "lldp.interface[%d]" % index)
        if isinstance(item.get("name"), str):           # a layout naming the interface inside its entry
            out.append((item["name"], item))
        elif len(item) == 1:
            key = next(iter(item))
            out.append((str(key), item[key]))
        else:
            raise ParseError("%s: lldp.interface[%d] has keys %s, expected one interface name"
                             % (TOOL, index, ", ".join(sorted(str(k) for k in item))))
    return out


def parse_neighbors(text: str) -> Dict[str, List[Dict[str, Any]]]:
    """``{local interface: [neighbour, ...]}`` from ``lldpcli -f json show neighbors details``."""
    data = load_json_object(text, TOOL)
    if "lldp" not in data:
        raise ParseError("%s: no 'lldp' member (keys: %s)" % (TOOL, ", ".join(sorted(str(k) for k in data)) or "none"))
    lldp = data["lldp"]
    if isinstance(lldp, list) and len(lldp) <= 1:        # an empty list or one lldp object, as -f json0 nests it
        lldp = lldp[0] if lldp else {}
    lldp = _obj(lldp, "lldp")
    out: Dict[str, List[Dict[str, Any]]] = {}
    for ifname, entry in _entries(lldp.get("interface", [])):
        out.setdefault(ifname, []).append(neighbour(ifname, entry))
    return out


LLDPCLI = Tool("lldpcli", {"neighbors": ["-f", "json", "show", "neighbors", "details"]},
               parsers={"neighbors": parse_neighbors})
