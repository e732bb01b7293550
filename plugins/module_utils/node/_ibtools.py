# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""RDMA device tools: ``ibv_devinfo`` (rdma-core), ``ibstat`` (infiniband-diags) and iproute2's
``rdma``: their argv tables and the parsers of what they print.

``ibv_devinfo`` and ``ibstat`` print "label: value" lines and are parsed by label; ``rdma -j link`` and
``rdma -j dev`` print JSON (their text form, ``rdma link`` / ``rdma dev``, is read too).

Fail small: one device (a CA, an hca_id block, an rdma link entry) that cannot be read becomes
``{"unreadable": reason}`` (the reason names the tool and the line) and the others are kept; only
output of which nothing at all can be read raises :class:`ParseError`.
"""
from __future__ import annotations

import re

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import (
    lazy_re, ParseError, int_or_none, load_json_list, snake, split_field, split_lines)
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._runner import Tool

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Callable, Dict, List, Optional, Tuple

# ASCII digits only: str.isdigit() also accepts '²', which int() refuses
_DIGITS = lazy_re(r"^[0-9]+$")
# IB MTU enum (enum ib_mtu / ibv_mtu) -> bytes
IB_MTU_BYTES = {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}

# "PORT_ACTIVE (4)", "4096 (5)", "2.5 Gbps (1)": value, then the enum in parentheses
_ENUM_VALUE = lazy_re(r"^(?P<text>.*?)\s*\((?P<enum>[0-9]+)\)$")
# "GID[  0]:  fe80::5054:ff:fe12:3456, RoCE v2" (rdma-core >= 25) or the bare GID (older)
_GID_LINE = lazy_re(r"^GID\[\s*(?P<index>[0-9]+)\]:\s*(?P<gid>[0-9a-fA-F:.]+)(?:,\s*(?P<type>.+))?$")


def _blocks(lines: List[str], start: Callable[[str], Optional[str]]) -> Tuple[List[str], List[Tuple[str, List[str]]]]:
    """Split output lines into the lines before the first device and ``(name, lines)`` per device;
    ``start(line)`` returns the device name when ``line`` opens a device block."""
    head = []  # type: List[str]
    blocks = []  # type: List[Tuple[str, List[str]]]
    for line in lines:
        name = start(line)
        if name is not None:
            blocks.append((name, []))
        elif blocks:
            blocks[-1][1].append(line)
        else:
            head.append(line)
    return head, blocks


def _per_device(blocks: List[Tuple[str, List[str]]], parse: Callable[[List[str]], Dict[str, Any]], tool: str,
                none: str) -> Dict[str, Dict[str, Any]]:
    """``{name: parse(lines)}``; a device whose lines raise ParseError is ``{"unreadable": reason}``.
    ParseError when there is no device (``none`` says what was missing) or none could be read."""
    out = {}  # type: Dict[str, Dict[str, Any]]
    for name, lines in blocks:
        try:
            out[name] = parse(lines)
        except ParseError as e:
            out[name] = {"unreadable": str(e)}
    if not out:
        raise ParseError("%s: %s" % (tool, none))
    if all("unreadable" in dev for dev in out.values()):
        raise ParseError(next(iter(out.values()))["unreadable"])
    return out


def _hca_id(line: str) -> Optional[str]:
    field = split_field(line)
    return field[1] if field is not None and field[0] == "hca_id" else None


def _mtu(value: str, label: str, tool: str, line: str) -> int:
    number, enum = _enum_field(value)
    if enum is None or not _DIGITS.match(number) or IB_MTU_BYTES.get(enum) != int(number):
        raise ParseError("%s: %s must read like '4096 (5)' in line %r" % (tool, label, line))
    return int(number)


def _port_number(value: str, tool: str, line: str) -> int:
    if not _DIGITS.match(value):
        raise ParseError("%s: bad port number in line %r" % (tool, line))
    return int(value)


def parse_ibv_devinfo(text: str) -> Dict[str, Dict[str, Any]]:
    """Parse ``ibv_devinfo`` (rdma-core) into ``{hca_id: {"transport", "fw_ver", "node_guid",
    "ports": {port: {"state", "max_mtu", "active_mtu", "link_layer"}}}}``.

    ``max_mtu``/``active_mtu`` are bytes (``4096 (5)`` -> 4096; the enum in parentheses must agree
    with the bytes, see :data:`IB_MTU_BYTES`); ``state`` is the name (``PORT_ACTIVE``).  A device
    that cannot be read is ``{"unreadable": reason}``.
    """
    tool = "ibv_devinfo"

    def device(lines: List[str]) -> Dict[str, Any]:
        dev = {"ports": {}}  # type: Dict[str, Any]
        port = None  # type: Optional[Dict[str, Any]]
        for line in lines:
            field = split_field(line)
            if field is None:
                continue
            label, value = field
            if label == "port":
                port = {"state": None, "max_mtu": None, "active_mtu": None, "link_layer": None}
                dev["ports"][_port_number(value, tool, line)] = port
            elif port is not None and label in ("max_mtu", "active_mtu"):
                port[label] = _mtu(value, label, tool, line)
            elif port is not None and label == "state":
                port["state"] = (value.split() or [None])[0]
            elif port is not None and label == "link_layer":
                port["link_layer"] = value
            elif port is None and label in ("transport", "fw_ver", "node_guid"):
                dev[label] = value
        return dev

    _head, blocks = _blocks(split_lines(text, tool), _hca_id)
    return _per_device(blocks, device, tool, "no 'hca_id:' line in output")


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
    MTUs must read like ``4096 (5)`` with the enum agreeing with the bytes.  GID ``type`` is what
    rdma-core >= 28 prints after the GID (``RoCE v1``, ``RoCE v2``), None before that or on
    InfiniBand.  A device that cannot be read is ``{"unreadable": reason}``; the others are kept.
    """
    tool = "ibv_devinfo -v"
    device_fields = ("transport", "fw_ver", "node_guid", "sys_image_guid", "vendor_id",
                     "vendor_part_id", "hw_ver", "board_id")

    def device(lines: List[str]) -> Dict[str, Any]:
        dev = {"ports": {}, "phys_port_cnt": None}  # type: Dict[str, Any]
        dev.update(dict.fromkeys(device_fields))
        port = None  # type: Optional[Dict[str, Any]]
        for line in lines:
            gid = _GID_LINE.match(line)
            if gid and port is not None:
                port["gids"].append({"index": int(gid.group("index")), "gid": gid.group("gid").lower(),
                                     "type": gid.group("type").strip() if gid.group("type") else None})
                continue
            field = split_field(line)
            if field is None:
                continue
            label, value = field
            if label == "port":
                port = {"state": None, "phys_state": None, "max_mtu": None, "active_mtu": None,
                        "link_layer": None, "active_width": None, "active_speed": None,
                        "sm_lid": None, "port_lid": None, "gids": []}
                dev["ports"][_port_number(value, tool, line)] = port
            elif port is None:
                if label in device_fields:
                    dev[label] = _enum_field(value)[0] if label == "transport" else value
                elif label == "phys_port_cnt":
                    dev[label] = _int_field(value, tool, line)
            elif label in ("max_mtu", "active_mtu"):
                port[label] = _mtu(value, label, tool, line)
            elif label in ("state", "phys_state", "active_width", "active_speed"):
                port[label] = _enum_field(value)[0]
            elif label == "link_layer":
                port[label] = value
            elif label in ("sm_lid", "port_lid"):
                port[label] = _int_field(value, tool, line)
        return dev

    _head, blocks = _blocks(split_lines(text, tool), _hca_id)
    return _per_device(blocks, device, tool, "no 'hca_id:' line in output")


