# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""iproute2's ``dcb``: its argv table and the parsers of ``dcb -j pfc|app|apptrust|ets|buffer show``
(and of ``maxrate``).  Every parser reads the JSON the tool runs with and the text form too (what
kernel and iproute2 patch posts show, and what ``dcb`` prints without ``-j``).

``dcb -j`` prints one JSON object per command (dcb/dcb_pfc.c, dcb_app.c, dcb_apptrust.c):
booleans for on/off values (json_print's print_on_off), arrays for the per-priority maps.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import (
    ParseError, is_not_supported, load_json_object, split_lines)
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._runner import Failure, Tool

_PRIOS = 8   # IEEE 802.1p priorities


def _json_bool(value: Any, tool: str, field: str) -> bool:
    # dcb prints booleans; accept "on"/"off" too (print_on_off before iproute2 5.11 era forks)
    if isinstance(value, bool):
        return value
    if value in ("on", "off"):
        return value == "on"
    raise ParseError("%s: %s holds %r, expected true/false" % (tool, field, value))


def _isnum(text: str) -> bool:
    """ASCII digits only (str.isdigit() also takes '²', which int() refuses)."""
    return bool(text) and all("0" <= c <= "9" for c in text)


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
    if isinstance(text, str) and not _is_json(text):
        return parse_dcb_pfc(text)
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
    """``[[key, prio], ...]`` of ``dcb -j app show``.  iproute2 6.5 and later (commit a245bfe1, "dcb: app:
    modify dcb_app_print_filtered() for dcb-rewr reuse") print a third element, the " " separator
    string of the text form, into every entry: ``[26, 3, " "]``; it is ignored."""
    out = {}  # type: Dict[int, List[int]]
    items = data.get(field, [])
    if not isinstance(items, list):
        raise ParseError("%s: %r is not a list" % (tool, field))
    for item in items:
        if not isinstance(item, list) or len(item) not in (2, 3) or (len(item) == 3 and not isinstance(item[2], str)):
            raise ParseError("%s: %s entry %r is not a [key, priority] pair" % (tool, field, item))
        key = _json_uint(item[0], tool, field)
        prio = _json_uint(item[1], tool, field)
        _add_pair(out, key, prio, max_key, tool, field, item)
    return dict((k, sorted(v)) for k, v in out.items())


def _add_pair(out: Dict[Any, List[int]], key: Any, prio: int, max_key: int, tool: str, field: str, item: Any) -> None:
    if (isinstance(key, int) and key > max_key) or prio >= _PRIOS:
        raise ParseError("%s: %s entry %r is out of range (key 0..%d, priority 0..7)" % (tool, field, item, max_key))
    out.setdefault(key, [])
    if prio not in out[key]:
        out[key].append(prio)


_APP_FIELDS = (("dscp_prio", "dscp-prio", 63), ("ethtype_prio", "ethtype-prio", 0xffff),
               ("stream_port_prio", "stream-port-prio", 0xffff), ("dgram_port_prio", "dgram-port-prio", 0xffff),
               ("port_prio", "port-prio", 0xffff))
# /etc/iproute2/rt_dsfield: the names ``dcb app show`` prints for DSCPs (without -N); values are DSCPs
_DSCP_NAMES = dict([("default", 0), ("EF", 46)] + [("CS%d" % n, 8 * n) for n in range(8)]
                   + [("AF%d%d" % (c, d), 8 * c + 2 * d) for c in range(1, 5) for d in range(1, 4)])
_PCP_KEY = re.compile(r"^([0-7])(nd|de)?$")


def _is_json(text: Any) -> bool:
    return isinstance(text, str) and text.lstrip().startswith(("{", "["))


def _text_tokens(text: str, tool: str) -> List[List[str]]:
    """The whitespace-split non-empty lines of a dcb text report; ParseError when there are none."""
    rows = [line.split() for line in split_lines(text, tool) if line]
    if not rows:
        raise ParseError("%s: empty output" % tool)
    return rows


