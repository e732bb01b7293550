# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

# Pure text -> dict parsers for the output of ethtool and iproute2.
#
# Nothing here runs a command or touches the system: every function takes the text a
# tool printed and returns plain Python data, or raises ParseError.
#
# Parsing is by field name ("RX:", "Combined:", "rx-usecs:" ...), never by column or line
# position, so the ioctl-era layout (ethtool < 5.6), the netlink layout of ethtool 5.x/6.1
# and the tab-aligned layout of newer ethtool 6.x all parse the same way.  Lines a parser
# does not know are ignored (ring extras are kept under "extra"), so newer tool versions
# do not break it.

import json
import re
from typing import Any, Dict, List, Optional, Tuple, Union

__all__ = [
    "ParseError",
    "is_not_supported",
    "parse_ethtool_channels",
    "parse_ethtool_coalesce",
    "parse_ethtool_driver",
    "parse_ethtool_rings",
    "parse_ethtool_stats",
    "parse_ip_addr_json",
    "parse_ip_link_json",
]

Scalar = Union[int, str, None]

_NA = "n/a"
_MAX_HEADER = "pre-set maximums"
_CUR_HEADER = "current hardware settings"
_RING_FIELDS = {"rx": "rx", "rx mini": "rx_mini", "rx jumbo": "rx_jumbo", "tx": "tx"}
_CHANNEL_FIELDS = {"rx": "rx", "tx": "tx", "other": "other", "combined": "combined"}
_DRIVER_KEYS = (
    "driver",
    "version",
    "firmware_version",
    "expansion_rom_version",
    "bus_info",
    "supports_statistics",
    "supports_test",
    "supports_eeprom_access",
    "supports_register_dump",
    "supports_priv_flags",
)

# "Adaptive RX: on  TX: off", "CQE mode RX: n/a  TX: n/a"
_RX_TX_PAIR = re.compile(r"^(?P<label>[A-Za-z][A-Za-z ]*?)\s+RX:\s*(?P<rx>\S+)\s+TX:\s*(?P<tx>\S+)$")
# "rx-usecs: 8", "rx-usecs:\t8", and "tx-aggr-time-usecs\t0" (ethtool 6.x prints that one without a colon)
_COALESCE_FIELD = re.compile(r"^(?P<name>[a-z][a-z0-9-]*)(?::\s*|\s+)(?P<value>\S.*)$")
# errno strings ethtool prints when the driver lacks the operation; 524 is the kernel-internal
# ENOTSUPP that a few drivers leak to user space ("netlink error: Unknown error 524").
_NOT_SUPPORTED = re.compile(r"operation not supported|unknown error 524", re.IGNORECASE)


class ParseError(ValueError):
    """Tool output could not be parsed; the message names the tool and the offending line/field."""


def _snake(label: str) -> str:
    """'RX Buf Len' -> 'rx_buf_len', 'rx-frames-irq' -> 'rx_frames_irq'."""
    return re.sub(r"[^a-z0-9]+", "_", label.strip().lower()).strip("_")


def _lines(text: str, tool: str) -> List[str]:
    if not isinstance(text, str):
        raise ParseError("%s: expected text output, got %s" % (tool, type(text).__name__))
    lines = [line.strip() for line in text.splitlines()]
    if not any(lines):
        raise ParseError("%s: empty output" % tool)
    return lines


def _int_or_none(value: str, tool: str, line: str) -> Optional[int]:
    """'8192' -> 8192, 'n/a' -> None; anything else is a ParseError."""
    value = value.strip()
    if value.lower() == _NA:
        return None
    try:
        return int(value, 10)
    except ValueError:
        raise ParseError("%s: expected an integer or 'n/a' in line %r" % (tool, line)) from None


def _scalar(value: str) -> Scalar:
    """Value of a free-form extra line: int when numeric, None for 'n/a', else the text."""
    value = value.strip()
    if value.lower() == _NA:
        return None
    if re.match(r"^-?\d+$", value):
        return int(value)
    return value


def _on_off(value: str, tool: str, line: str) -> Optional[bool]:
    value = value.strip().lower()
    if value == "on":
        return True
    if value == "off":
        return False
    if value == _NA:
        return None
    raise ParseError("%s: expected 'on', 'off' or 'n/a' in line %r" % (tool, line))