def _int_field(value: str, tool: str, line: str) -> Optional[int]:
    """'12' -> 12, '' or 'n/a' -> None (rxe prints empty fields), else ParseError naming the line."""
    return None if not value.strip() else int_or_none(value, tool, line)


# ibstat "Rate:" values: "100", "2.5" (1X SDR, soft-RoCE), "10 (FDR10)", "14.0625"
_RATE = lazy_re(r"^(?P<gbps>[0-9]+(?:\.[0-9]+)?)(?:\s*\((?P<name>[^)]*)\))?$")


def ib_rate(value: str, tool: str, line: str) -> Tuple[Optional[float], Optional[str]]:
    """``ibstat`` Rate -> (Gb/s, name): '100' -> (100, None), '2.5' -> (2.5, None), '10 (FDR10)' ->
    (10, 'FDR10'), '' -> (None, None).  Whole numbers come back as int.  Anything else: ParseError."""
    value = value.strip()
    if not value:
        return None, None
    m = _RATE.match(value)
    if not m:
        raise ParseError("%s: expected a rate in Gb/s like '100', '2.5' or '10 (FDR10)' in line %r" % (tool, line))
    number = float(m.group("gbps"))
    return (int(number) if number.is_integer() else number), m.group("name")


def _ca_name(line: str) -> Optional[str]:
    m = re.match(r"^CA '(?P<name>[^']+)'$", line)
    return m.group("name") if m else None