def _text_fields(text: str, tool: str, arrays: Tuple[str, ...]) -> Dict[str, Any]:
    """``dcb OBJ show`` text: ``name value`` scalars and ``name k:v k:v ...`` arrays on each line.

    ``arrays`` names the keywords whose values are ``k:v`` items; any other keyword takes the
    one token after it.  A token that is neither is a ParseError naming the line."""
    out = {}  # type: Dict[str, Any]
    for row in _text_tokens(text, tool):
        i = 0
        line = " ".join(row)
        while i < len(row):
            name = row[i].rstrip(":").replace("_", "-")
            if name in arrays:
                items = []
                i += 1
                while i < len(row) and ":" in row[i] and row[i].replace("_", "-").rstrip(":") not in arrays:
                    key, _sep, value = row[i].partition(":")
                    items.append((key, value))
                    i += 1
                out[name] = items
            elif i + 1 < len(row) and ":" not in row[i + 1]:
                out[name] = row[i + 1]
                i += 2
            else:
                raise ParseError("%s: cannot read %r in line %r" % (tool, row[i], line))
    return out


def _text_u8_array(items: Any, name: str, tool: str, hi: int) -> List[int]:
    """``0:0 1:3 ... 7:0`` → a list of 8 ints in 0..hi, by key."""
    values = [None] * _PRIOS  # type: List[Any]
    for key, value in items or []:
        if not _isnum(key) or int(key) >= _PRIOS or not _isnum(value) or int(value) > hi:
            raise ParseError("%s: %s item %s:%s is out of range (0..7:0..%d)" % (tool, name, key, value, hi))
        values[int(key)] = int(value)
    if any(v is None for v in values):
        raise ParseError("%s: %r does not list all 8 entries" % (tool, name))
    return values


def parse_dcb_pfc(text: str) -> Dict[str, Any]:
    """``dcb pfc show dev IF`` as text (``pfc-cap 8 macsec-bypass off delay 0`` / ``prio-pfc 0:off ...``),
    read into the same dict as :func:`parse_dcb_pfc_json`."""
    tool = "dcb pfc show"
    if _is_json(text):
        return parse_dcb_pfc_json(text)
    fields = _text_fields(text, tool, ("prio-pfc",))
    if "prio-pfc" not in fields:
        raise ParseError("%s: no 'prio-pfc' line in output" % tool)
    flags = [None] * _PRIOS  # type: List[Any]
    for key, value in fields["prio-pfc"]:
        if not _isnum(key) or int(key) >= _PRIOS or value not in ("on", "off"):
            raise ParseError("%s: prio-pfc item %s:%s is not PRIO:on|off" % (tool, key, value))
        flags[int(key)] = value == "on"
    if any(v is None for v in flags):
        raise ParseError("%s: 'prio-pfc' does not list all 8 priorities" % tool)
    return {
        "pfc_cap": _text_uint(fields.get("pfc-cap"), tool, "pfc-cap"),
        "macsec_bypass": None if "macsec-bypass" not in fields else _json_bool(fields["macsec-bypass"], tool, "macsec-bypass"),
        "delay": _text_uint(fields.get("delay"), tool, "delay"),
        "enabled": [p for p in range(_PRIOS) if flags[p]],
    }


def _text_uint(value: Optional[str], tool: str, field: str) -> Optional[int]:
    if value is None:
        return None
    if not _isnum(value):
        raise ParseError("%s: %s holds %r, expected an unsigned integer" % (tool, field, value))
    return int(value)


def parse_dcb_app_json(text: str) -> Dict[str, Any]:
    """Parse ``dcb -j app show dev IF`` (the IEEE APP table).

    Returns ``{"dscp_prio": {dscp: [priorities]}, "default_prio": [priorities],
    "ethtype_prio": {ethertype: [priorities]}, "stream_port_prio": {...}, "dgram_port_prio": {...},
    "port_prio": {...}, "pcp_prio": {"1de": [priorities], ...}}``.  The kernel's table may hold several
    priorities for one key, so every value is a sorted list.  An empty table prints ``{}`` and
    parses to empty maps.  Entries of iproute2 6.5+ carry a third element (see :func:`_pairs`).
    The text form (``dcb app show``, DSCPs by name as /etc/iproute2/rt_dsfield has them) is read too.
    """
    tool = "dcb app show"
    if not _is_json(text):
        return _parse_dcb_app_text(text, tool)
    data = load_json_object(text, tool)
    default = data.get("default_prio", [])
    if not isinstance(default, list):
        raise ParseError("%s: 'default_prio' is not a list" % tool)
    out = {"default_prio": sorted(set(_json_uint(p, tool, "default_prio") for p in default))}  # type: Dict[str, Any]
    for field, _name, max_key in _APP_FIELDS:
        out[field] = _pairs(data, field, tool, max_key)
    pcp = {}  # type: Dict[Any, List[int]]
    items = data.get("pcp_prio", [])
    if not isinstance(items, list):
        raise ParseError("%s: 'pcp_prio' is not a list" % tool)
    for item in items:
        if not isinstance(item, list) or len(item) not in (2, 3):
            raise ParseError("%s: pcp_prio entry %r is not a [pcp, priority] pair" % (tool, item))
        _add_pair(pcp, _pcp_key(item[0], tool), _json_uint(item[1], tool, "pcp_prio"), 0, tool, "pcp_prio", item)
    out["pcp_prio"] = dict((k, sorted(v)) for k, v in pcp.items())
    return out