def _split_field(line: str) -> Optional[Tuple[str, str]]:
    """'RX Mini:\tn/a' -> ('rx mini', 'n/a'); None when the line has no 'label: value' shape."""
    label, sep, value = line.partition(":")
    if not sep or not label.strip():
        return None
    return " ".join(label.lower().split()), value.strip()


def _parse_max_current(
    text: str, tool: str, fields: Dict[str, str], extra: Optional[Dict[str, Scalar]]
) -> Dict[str, Any]:
    """Shared walker for the two-section layout of ``ethtool -g`` and ``ethtool -l``.

    Known labels fill ``max``/``current`` (every field present, None when n/a or absent).
    Other labels go to ``extra`` (when given; with a ``max_`` prefix in the maximums section)
    or are ignored.
    """
    sections = {
        "max": dict.fromkeys(fields.values()),
        "current": dict.fromkeys(fields.values()),
    }  # type: Dict[str, Any]
    seen = set()  # type: set
    section = None  # type: Optional[str]
    for line in _lines(text, tool):
        lowered = line.lower().rstrip(":").strip()
        if lowered == _MAX_HEADER:
            section = "max"
            seen.add(section)
            continue
        if lowered == _CUR_HEADER:
            section = "current"
            seen.add(section)
            continue
        if section is None:
            continue  # "Ring parameters for eth0:" and anything else before the first section
        field = _split_field(line)
        if field is None:
            continue
        label, value = field
        if label in fields:
            sections[section][fields[label]] = _int_or_none(value, tool, line)
        elif extra is not None:
            key = _snake(label)
            extra[("max_" + key) if section == "max" else key] = _scalar(value)
    for header, name in (("Pre-set maximums:", "max"), ("Current hardware settings:", "current")):
        if name not in seen:
            raise ParseError("%s: missing %r section" % (tool, header))
    return sections


def parse_ethtool_rings(text: str) -> Dict[str, Any]:
    """Parse ``ethtool -g IF``.

    Returns ``{"max": {...}, "current": {...}, "extra": {...}}``; ``max``/``current`` hold
    ``rx``, ``rx_mini``, ``rx_jumbo``, ``tx`` as int, or None for "n/a" or an absent line.
    Other lines (``RX Buf Len:``, ``CQE Size:``, ``TX Push:``, ``RX Push:``,
    ``TCP data split:``, ``TX push buff len:`` ...) land in ``extra`` under their snake_case
    name: int when numeric, None for "n/a", otherwise the text ("on", "off").  An extra line
    printed inside the maximums section gets a ``max_`` prefix
    (``TX push buff len:`` there -> ``max_tx_push_buff_len``).
    """
    extra = {}  # type: Dict[str, Scalar]
    result = _parse_max_current(text, "ethtool -g", _RING_FIELDS, extra)
    result["extra"] = extra
    return result


def parse_ethtool_channels(text: str) -> Dict[str, Any]:
    """Parse ``ethtool -l IF``: ``{"max": {...}, "current": {...}}`` with ``rx``, ``tx``,
    ``other``, ``combined`` as int, or None for "n/a" or an absent line."""
    return _parse_max_current(text, "ethtool -l", _CHANNEL_FIELDS, None)


def parse_ethtool_coalesce(text: str) -> Dict[str, Union[int, bool, None]]:
    """Parse ``ethtool -c IF`` into a flat dict.

    ``Adaptive RX: on  TX: off`` -> ``adaptive_rx``/``adaptive_tx`` and
    ``CQE mode RX: on  TX: off`` -> ``cqe_mode_rx``/``cqe_mode_tx`` as bool, None for "n/a".
    Every numeric ``name: value`` line -> snake_case name (``rx-usecs`` -> ``rx_usecs``) with an
    int value, None for "n/a".  ``adaptive_rx``/``adaptive_tx`` are always present.
    Lines with other shapes or non-numeric values are ignored.
    """
    tool = "ethtool -c"
    result = {"adaptive_rx": None, "adaptive_tx": None}  # type: Dict[str, Union[int, bool, None]]
    found = False
    for line in _lines(text, tool):
        if not line or line.lower().startswith("coalesce parameters for"):
            continue
        pair = _RX_TX_PAIR.match(line)
        if pair:
            prefix = _snake(pair.group("label"))
            result[prefix + "_rx"] = _on_off(pair.group("rx"), tool, line)
            result[prefix + "_tx"] = _on_off(pair.group("tx"), tool, line)
            found = True
            continue
        field = _COALESCE_FIELD.match(line)
        if field is None:
            continue
        value = field.group("value").strip()
        if value.lower() != _NA and not value.isdigit():
            continue  # not a numeric field (e.g. a multi-line profile header); ignore
        result[_snake(field.group("name"))] = _int_or_none(value, tool, line)
        found = True
    if not found:
        raise ParseError("%s: no coalesce parameters found in output" % tool)
    return result