def parse_ibstat(text: str) -> Dict[str, Dict[str, Any]]:
    """Parse ``ibstat`` (infiniband-diags) into ``{ca: {"ca_type", "number_of_ports",
    "firmware_version", "hardware_version", "node_guid", "system_image_guid",
    "ports": {port: {"state", "physical_state", "rate" (Gb/s: int, or float for 2.5 / 14.0625),
    "rate_name" ('FDR10' when printed), "base_lid", "lmc", "sm_lid", "capability_mask",
    "port_guid", "link_layer"}}}}``.

    Empty fields (rxe prints ``CA type:`` and ``Firmware version:`` empty) are ``""`` (None for
    numbers); lines before the first CA (``ibwarn:`` debug lines) are ignored.  A CA that cannot be
    read is ``{"unreadable": reason}`` and the other CAs are kept.
    """
    tool = "ibstat"
    ints = ("number_of_ports", "base_lid", "lmc", "sm_lid")

    def ca_block(lines: List[str]) -> Dict[str, Any]:
        ca = {"ports": {}}  # type: Dict[str, Any]
        port = None  # type: Optional[Dict[str, Any]]
        for line in lines:
            m = re.match(r"^Port (?P<num>[0-9]+):$", line)
            if m:
                port = {}
                ca["ports"][int(m.group("num"))] = port
                continue
            field = split_field(line)
            if field is None:
                continue
            key = snake(field[0])
            value = field[1]
            target = port if port is not None else ca
            if key == "ports":   # the name the CA's port table is kept under: no field of ibstat's
                raise ParseError("%s: unexpected field %r in line %r" % (tool, field[0], line))
            if key == "rate":
                target["rate"], target["rate_name"] = ib_rate(value, tool, line)
                if target["rate_name"] is None:
                    del target["rate_name"]
            else:
                target[key] = _int_field(value, tool, line) if key in ints else value
        return ca

    _head, blocks = _blocks(split_lines(text, tool), _ca_name)
    return _per_device(blocks, ca_block, tool, "no \"CA '...'\" line in output")


_RDMA_TEXT_LINK = lazy_re(r"^link\s+(?P<dev>\S+)/(?P<port>[0-9]+)(?P<rest>(?:\s.*)?)$")
_RDMA_TEXT_DEV = lazy_re(r"^(?P<index>[0-9]+):\s+(?P<dev>[^\s:]+):?(?P<rest>(?:\s.*)?)$")


def _is_json(text: Any) -> bool:
    return isinstance(text, str) and text.lstrip()[:1] in ("[", "{")


def _text_attrs(rest: str, tool: str, line: str) -> Dict[str, Any]:
    """'state ACTIVE physical_state LINK_UP netdev p1p1' -> {"state": "ACTIVE", ...}.  A ``caps:
    <A, B>`` list (``rdma -d dev``) becomes a list; ParseError on a name without a value."""
    attrs = {}  # type: Dict[str, Any]
    caps = re.search(r"\bcaps:\s*<(?P<caps>[^>]*)>", rest)
    if caps:
        attrs["caps"] = [c.strip() for c in caps.group("caps").split(",") if c.strip()]
        rest = rest[:caps.start()] + rest[caps.end():]
    words = rest.split()
    if len(words) % 2:
        raise ParseError("%s: attribute %r has no value in line %r" % (tool, words[-1], line))
    for key, value in zip(words[0::2], words[1::2]):
        attrs[key] = int(value) if _DIGITS.match(value) and key in ("lid", "sm_lid", "lmc", "netdev_index") else value
    return attrs


def _link_entry(item: Dict[str, Any]) -> Dict[str, Any]:
    return {"device": item["ifname"], "port": item["port"], "state": item.get("state"),
            "physical_state": item.get("physical_state"), "netdev": item.get("netdev"),
            "netdev_index": item.get("netdev_index")}


