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