def parse_ethtool_driver(text: str) -> Dict[str, Union[str, bool]]:
    """Parse ``ethtool -i IF``.

    Keys: driver, version, firmware_version, expansion_rom_version, bus_info (str, "" when
    empty) and supports_statistics, supports_test, supports_eeprom_access,
    supports_register_dump, supports_priv_flags (bool).  Keys the tool did not print are absent.
    """
    tool = "ethtool -i"
    result = {}  # type: Dict[str, Union[str, bool]]
    for line in _lines(text, tool):
        label, sep, value = line.partition(":")
        key = _snake(label)
        if not sep or key not in _DRIVER_KEYS:
            continue
        value = value.strip()
        if key.startswith("supports_"):
            if value not in ("yes", "no"):
                raise ParseError("%s: expected 'yes' or 'no' for %s in line %r" % (tool, label.strip(), line))
            result[key] = value == "yes"
        else:
            result[key] = value
    if "driver" not in result:
        raise ParseError("%s: no 'driver:' line in output" % tool)
    return result


def parse_ethtool_stats(text: str) -> Dict[str, int]:
    """Parse ``ethtool -S IF`` into ``{name: int}``, names kept as printed (stripped).

    The ``NIC statistics:`` header is skipped; every other non-empty line must be
    ``name: integer`` or ParseError is raised.
    """
    tool = "ethtool -S"
    result = {}  # type: Dict[str, int]
    for line in _lines(text, tool):
        if not line or line.lower() == "nic statistics:":
            continue
        name, sep, value = line.rpartition(":")
        name, value = name.strip(), value.strip()
        if not sep or not name or not re.match(r"^-?\d+$", value):
            raise ParseError("%s: cannot parse statistics line %r (expected 'name: integer')" % (tool, line))
        result[name] = int(value)
    return result


def _load_json_list(text: str, tool: str) -> List[Dict[str, Any]]:
    if not isinstance(text, str):
        raise ParseError("%s: expected JSON text, got %s" % (tool, type(text).__name__))
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ParseError("%s: malformed JSON: %s" % (tool, exc)) from None
    if not isinstance(data, list):
        raise ParseError("%s: expected a JSON list of interfaces, got %s" % (tool, type(data).__name__))
    for index, item in enumerate(data):
        if not isinstance(item, dict):
            raise ParseError("%s: entry %d is %s, not an object" % (tool, index, type(item).__name__))
        if not isinstance(item.get("ifname"), str):
            raise ParseError("%s: entry %d has no 'ifname' field" % (tool, index))
    return data


def parse_ip_link_json(text: str) -> List[Dict[str, Any]]:
    """Parse ``ip -j -d link show`` into one dict per interface, in the order printed.

    Keys: ifname, ifindex, mtu, min_mtu, max_mtu, operstate, address, permaddr, link_type,
    flags (list), master, kind (``linkinfo.info_kind``), parentbus, parentdev, numtxqueues,
    numrxqueues.  Anything the tool did not print is None (flags: []); min_mtu, max_mtu,
    parentbus, parentdev and the queue counts need ``-d``.
    """
    tool = "ip -j link"
    result = []  # type: List[Dict[str, Any]]
    for item in _load_json_list(text, tool):
        linkinfo = item.get("linkinfo")
        kind = linkinfo.get("info_kind") if isinstance(linkinfo, dict) else None
        flags = item.get("flags")
        result.append({
            "ifname": item["ifname"],
            "ifindex": item.get("ifindex"),
            "mtu": item.get("mtu"),
            "min_mtu": item.get("min_mtu"),
            "max_mtu": item.get("max_mtu"),
            "operstate": item.get("operstate"),
            "address": item.get("address"),
            "permaddr": item.get("permaddr"),
            "link_type": item.get("link_type"),
            "flags": list(flags) if isinstance(flags, list) else [],
            "master": item.get("master"),
            "kind": kind,
            "parentbus": item.get("parentbus"),
            "parentdev": item.get("parentdev"),
            # iproute2 prints "num_tx_queues" in JSON ("numtxqueues" in text mode); accept both
            "numtxqueues": item.get("num_tx_queues", item.get("numtxqueues")),
            "numrxqueues": item.get("num_rx_queues", item.get("numrxqueues")),
        })
    return result


