# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""ethtool: its argv table and the parsers of what it prints (``-g``, ``-l``, ``-c``, ``-i``, ``-S``).

Parsing is by field name ("RX:", "Combined:", "rx-usecs:" ...), never by column or line
position, so the ioctl-era layout (ethtool < 5.6), the netlink layout of ethtool 5.x/6.1 and the
tab-aligned layout of newer ethtool 6.x all parse the same way.  Lines a parser does not know are
ignored (ring extras are kept under "extra"), so newer tool versions do not break it.
"""
from __future__ import annotations

import re

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import NotSupported
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import (
    lazy_re, NA, ParseError, int_or_none, load_json, snake, split_field, split_lines)
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._runner import Tool

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional, Union
    Scalar = Union[int, str, None]

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
_RX_TX_PAIR = lazy_re(r"^(?P<label>[A-Za-z][A-Za-z ]*?)\s+RX:\s*(?P<rx>\S+)\s+TX:\s*(?P<tx>\S+)$")
# "rx-usecs: 8", "rx-usecs:\t8", and "tx-aggr-time-usecs\t0" (ethtool 6.x prints that one without a colon)
_COALESCE_FIELD = lazy_re(r"^(?P<name>[a-z][a-z0-9-]*)(?::\s*|\s+)(?P<value>\S.*)$")


def _scalar(value: str) -> Scalar:
    """Value of a free-form extra line: int when numeric, None for 'n/a', else the text."""
    value = value.strip()
    if value.lower() == NA:
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
    if value == NA:
        return None
    raise ParseError("%s: expected 'on', 'off' or 'n/a' in line %r" % (tool, line))


def _parse_max_current(
    text: str, tool: str, fields: Dict[str, str], extra: Optional[Dict[str, Scalar]]
) -> Dict[str, Any]:
    """Shared walker for the two-section layout of ``ethtool -g`` and ``ethtool -l``.

    Known labels fill ``max``/``current`` (every field present, None when n/a or absent).
    Other labels go to ``extra`` (when given; with a ``max_`` prefix in the maximums section)
    or are ignored.

    A recent ethtool (one that prints ``HDS thresh``, so >= 6.14) was seen printing no section
    headers at all: the first block is then the maxima and the second, which starts where a
    known label (``RX:``) comes again, the current values.  Real capture:
    ``real/ethtool-g/atlantic.systemd-41289.eth0.no-headers.txt``.
    """
    sections = {
        "max": dict.fromkeys(fields.values()),
        "current": dict.fromkeys(fields.values()),
    }  # type: Dict[str, Any]
    seen = set()  # type: set
    section = None  # type: Optional[str]
    headerless = False
    labels_in_max = set()  # type: set
    for line in split_lines(text, tool):
        lowered = line.lower().rstrip(":").strip()
        if lowered == _MAX_HEADER:
            section = "max"
            seen.add(section)
            continue
        if lowered == _CUR_HEADER:
            section = "current"
            seen.add(section)
            continue
        field = split_field(line)
        if section is None:
            if field is None or field[0] not in fields:
                continue  # "Ring parameters for eth0:" and anything else before the first section
            section, headerless = "max", True  # ethtool >= 6.14: no headers, maxima come first
            seen.add(section)
        if field is None:
            continue
        label, value = field
        if headerless and section == "max" and label in fields:
            if label in labels_in_max:
                section = "current"  # the label comes again: the current-values block starts
                seen.add(section)
            else:
                labels_in_max.add(label)
        if label in fields:
            sections[section][fields[label]] = int_or_none(value, tool, line)
        elif extra is not None:
            key = snake(label)
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
    for line in split_lines(text, tool):
        if not line or line.lower().startswith("coalesce parameters for"):
            continue
        pair = _RX_TX_PAIR.match(line)
        if pair:
            prefix = snake(pair.group("label"))
            result[prefix + "_rx"] = _on_off(pair.group("rx"), tool, line)
            result[prefix + "_tx"] = _on_off(pair.group("tx"), tool, line)
            found = True
            continue
        field = _COALESCE_FIELD.match(line)
        if field is None:
            continue
        value = field.group("value").strip()
        if value.lower() != NA and not value.isdigit():
            continue  # not a numeric field (e.g. a multi-line profile header); ignore
        result[snake(field.group("name"))] = int_or_none(value, tool, line)
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
    for line in split_lines(text, tool):
        label, sep, value = line.partition(":")
        key = snake(label)
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
    for line in split_lines(text, tool):
        if not line or line.lower() == "nic statistics:":
            continue
        name, sep, value = line.rpartition(":")
        name, value = name.strip(), value.strip()
        if not sep or not name or not re.match(r"^-?\d+$", value):
            raise ParseError("%s: cannot parse statistics line %r (expected 'name: integer')" % (tool, line))
        result[name] = int(value)
    return result


# --------------------------------------------------------------------------- --json (ethtool >= 6.x)
# ``ethtool --json -g|-c IF`` prints ``[ {"ifname": .., "rx-max": 256, ...} ]``: a key the driver does not
# report is left out (the text's "n/a"), booleans are JSON booleans.  ethtool 6.1 (Debian 12) answers
# "bad command line argument(s)" and 6.14 "JSON output not available" for -l/-i; read() then reads the
# text.  Real captures: real/ethtool-json/virtio_net.ethtool-6.14.eth0.{g,c}.json beside the same
# device's text output.
# What an ethtool without --json for the subcommand answers (6.1: "bad command line argument(s)";
# 6.14 for -l/-i: "JSON output not available for this subcommand").
_NO_JSON = lazy_re(r"bad command line argument|JSON output not available|unrecognized option")
_RING_JSON = {"rx-max": ("max", "rx"), "rx-mini-max": ("max", "rx_mini"), "rx-jumbo-max": ("max", "rx_jumbo"),
              "tx-max": ("max", "tx"), "rx": ("current", "rx"), "rx-mini": ("current", "rx_mini"),
              "rx-jumbo": ("current", "rx_jumbo"), "tx": ("current", "tx")}


def _json_object(text: str, tool: str) -> Dict[str, Any]:
    data = load_json(text, tool)
    if not isinstance(data, list) or len(data) != 1 or not isinstance(data[0], dict):
        got = "a list of %d item(s)" % len(data) if isinstance(data, list) else type(data).__name__
        raise ParseError("%s: expected a list of one object, got %s" % (tool, got))
    return data[0]


def _json_value(key: str, value: Any, tool: str) -> Scalar:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        return value
    raise ParseError("%s: %r is %r, not a number, a boolean or a word" % (tool, key, value))


def parse_ethtool_rings_json(text: str) -> Dict[str, Any]:
    """``ethtool --json -g IF`` into what :func:`parse_ethtool_rings` gives for the same device: ``max`` and
    ``current`` (None where the key is absent), the other keys in ``extra`` under the text's names
    (booleans as the text's "on"/"off")."""
    tool = "ethtool --json -g"
    obj = _json_object(text, tool)
    result = {"max": dict.fromkeys(_RING_FIELDS.values()), "current": dict.fromkeys(_RING_FIELDS.values()),
              "extra": {}}  # type: Dict[str, Any]
    for key, value in obj.items():
        if key == "ifname":
            continue
        value = _json_value(key, value, tool)
        if key in _RING_JSON:
            if not isinstance(value, int) or isinstance(value, bool):
                raise ParseError("%s: %r is %r, not a ring size" % (tool, key, value))
            section, name = _RING_JSON[key]
            result[section][name] = value
        else:
            result["extra"][snake(key)] = ("on" if value else "off") if isinstance(value, bool) else value
    return result


def parse_ethtool_coalesce_json(text: str) -> Dict[str, Union[int, bool, None]]:
    """``ethtool --json -c IF`` into what :func:`parse_ethtool_coalesce` gives for the same device, but for
    the keys the driver does not report (absent here, None there)."""
    tool = "ethtool --json -c"
    obj = _json_object(text, tool)
    result = {"adaptive_rx": None, "adaptive_tx": None}  # type: Dict[str, Union[int, bool, None]]
    for key, value in obj.items():
        if key == "ifname":
            continue
        value = _json_value(key, value, tool)
        if isinstance(value, str):
            continue  # no word-valued coalesce parameter is read (as the text reader ignores them)
        result[snake(key)] = value
    return result


# --------------------------------------------------------------------------- the tool
ETHTOOL = Tool("ethtool", {
    "rings": ["-g", "{ifname}"],
    "rings_json": ["--json", "-g", "{ifname}"],
    "coalesce_json": ["--json", "-c", "{ifname}"],
    "channels": ["-l", "{ifname}"],
    "coalesce": ["-c", "{ifname}"],
    "driver": ["-i", "{ifname}"],
    "stats": ["-S", "{ifname}"],
    "set_rings": ["-G", "{ifname}", "{*args}"],
    "set_channels": ["-L", "{ifname}", "{*args}"],
    "set_coalesce": ["-C", "{ifname}", "{*args}"],
}, parsers={
    "rings": parse_ethtool_rings,
    "rings_json": parse_ethtool_rings_json,
    "coalesce_json": parse_ethtool_coalesce_json,
    "channels": parse_ethtool_channels,
    "coalesce": parse_ethtool_coalesce,
    "driver": parse_ethtool_driver,
    "stats": parse_ethtool_stats,
})


def read(host: Host, what: str, ifname: str) -> Optional[Dict[str, Any]]:
    """Parsed ``ethtool -g|-l|-c|-i IF`` (``what``: rings, channels, coalesce, driver); None when
    the driver does not support it.  Rings and coalescing are read as JSON where this ethtool prints
    it (``--json``, ethtool >= 6.x) and from the text otherwise, or when the JSON run failed for any
    reason (the text run then names the failure, "not supported" included)."""
    facts = getattr(host, "tool_facts", {})
    if what + "_json" in ETHTOOL.formats and not facts.get("ethtool_no_json"):
        rc, out, err = ETHTOOL.run(host, what + "_json", ifname=ifname)
        if rc == 0:
            try:
                return ETHTOOL.parsers[what + "_json"](out)
            except ParseError:
                pass  # a JSON layout this reader does not know: the text says the same
        elif _NO_JSON.search(err or out or ""):
            facts["ethtool_no_json"] = True  # an older ethtool: the rest of this call reads the text at once
    try:
        return ETHTOOL.call(host, what, ifname=ifname)
    except NotSupported:
        return None


def write(host: Host, what: str, ifname: str, args: List[str]) -> None:
    """``ethtool -G|-L|-C IF ARGS`` (``what``: rings, channels, coalesce)."""
    ETHTOOL.call(host, "set_" + what, ifname=ifname, args=args)
