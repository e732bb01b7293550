# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""RDMA device tools: ``ibv_devinfo`` (rdma-core), ``ibstat`` (infiniband-diags) and iproute2's
``rdma``: their argv tables and the parsers of what they print.

``ibv_devinfo`` and ``ibstat`` print "label: value" lines and are parsed by label; ``rdma -j link``
prints JSON.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.hpcnet.rdma.plugins.module_utils._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils._parsing import (
    ParseError, int_or_none, load_json_list, snake, split_field, split_lines)
from ansible_collections.hpcnet.rdma.plugins.module_utils._runner import Tool

# IB MTU enum (enum ib_mtu / ibv_mtu) -> bytes
IB_MTU_BYTES = {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}

# "PORT_ACTIVE (4)", "4096 (5)", "2.5 Gbps (1)": value, then the enum in parentheses
_ENUM_VALUE = re.compile(r"^(?P<text>.*?)\s*\((?P<enum>\d+)\)$")
# "GID[  0]:  fe80::5054:ff:fe12:3456, RoCE v2" (rdma-core >= 25) or the bare GID (older)
_GID_LINE = re.compile(r"^GID\[\s*(?P<index>\d+)\]:\s*(?P<gid>[0-9a-fA-F:.]+)(?:,\s*(?P<type>.+))?$")


def parse_ibv_devinfo(text: str) -> Dict[str, Dict[str, Any]]:
    """Parse ``ibv_devinfo`` (rdma-core) into ``{hca_id: {"transport", "fw_ver", "node_guid",
    "ports": {port: {"state", "max_mtu", "active_mtu", "link_layer"}}}}``.

    ``max_mtu``/``active_mtu`` are bytes (``4096 (5)`` -> 4096; the enum in parentheses must agree
    with the bytes, see :data:`IB_MTU_BYTES`); ``state`` is the name (``PORT_ACTIVE``).
    """
    tool = "ibv_devinfo"
    out = {}  # type: Dict[str, Dict[str, Any]]
    dev = None  # type: Optional[Dict[str, Any]]
    port = None  # type: Optional[Dict[str, Any]]
    for line in split_lines(text, tool):
        field = split_field(line)
        if field is None:
            continue
        label, value = field
        if label == "hca_id":
            dev = {"ports": {}}
            out[value] = dev
            port = None
        elif dev is None:
            continue
        elif label == "port":
            try:
                number = int(value)
            except ValueError:
                raise ParseError("%s: bad port number in line %r" % (tool, line)) from None
            port = {"state": None, "max_mtu": None, "active_mtu": None, "link_layer": None}
            dev["ports"][number] = port
        elif port is not None and label in ("max_mtu", "active_mtu"):
            m = re.match(r"^(\d+)\s*\((\d+)\)$", value)
            if not m or IB_MTU_BYTES.get(int(m.group(2))) != int(m.group(1)):
                raise ParseError("%s: %s must read like '4096 (5)' in line %r" % (tool, label, line))
            port[label] = int(m.group(1))
        elif port is not None and label == "state":
            port["state"] = value.split()[0]
        elif port is not None and label == "link_layer":
            port["link_layer"] = value
        elif port is None and label in ("transport", "fw_ver", "node_guid"):
            dev[label] = value
    if not out:
        raise ParseError("%s: no 'hca_id:' line in output" % tool)
    return out


def _enum_field(value: str) -> Tuple[str, Optional[int]]:
    m = _ENUM_VALUE.match(value)
    if not m:
        return value, None
    return m.group("text"), int(m.group("enum"))