def parse_ip_addr_json(text: str) -> Dict[str, List[Dict[str, Any]]]:
    """Parse ``ip -j addr show`` into ``{ifname: [{"family", "local", "prefixlen"}, ...]}``.

    Every interface printed is a key (an empty list when it has no address); addr_info
    entries without a ``local`` address are skipped.
    """
    tool = "ip -j addr"
    result = {}  # type: Dict[str, List[Dict[str, Any]]]
    for item in _load_json_list(text, tool):
        addrs = result.setdefault(item["ifname"], [])
        addr_info = item.get("addr_info") or []
        if not isinstance(addr_info, list):
            raise ParseError("%s: 'addr_info' of %s is not a list" % (tool, item["ifname"]))
        for addr in addr_info:
            if not isinstance(addr, dict) or "local" not in addr:
                continue
            addrs.append({"family": addr.get("family"), "local": addr["local"], "prefixlen": addr.get("prefixlen")})
    return result


def is_not_supported(stderr: str) -> bool:
    """True when ethtool's stderr says the driver does not implement the operation.

    Matches "Operation not supported" (EOPNOTSUPP) in any form ethtool prints it
    ("netlink error: Operation not supported", "Cannot get device ring settings: Operation not
    supported", ...) and "Unknown error 524" (the kernel-internal ENOTSUPP some drivers leak).
    Other failures ("No such device", "Operation not permitted") return False.
    """
    return bool(stderr) and _NOT_SUPPORTED.search(stderr) is not None


# --------------------------------------------------------------------------- DCB / RoCE tools
#
# iproute2 `dcb -j` prints one JSON object per command (dcb/dcb_pfc.c, dcb_app.c,
# dcb_apptrust.c): booleans for on/off values (json_print's print_on_off), arrays for the
# per-priority maps.  `mlnx_qos -i IF` (NVIDIA mlnx-tools, python/mlnx_qos) has no JSON mode; it
# is parsed by its labels ("Priority trust state:", "PFC configuration:", "prio:N dscp:...").
# `ibv_devinfo` (rdma-core) is parsed by its "name: value" labels as well.

__all__ += [
    "IB_MTU_BYTES",
    "parse_dcb_app_json",
    "parse_dcb_apptrust_json",
    "parse_dcb_pfc_json",
    "parse_ibv_devinfo",
    "parse_mlnx_qos",
]

# IB MTU enum (enum ib_mtu / ibv_mtu) -> bytes
IB_MTU_BYTES = {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}

_PRIOS = 8


def _load_json_object(text: str, tool: str) -> Dict[str, Any]:
    if not isinstance(text, str):
        raise ParseError("%s: expected JSON text, got %s" % (tool, type(text).__name__))
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ParseError("%s: malformed JSON: %s" % (tool, exc)) from None
    if not isinstance(data, dict):
        raise ParseError("%s: expected a JSON object, got %s" % (tool, type(data).__name__))
    return data


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
    data = _load_json_object(text, tool)
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
    data = _load_json_object(text, tool)
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
    data = _load_json_object(text, tool)
    order = data.get("order", [])
    if not isinstance(order, list) or not all(isinstance(s, str) for s in order):
        raise ParseError("%s: 'order' is not a list of selector names" % tool)
    return list(order)


_MLNX_DSCP_LINE = re.compile(r"^prio:\s*(?P<prio>\d+)\s+dscp:\s*(?P<list>[\d,\s]*)$")
_MLNX_TC_LINE = re.compile(r"^tc:\s*(?P<tc>\d+)\s+ratelimit:\s*(?P<rate>[^,]+),\s*tsa:\s*(?P<tsa>.+)$")


def _int_row(line: str, label: str, tool: str) -> List[int]:
    tokens = line.split()[len(label.split()):]
    try:
        return [int(t) for t in tokens]
    except ValueError:
        raise ParseError("%s: expected integers after %r in line %r" % (tool, label, line)) from None