def parse_rdma_link(text: str) -> List[Dict[str, Any]]:
    """Parse ``rdma -j link show`` (iproute2 JSON) or ``rdma link show`` (text, every iproute2 since
    4.16) into ``[{"device", "port", "state", "physical_state", "netdev", "netdev_index"}]``;
    ``netdev`` is None for InfiniBand ports.  An entry that cannot be read is
    ``{"device", "port", "unreadable": reason}`` (device/port None when unknown); ParseError when the
    output is not a list or no entry can be read."""
    if _is_json(text):
        tool = "rdma -j link"
        data = load_json_list(text, tool, "links")
        out = []
        for index, item in enumerate(data):
            if not isinstance(item.get("ifname"), str) or not isinstance(item.get("port"), int):
                out.append({"device": item.get("ifname") if isinstance(item.get("ifname"), str) else None,
                            "port": None, "unreadable": "%s: entry %d has no 'ifname' and 'port'" % (tool, index)})
                continue
            out.append(_link_entry(item))
    else:
        tool = "rdma link"
        out = []
        for line in split_lines(text, tool):
            if not line:
                continue
            m = _RDMA_TEXT_LINK.match(line)
            if not m:
                out.append({"device": None, "port": None, "unreadable": "%s: not a link line: %r" % (tool, line)})
                continue
            try:
                attrs = _text_attrs(m.group("rest"), tool, line)
            except ParseError as e:
                out.append({"device": m.group("dev"), "port": int(m.group("port")), "unreadable": str(e)})
                continue
            attrs.update(ifname=m.group("dev"), port=int(m.group("port")))
            out.append(_link_entry(attrs))
    if out and all("unreadable" in link for link in out):
        raise ParseError(out[0]["unreadable"])
    return out


def parse_rdma_link_json(text: str) -> List[Dict[str, Any]]:
    """:func:`parse_rdma_link` (kept under its old name: ``rdma -j link show``)."""
    return parse_rdma_link(text)


def parse_rdma_dev(text: str) -> Dict[str, Dict[str, Any]]:
    """Parse ``rdma -j dev show`` (JSON) or ``rdma dev show`` (text) into ``{device: {"index",
    "node_type", "fw", "node_guid", "sys_image_guid", "caps"}}``.

    ``fw`` is None when the device reports none (rdma_rxe, siw); ``caps`` (a list) only with
    ``-d``, else None.  A device that cannot be read is ``{"unreadable": reason}``."""
    keys = ("node_type", "fw", "node_guid", "sys_image_guid")
    out = {}  # type: Dict[str, Dict[str, Any]]

    def entry(index: Any, attrs: Dict[str, Any]) -> Dict[str, Any]:
        dev = {"index": index if isinstance(index, int) else None}  # type: Dict[str, Any]
        for key in keys:
            value = attrs.get(key)
            dev[key] = value if isinstance(value, str) else None
        caps = attrs.get("caps")
        dev["caps"] = [c for c in caps if isinstance(c, str)] if isinstance(caps, list) else None
        return dev

    if _is_json(text):
        tool = "rdma -j dev"
        for position, item in enumerate(load_json_list(text, tool, "devices")):
            name = item.get("ifname")
            if not isinstance(name, str):
                out["entry %d" % position] = {"unreadable": "%s: entry %d has no 'ifname'" % (tool, position)}
                continue
            out[name] = entry(item.get("ifindex"), item)
    else:
        tool = "rdma dev"
        for line in split_lines(text, tool):
            if not line:
                continue
            m = _RDMA_TEXT_DEV.match(line)
            if not m:
                if out and not line[:1].isdigit():
                    continue   # a continuation line ("    caps: <...>" of rdma -d dev)
                out["line %r" % line[:40]] = {"unreadable": "%s: not a device line: %r" % (tool, line)}
                continue
            try:
                out[m.group("dev")] = entry(int(m.group("index")), _text_attrs(m.group("rest"), tool, line))
            except ParseError as e:
                out[m.group("dev")] = {"unreadable": str(e)}
    if not out:
        raise ParseError("%s: no device in output" % tool)
    if all("unreadable" in dev for dev in out.values()):
        raise ParseError(next(iter(out.values()))["unreadable"])
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
    "devices": ["-j", "dev", "show"],
}, parsers={"links": parse_rdma_link, "devices": parse_rdma_dev})


def devinfo(host: Host, device: str) -> Optional[Dict[str, Any]]:
    """Parsed ``ibv_devinfo -d DEV`` for one device; None when ibv_devinfo is not installed."""
    if host.which("ibv_devinfo") is None:
        return None
    return IBV_DEVINFO.call(host, "device", device=device).get(device)