def _pcp_key(value: Any, tool: str) -> str:
    """PCP/DEI of ``pcp-prio``: ``1de``/``1nd`` as printed, a bare number (``dcb -N``) as ``Nnd``."""
    text = str(value) if isinstance(value, (int, str)) and not isinstance(value, bool) else ""
    m = _PCP_KEY.match(text)
    if not m:
        raise ParseError("%s: pcp-prio key %r is not 0..7 with an optional nd/de" % (tool, value))
    return m.group(1) + (m.group(2) or "nd")


def _parse_dcb_app_text(text: str, tool: str) -> Dict[str, Any]:
    out = dict((field, {}) for field, _n, _m in _APP_FIELDS)  # type: Dict[str, Any]
    out["default_prio"], out["pcp_prio"] = [], {}
    names = dict((name, (field, max_key)) for field, name, max_key in _APP_FIELDS)
    for row in _text_tokens(text, tool):
        head, rest = row[0], row[1:]
        if head == "default-prio":
            for p in rest:
                if not _isnum(p) or int(p) >= _PRIOS:
                    raise ParseError("%s: default-prio %r is not a priority 0..7 in line %r" % (tool, p, " ".join(row)))
                out["default_prio"] = sorted(set(out["default_prio"] + [int(p)]))
            continue
        if head not in names and head != "pcp-prio":
            raise ParseError("%s: unknown selector %r in line %r" % (tool, head, " ".join(row)))
        for item in rest:
            key, sep, prio = item.rpartition(":")
            if not sep or not _isnum(prio):
                raise ParseError("%s: %s item %r is not KEY:PRIO" % (tool, head, item))
            if head == "pcp-prio":
                _add_pair(out["pcp_prio"], _pcp_key(key, tool), int(prio), 0, tool, head, item)
                continue
            field, max_key = names[head]
            if head == "dscp-prio" and key in _DSCP_NAMES:
                number = _DSCP_NAMES[key]
            elif head == "ethtype-prio":
                try:
                    number = int(key, 16)
                except ValueError:
                    raise ParseError("%s: %s item %r has no hexadecimal EtherType" % (tool, head, item)) from None
            elif _isnum(key):
                number = int(key)
            else:
                raise ParseError("%s: %s item %r has an unknown key" % (tool, head, item))
            _add_pair(out[field], number, int(prio), max_key, tool, head, item)
    for field in [f for f, _n, _m in _APP_FIELDS] + ["pcp_prio"]:
        out[field] = dict((k, sorted(v)) for k, v in out[field].items())
    return out


def parse_dcb_apptrust_json(text: str) -> List[str]:
    """Parse ``dcb -j apptrust show dev IF`` (iproute2 6.3+): the trusted selectors, in order
    (``["dscp", "pcp"]``); ``[]`` when the driver trusts none.  The text form ``order: dscp pcp``
    is read too."""
    tool = "dcb apptrust show"
    if not _is_json(text):
        rows = _text_tokens(text, tool)
        if len(rows) != 1 or rows[0][0].rstrip(":") not in ("order", "trust-order"):
            raise ParseError("%s: expected one 'order: SELECTOR ...' line, got %r" % (tool, text.strip()[:80]))
        return rows[0][1:]
    data = load_json_object(text, tool)
    order = data.get("order", [])
    if not isinstance(order, list) or not all(isinstance(s, str) for s in order):
        raise ParseError("%s: 'order' is not a list of selector names" % tool)
    return list(order)


_TSA = ("strict", "cbs", "ets", "vendor")