def parse_mlnx_qos(text: str) -> Dict[str, Any]:
    """Parse the report ``mlnx_qos -i IF`` prints (also after every set command).

    Returns ``{"dcbx_mode": "os"|"firmware"|None, "trust": "dscp"|"pcp"|"none"|None,
    "dscp2prio": {dscp: prio}, "default_priority": [prio, ...], "cable_len": int|None,
    "pfc": [priorities with PFC on], "pfc_buffer": [8 buffer indices]|None,
    "receive_buffer_size": [sizes]|None, "tc": {tc: {"ratelimit", "tsa", "priorities"}},
    "notes": [lines such as "Buffers commands are not supported on your system"]}``.

    mlnx_qos prints the dscp2prio table only when trust is dscp; a priority with more than eight
    DSCPs wraps onto further ``prio:N dscp:`` lines.  ParseError when there is no
    ``PFC configuration`` with an ``enabled`` row of 8 values.
    """
    tool = "mlnx_qos"
    result = {
        "dcbx_mode": None, "trust": None, "dscp2prio": {}, "default_priority": [], "cable_len": None,
        "pfc": None, "pfc_buffer": None, "receive_buffer_size": None, "tc": {}, "notes": [],
    }  # type: Dict[str, Any]
    section = None  # type: Optional[str]
    pfc_header = None  # type: Optional[List[int]]
    current_tc = None  # type: Optional[int]
    for line in _lines(text, tool):
        if not line:
            continue
        lower = line.lower()
        if lower.startswith("dcbx mode:"):
            mode = lower.split(":", 1)[1].strip()
            result["dcbx_mode"] = "os" if mode.startswith("os") else "firmware" if mode.startswith("firmware") else mode
            section = None
        elif lower.startswith("priority trust state:"):
            result["trust"] = lower.split(":", 1)[1].strip() or None
            section = None
        elif lower.startswith("dscp2prio mapping:"):
            section = "dscp"
        elif lower.startswith("default priority:"):
            section = "default"
        elif lower.startswith("receive buffer size"):
            sizes = line.split(":", 1)[1].strip().rstrip(",")
            values = [v for v in sizes.split(",") if v and not v.startswith("total_size")]
            try:
                result["receive_buffer_size"] = [int(v) for v in values]
            except ValueError:
                raise ParseError("%s: cannot parse buffer sizes in line %r" % (tool, line)) from None
            section = None
        elif lower.startswith("cable len:"):
            result["cable_len"] = _int_or_none(line.split(":", 1)[1], tool, line)
            section = None
        elif lower.startswith("pfc configuration:"):
            section = "pfc"
        elif section == "pfc" and lower.startswith("priority"):
            pfc_header = _int_row(line, "priority", tool)
        elif section == "pfc" and lower.startswith("enabled"):
            row = _int_row(line, "enabled", tool)
            header = pfc_header or list(range(_PRIOS))
            if len(row) != _PRIOS or len(header) != _PRIOS or any(v not in (0, 1) for v in row):
                raise ParseError("%s: PFC 'enabled' row must hold 8 values 0/1: %r" % (tool, line))
            result["pfc"] = sorted(p for p, v in zip(header, row) if v)
        elif section == "pfc" and lower.startswith("buffer"):
            result["pfc_buffer"] = _int_row(line, "buffer", tool)
        elif _MLNX_TC_LINE.match(line):
            m = _MLNX_TC_LINE.match(line)
            current_tc = int(m.group("tc"))
            result["tc"][current_tc] = {"ratelimit": m.group("rate").strip(), "tsa": m.group("tsa").strip(),
                                        "priorities": []}
            section = "tc"
        elif section == "tc" and lower.startswith("priority:") and current_tc is not None:
            result["tc"][current_tc]["priorities"].append(_int_or_none(line.split(":", 1)[1], tool, line))
        elif section == "dscp" and _MLNX_DSCP_LINE.match(line):
            m = _MLNX_DSCP_LINE.match(line)
            prio = int(m.group("prio"))
            for item in m.group("list").replace(" ", "").split(","):
                if item:
                    dscp = int(item)
                    if dscp > 63 or prio >= _PRIOS:
                        raise ParseError("%s: dscp2prio line %r is out of range" % (tool, line))
                    result["dscp2prio"][dscp] = prio
        elif section == "default" and lower.startswith("prio:"):
            result["default_priority"].append(_int_or_none(line.split(":", 1)[1], tool, line))
        elif "not supported" in lower or lower.startswith("*"):
            result["notes"].append(line.strip("* "))
    if result["pfc"] is None:
        raise ParseError("%s: no 'PFC configuration' with an 'enabled' row in output" % tool)
    return result


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
    for line in _lines(text, tool):
        field = _split_field(line)
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