def parse_ibv_devinfo_verbose(text: str) -> Dict[str, Dict[str, Any]]:
    """Parse ``ibv_devinfo -v`` (also plain ``ibv_devinfo``) into ``{hca_id: device}``.

    device: ``transport``, ``fw_ver``, ``node_guid``, ``sys_image_guid``, ``vendor_id``,
    ``vendor_part_id``, ``hw_ver``, ``board_id``, ``phys_port_cnt`` (int), ``ports``:
    ``{port: {"state", "phys_state", "max_mtu", "active_mtu" (bytes), "link_layer",
    "active_width", "active_speed", "sm_lid", "port_lid", "gids": [{"index", "gid", "type"}]}}``.
    MTUs must read like ``4096 (5)`` with the enum agreeing with the bytes.
    """
    tool = "ibv_devinfo -v"
    devices = {}  # type: Dict[str, Dict[str, Any]]
    dev = None  # type: Optional[Dict[str, Any]]
    port = None  # type: Optional[Dict[str, Any]]
    device_fields = ("transport", "fw_ver", "node_guid", "sys_image_guid", "vendor_id",
                     "vendor_part_id", "hw_ver", "board_id")
    for line in split_lines(text, tool):
        gid = _GID_LINE.match(line)
        if gid and port is not None:
            port["gids"].append({"index": int(gid.group("index")), "gid": gid.group("gid").lower(),
                                 "type": gid.group("type").strip() if gid.group("type") else None})
            continue
        field = split_field(line)
        if field is None:
            continue
        label, value = field
        if label == "hca_id":
            dev = {"ports": {}, "phys_port_cnt": None}
            dev.update(dict.fromkeys(device_fields))
            devices[value] = dev
            port = None
        elif dev is None:
            continue
        elif label == "port":
            if not value.isdigit():
                raise ParseError("%s: bad port number in line %r" % (tool, line))
            port = {"state": None, "phys_state": None, "max_mtu": None, "active_mtu": None,
                    "link_layer": None, "active_width": None, "active_speed": None,
                    "sm_lid": None, "port_lid": None, "gids": []}
            dev["ports"][int(value)] = port
        elif port is None:
            if label in device_fields:
                dev[label] = _enum_field(value)[0] if label == "transport" else value
            elif label == "phys_port_cnt":
                dev[label] = int_or_none(value, tool, line)
        elif label in ("max_mtu", "active_mtu"):
            number, enum = _enum_field(value)
            if enum is None or not number.isdigit() or IB_MTU_BYTES.get(enum) != int(number):
                raise ParseError("%s: %s must read like '4096 (5)' in line %r" % (tool, label, line))
            port[label] = int(number)
        elif label in ("state", "phys_state", "active_width", "active_speed"):
            port[label] = _enum_field(value)[0]
        elif label == "link_layer":
            port[label] = value
        elif label in ("sm_lid", "port_lid"):
            port[label] = int_or_none(value, tool, line)
    if not devices:
        raise ParseError("%s: no 'hca_id:' line in output" % tool)
    return devices


def parse_ibstat(text: str) -> Dict[str, Dict[str, Any]]:
    """Parse ``ibstat`` (infiniband-diags) into ``{ca: {"ca_type", "number_of_ports",
    "firmware_version", "hardware_version", "node_guid", "system_image_guid",
    "ports": {port: {"state", "physical_state", "rate" (Gb/s, int), "base_lid", "lmc", "sm_lid",
    "capability_mask", "port_guid", "link_layer"}}}}``."""
    tool = "ibstat"
    cas = {}  # type: Dict[str, Dict[str, Any]]
    ca = None  # type: Optional[Dict[str, Any]]
    port = None  # type: Optional[Dict[str, Any]]
    ints = ("number_of_ports", "rate", "base_lid", "lmc", "sm_lid")
    for line in split_lines(text, tool):
        m = re.match(r"^CA '(?P<name>[^']+)'$", line)
        if m:
            ca = {"ports": {}}
            cas[m.group("name")] = ca
            port = None
            continue
        m = re.match(r"^Port (?P<num>\d+):$", line)
        if m and ca is not None:
            port = {}
            ca["ports"][int(m.group("num"))] = port
            continue
        field = split_field(line)
        if field is None or ca is None:
            continue
        key = snake(field[0])
        value = field[1]
        target = port if port is not None else ca
        target[key] = int_or_none(value, tool, line) if key in ints else value
    if not cas:
        raise ParseError("%s: no \"CA '...'\" line in output" % tool)
    return cas


def parse_rdma_link_json(text: str) -> List[Dict[str, Any]]:
    """Parse ``rdma -j link show`` (iproute2) into ``[{"device", "port", "state",
    "physical_state", "netdev", "netdev_index"}]``; ``netdev`` is None for InfiniBand ports."""
    tool = "rdma -j link"
    data = load_json_list(text, tool, "links")
    out = []
    for index, item in enumerate(data):
        if not isinstance(item, dict) or not isinstance(item.get("ifname"), str) \
                or not isinstance(item.get("port"), int):
            raise ParseError("%s: entry %d has no 'ifname' and 'port'" % (tool, index))
        out.append({"device": item["ifname"], "port": item["port"], "state": item.get("state"),
                    "physical_state": item.get("physical_state"), "netdev": item.get("netdev"),
                    "netdev_index": item.get("netdev_index")})
    return out


# --------------------------------------------------------------------------- the tools
IBV_DEVINFO = Tool("ibv_devinfo", {"device": ["-d", "{device}"], "verbose": ["-v"]},
                   parsers={"device": parse_ibv_devinfo, "verbose": parse_ibv_devinfo_verbose})
IBSTAT = Tool("ibstat", {"show": []}, parsers={"show": parse_ibstat})
RDMA = Tool("rdma", {
    "links": ["-j", "link", "show"],
    "add_rxe": ["link", "add", "{name}", "type", "rxe", "netdev", "{netdev}"],
    "delete_link": ["link", "delete", "{name}"],
    "set_netns": ["system", "set", "netns", "{mode}"],
}, parsers={"links": parse_rdma_link_json})


def devinfo(host: Host, device: str) -> Optional[Dict[str, Any]]:
    """Parsed ``ibv_devinfo -d DEV`` for one device; None when ibv_devinfo is not installed."""
    if host.which("ibv_devinfo") is None:
        return None
    return IBV_DEVINFO.call(host, "device", device=device).get(device)
