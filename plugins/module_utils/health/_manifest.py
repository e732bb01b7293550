# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fleet manifest: what every node of a group should have, learned as the majority of the group.

:func:`attributes` reads one node's attributes out of the facts ``verify_info`` returns (``fabric``,
``data_interfaces``, ``kernel``, ``rdma_core``) - the controller learns the manifest from them
(:func:`learn`, the role ``hpcnet.rdma.rdma_health`` writes it to every node) and the node check
(``_health``) reads its own through the same function, so both sides compare the same values.
:func:`value_of` and :func:`firmware_of` are also what verify's consistency findings
(``plugin_utils/_findings_fleet.py``) read those attributes with: one extraction, three users.
Pure: no node I/O.
"""
from __future__ import annotations

import json
from collections import Counter

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional, Tuple

SCHEMA = 1
# item -> (what it is, the fix when a node differs)
ITEMS: Dict[str, Tuple[str, str]] = {
    "mtu": ("data-interface MTU", "rdma_interfaces[].mtu or the profile's nic.mtu (hpcnet.rdma.tune_rdma)"),
    "driver": ("data NIC driver", "install the fleet's NIC driver (kernel/OFED) on this node"),
    "rdma_devices": ("RDMA device names", "load the fleet's RDMA driver (rdma_core_modules) or soft-RoCE "
                     "(rdma_core_soft_roce); check the HCA with ibv_devinfo"),
    "rdma_drivers": ("RDMA device drivers", "install the fleet's RDMA driver (kernel/OFED) on this node"),
    "firmware": ("RDMA firmware", "flash the fleet's firmware on this HCA (mlxfwmanager / the vendor's tool)"),
    "kernel": ("kernel release", "boot the fleet's kernel on this node"),
    "rdma_core": ("rdma-core version", "install the fleet's rdma-core (rdma_core_packages, hpcnet.rdma.rdma_core)"),
}


def one_value(values: List[Any]) -> Any:
    """One value per host: the value when the host's data interfaces (or devices) agree, else the sorted
    distinct values; None for none.  Also verify's consistency findings (plugin_utils._findings_fleet)."""
    distinct: List[Any] = []
    for v in values:
        if v is not None and v not in distinct:
            distinct.append(v)
    if not distinct:
        return None
    return distinct[0] if len(distinct) == 1 else sorted(distinct, key=_key)


_NETDEV_FILES = {"mtu": "/sys/class/net/%s/mtu", "driver": "/sys/class/net/%s/device/driver"}


def value_of(item: str, info: Dict[str, Any]) -> Tuple[Any, str]:
    """(value, where it was read) of one node attribute both sides compare - the data netdevs' ``mtu`` and
    ``driver``, ``kernel``, ``rdma_core`` - out of a verify_info result (or the node check's facts)."""
    if item in _NETDEV_FILES:
        netdevs = (info.get("fabric") or {}).get("netdevs") or {}
        data = info.get("data_interfaces") or []
        return (one_value([(netdevs.get(n) or {}).get(item) for n in data]),
                ", ".join(_NETDEV_FILES[item] % n for n in data) or "no data interface")
    if item == "kernel":
        return info.get("kernel"), "/proc/sys/kernel/osrelease"
    if item == "rdma_core":
        rc = info.get("rdma_core") or {}
        return rc.get("version"), rc.get("source") or "dpkg status / libibverbs file name"
    raise KeyError(item)


def firmware_of(fabric: Dict[str, Any], devices: List[str]) -> Tuple[Any, str]:
    """(firmware, where) of the RDMA ``devices`` (the manifest: every readable device; verify's consistency:
    the devices of the data ports)."""
    return (one_value([((fabric.get("devices") or {}).get(d) or {}).get("fw_ver") for d in devices]),
            ", ".join("/sys/class/infiniband/%s/fw_ver" % d for d in devices) or "no RDMA device")


def attributes(info: Dict[str, Any]) -> Dict[str, Any]:
    """item -> value of one node (None: not applicable, e.g. no RDMA device has no firmware)."""
    fabric = info.get("fabric") or {}
    devices = dict((d, v) for d, v in (fabric.get("devices") or {}).items() if "unreadable" not in v)
    return {
        "mtu": value_of("mtu", info)[0],
        "driver": value_of("driver", info)[0],
        "rdma_devices": sorted(devices) or None,
        "rdma_drivers": sorted(set(v.get("driver") for v in devices.values() if v.get("driver"))) or None,
        "firmware": firmware_of(fabric, sorted(devices))[0],
        "kernel": value_of("kernel", info)[0],
        "rdma_core": value_of("rdma_core", info)[0],
    }


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def learn(per_host: Dict[str, Dict[str, Any]], hosts: List[str]) -> Dict[str, Any]:
    """The manifest of ``hosts`` (play order): for each item the majority value, how many hold it,
    and the odd hosts by name.  A tie goes to the value of the first host in play order (and says so).
    Hosts without the item (None) do not vote; an item no host has is left out."""
    items: Dict[str, Any] = {}
    for item in ITEMS:
        votes = [(h, per_host[h].get(item)) for h in hosts if h in per_host and per_host[h].get(item) is not None]
        if not votes:
            continue
        counts = Counter(_key(v) for _h, v in votes)
        top = max(counts.values())
        tied = [k for k, c in counts.items() if c == top]
        win = next(_key(v) for _h, v in votes if _key(v) in tied)
        items[item] = {"value": json.loads(win), "hosts": top, "of": len(votes), "tie": len(tied) > 1,
                       "odd": dict((h, v) for h, v in votes if _key(v) != win)}
    return {"schema": SCHEMA, "hosts": [h for h in hosts if h in per_host], "items": items}


def differences(attrs: Dict[str, Any], manifest: Optional[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Each item where this node's value is not the manifest's: {item, what, value, majority, held, fix}."""
    out = []
    for item, entry in sorted(((manifest or {}).get("items") or {}).items()):
        if item not in ITEMS or not isinstance(entry, dict):
            continue
        mine = attrs.get(item)
        if _key(mine) != _key(entry.get("value")):
            out.append({"item": item, "what": ITEMS[item][0], "value": mine, "majority": entry.get("value"),
                        "held": "%s of %s hosts" % (entry.get("hosts"), entry.get("of")), "fix": ITEMS[item][1]})
    return out