def parse_dcb_ets(text: str) -> Dict[str, Any]:
    """``dcb [-j] ets show dev IF``: ``{"willing", "ets_cap", "cbs", "prio_tc": [8 TCs], "tc_tsa": [8 names],
    "tc_bw": [8 percents], "pg_bw", "reco_prio_tc", "reco_tc_tsa", "reco_tc_bw"}`` (a list absent from the
    output is None).  The TSA of an unknown algorithm prints as ``???`` and is kept as printed."""
    tool = "dcb ets show"
    arrays = ("tc-bw", "pg-bw", "tc-tsa", "prio-tc", "reco-tc-bw", "reco-tc-tsa", "reco-prio-tc")
    out = {}  # type: Dict[str, Any]
    if _is_json(text):
        data = load_json_object(text, tool)
        for flag in ("willing", "cbs"):
            out[flag] = _json_bool(data[flag], tool, flag) if flag in data else None
        out["ets_cap"] = _json_uint(data["ets_cap"], tool, "ets_cap") if "ets_cap" in data else None
        for name in arrays:
            field = name.replace("-", "_")
            value = data.get(field)
            if value is None:
                out[field] = None
                continue
            if not isinstance(value, list) or len(value) != _PRIOS:
                raise ParseError("%s: %r is not a list of %d values" % (tool, field, _PRIOS))
            if field.endswith("tsa"):
                if not all(isinstance(v, str) for v in value):
                    raise ParseError("%s: %r holds a non-name: %r" % (tool, field, value))
                out[field] = list(value)
            else:
                out[field] = [_ranged(_json_uint(v, tool, field), field, tool) for v in value]
    else:
        fields = _text_fields(text, tool, arrays)
        for flag in ("willing", "cbs"):
            out[flag] = None if flag not in fields else _json_bool(fields[flag], tool, flag)
        out["ets_cap"] = _text_uint(fields.get("ets-cap"), tool, "ets-cap")
        for name in arrays:
            field = name.replace("-", "_")
            if name not in fields:
                out[field] = None
            elif field.endswith("tsa"):
                tsa = [None] * _PRIOS  # type: List[Any]
                for key, value in fields[name]:
                    if not _isnum(key) or int(key) >= _PRIOS or not value:
                        raise ParseError("%s: %s item %s:%s is not TC:TSA" % (tool, name, key, value))
                    tsa[int(key)] = value
                if any(v is None for v in tsa):
                    raise ParseError("%s: %r does not list all 8 TCs" % (tool, name))
                out[field] = tsa
            else:
                out[field] = _text_u8_array(fields[name], name, tool, 100 if field.endswith("bw") else _PRIOS - 1)
    if all(out[k.replace("-", "_")] is None for k in arrays):
        raise ParseError("%s: no prio-tc, tc-tsa or tc-bw in output" % tool)
    return out


def _ranged(value: int, field: str, tool: str) -> int:
    hi = 100 if field.endswith("bw") else _PRIOS - 1
    if value > hi:
        raise ParseError("%s: %s holds %d, allowed 0..%d" % (tool, field, value, hi))
    return value


# print_size (iproute2 lib/json_print.c): bytes with b, Kb, Mb, Gb in powers of 1024
_SIZE = re.compile(r"^(?P<n>\d+(?:\.\d+)?)(?P<unit>[KMG]?)b$")
# print_rate: bit/s with bit, Kbit, Mbit, Gbit, Tbit in powers of 1000 (or Kibit ... with -i)
_RATE = re.compile(r"^(?P<n>\d+(?:\.\d+)?)(?P<unit>[KMGT]?)(?P<iec>i?)bit$")


def _size_bytes(token: str, tool: str) -> int:
    if _isnum(token):
        return int(token)
    m = _SIZE.match(token)
    if not m:
        raise ParseError("%s: %r is not a size (N, Nb, NKb, NMb)" % (tool, token))
    return int(float(m.group("n")) * 1024 ** " KMG".index(m.group("unit") or " "))


def parse_dcb_buffer(text: str) -> Dict[str, Any]:
    """``dcb [-j] buffer show dev IF``: ``{"prio_buffer": [8 buffer indices], "buffer_size": [8 sizes in bytes],
    "total_size": bytes|None}``.  The text form prints sizes as iproute2's print_size rounds them
    (``10Kb``): read back in bytes, exact only to that rounding."""
    tool = "dcb buffer show"
    if _is_json(text):
        data = load_json_object(text, tool)
        prio, size = data.get("prio_buffer"), data.get("buffer_size")
        if not isinstance(prio, list) or len(prio) != _PRIOS or not isinstance(size, list) or len(size) != _PRIOS:
            raise ParseError("%s: 'prio_buffer' and 'buffer_size' must be lists of %d values" % (tool, _PRIOS))
        total = data.get("total_size")
        return {"prio_buffer": [_ranged(_json_uint(v, tool, "prio_buffer"), "prio_buffer", tool) for v in prio],
                "buffer_size": [_json_uint(v, tool, "buffer_size") for v in size],
                "total_size": None if total is None else _json_uint(total, tool, "total_size")}
    fields = _text_fields(text, tool, ("prio-buffer", "buffer-size"))
    if "prio-buffer" not in fields and "buffer-size" not in fields:
        raise ParseError("%s: no prio-buffer or buffer-size line in output" % tool)
    sizes = None  # type: Optional[List[int]]
    if "buffer-size" in fields:
        sizes = [None] * _PRIOS  # type: ignore
        for key, value in fields["buffer-size"]:
            if not _isnum(key) or int(key) >= _PRIOS:
                raise ParseError("%s: buffer-size item %s:%s has no buffer 0..7" % (tool, key, value))
            sizes[int(key)] = _size_bytes(value, tool)  # type: ignore
        if any(v is None for v in sizes):  # type: ignore
            raise ParseError("%s: 'buffer-size' does not list all 8 buffers" % tool)
    total = fields.get("total-size")
    return {"prio_buffer": _text_u8_array(fields["prio-buffer"], "prio-buffer", tool, _PRIOS - 1)
            if "prio-buffer" in fields else None,
            "buffer_size": sizes, "total_size": None if total is None else _size_bytes(total, tool)}


def parse_dcb_maxrate(text: str) -> Dict[str, Any]:
    """``dcb [-j] maxrate show dev IF``: ``{"tc_maxrate": [8 rates]}``, bit/s from the text form
    (``0:25Gbit``), the numbers as printed from JSON."""
    tool = "dcb maxrate show"
    if _is_json(text):
        rates = load_json_object(text, tool).get("tc_maxrate")
        if not isinstance(rates, list) or len(rates) != _PRIOS:
            raise ParseError("%s: 'tc_maxrate' is not a list of %d values" % (tool, _PRIOS))
        return {"tc_maxrate": [_json_uint(v, tool, "tc_maxrate") for v in rates]}
    fields = _text_fields(text, tool, ("tc-maxrate",))
    if "tc-maxrate" not in fields:
        raise ParseError("%s: no tc-maxrate line in output" % tool)
    rates = [None] * _PRIOS
    for key, value in fields["tc-maxrate"]:
        m = _RATE.match(value)
        if not _isnum(key) or int(key) >= _PRIOS or not m:
            raise ParseError("%s: tc-maxrate item %s:%s is not TC:RATE" % (tool, key, value))
        base = 1024 if m.group("iec") else 1000
        rates[int(key)] = int(float(m.group("n")) * base ** " KMGT".index(m.group("unit") or " "))
    if any(v is None for v in rates):
        raise ParseError("%s: 'tc-maxrate' does not list all 8 TCs" % tool)
    return {"tc_maxrate": rates}


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
    "ets": ["-j", "ets", "show", "dev", "{ifname}"],
    "buffer": ["-j", "buffer", "show", "dev", "{ifname}"],
    "set_pfc": ["pfc", "set", "dev", "{ifname}", "prio-pfc", "{*prios}"],
    "set_apptrust": ["apptrust", "set", "dev", "{ifname}", "order", "{*order}"],
    "add_app": ["app", "add", "dev", "{ifname}", "dscp-prio", "{*pairs}"],
    "del_app": ["app", "del", "dev", "{ifname}", "dscp-prio", "{*pairs}"],
    "replace_app": ["app", "replace", "dev", "{ifname}", "dscp-prio", "{*pairs}"],
}, parsers={
    "pfc": parse_dcb_pfc_json,
    "app": parse_dcb_app_json,
    "apptrust": parse_dcb_apptrust_json,
    "ets": parse_dcb_ets,
    "buffer": parse_dcb_buffer,
}, checks={
    "pfc": _show_check, "app": _show_check, "apptrust": _show_check, "ets": _show_check, "buffer": _show_check,
    "set_pfc": _set_check, "set_apptrust": _set_check, "add_app": _set_check, "del_app": _set_check,
    "replace_app": _set_check,
})


def show(host: Host, obj: str, ifname: str) -> Any:
    """Parsed ``dcb -j OBJ show dev IF`` (pfc, app, apptrust, ets, buffer); NotSupported when the driver (or
    this iproute2) lacks it."""
    return DCB.call(host, obj, ifname=ifname)
