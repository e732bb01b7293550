# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The parsers of iproute2's ``dcb -j pfc|app|apptrust|ets|buffer show`` (and of ``maxrate``); the
argv table that runs them is ``_dcb``.  Every parser reads the JSON the tool runs with and the text
form too (what kernel and iproute2 patch posts show, and what ``dcb`` prints without ``-j``).

``dcb -j`` prints one JSON object per command (dcb/dcb_pfc.c, dcb_app.c, dcb_apptrust.c):
booleans for on/off values (json_print's print_on_off), arrays for the per-priority maps.
"""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._dcb_fields import (
    PRIOS, is_json, isnum, json_bool, json_uint, ranged, size_bytes, text_fields, text_tokens, text_u8_array, text_uint)
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import lazy_re, load_json_object, ParseError

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List


def parse_dcb_pfc_json(text: str) -> Dict[str, Any]:
    """Parse ``dcb -j pfc show dev IF``.

    Returns ``{"pfc_cap": int|None, "macsec_bypass": bool|None, "delay": int|None,
    "enabled": [priorities with PFC on, ascending]}``.  ``prio_pfc`` must be 8 booleans.
    """
    tool = "dcb pfc show"
    if isinstance(text, str) and not is_json(text):
        return parse_dcb_pfc(text)
    data = load_json_object(text, tool)
    arr = data.get("prio_pfc")
    if not isinstance(arr, list) or len(arr) != PRIOS:
        raise ParseError("%s: 'prio_pfc' is missing or not a list of %d values" % (tool, PRIOS))
    enabled = [i for i, v in enumerate(arr) if json_bool(v, tool, "prio_pfc[%d]" % i)]
    return {
        "pfc_cap": json_uint(data["pfc_cap"], tool, "pfc_cap") if "pfc_cap" in data else None,
        "macsec_bypass": json_bool(data["macsec_bypass"], tool, "macsec_bypass")
        if "macsec_bypass" in data else None,
        "delay": json_uint(data["delay"], tool, "delay") if "delay" in data else None,
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
        key = json_uint(item[0], tool, field)
        prio = json_uint(item[1], tool, field)
        _add_pair(out, key, prio, max_key, tool, field, item)
    return dict((k, sorted(v)) for k, v in out.items())


def _add_pair(out: Dict[Any, List[int]], key: Any, prio: int, max_key: int, tool: str, field: str, item: Any) -> None:
    if (isinstance(key, int) and key > max_key) or prio >= PRIOS:
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
_PCP_KEY = lazy_re(r"^([0-7])(nd|de)?$")


def parse_dcb_pfc(text: str) -> Dict[str, Any]:
    """``dcb pfc show dev IF`` as text (``pfc-cap 8 macsec-bypass off delay 0`` / ``prio-pfc 0:off ...``),
    read into the same dict as :func:`parse_dcb_pfc_json`."""
    tool = "dcb pfc show"
    if is_json(text):
        return parse_dcb_pfc_json(text)
    fields = text_fields(text, tool, ("prio-pfc",))
    if "prio-pfc" not in fields:
        raise ParseError("%s: no 'prio-pfc' line in output" % tool)
    flags = [None] * PRIOS  # type: List[Any]
    for key, value in fields["prio-pfc"]:
        if not isnum(key) or int(key) >= PRIOS or value not in ("on", "off"):
            raise ParseError("%s: prio-pfc item %s:%s is not PRIO:on|off" % (tool, key, value))
        flags[int(key)] = value == "on"
    if any(v is None for v in flags):
        raise ParseError("%s: 'prio-pfc' does not list all 8 priorities" % tool)
    return {
        "pfc_cap": text_uint(fields.get("pfc-cap"), tool, "pfc-cap"),
        "macsec_bypass": None if "macsec-bypass" not in fields else json_bool(fields["macsec-bypass"], tool, "macsec-bypass"),
        "delay": text_uint(fields.get("delay"), tool, "delay"),
        "enabled": [p for p in range(PRIOS) if flags[p]],
    }


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
    if not is_json(text):
        return _parse_dcb_app_text(text, tool)
    data = load_json_object(text, tool)
    default = data.get("default_prio", [])
    if not isinstance(default, list):
        raise ParseError("%s: 'default_prio' is not a list" % tool)
    out = {"default_prio": sorted(set(json_uint(p, tool, "default_prio") for p in default))}  # type: Dict[str, Any]
    for field, _name, max_key in _APP_FIELDS:
        out[field] = _pairs(data, field, tool, max_key)
    pcp = {}  # type: Dict[Any, List[int]]
    items = data.get("pcp_prio", [])
    if not isinstance(items, list):
        raise ParseError("%s: 'pcp_prio' is not a list" % tool)
    for item in items:
        if not isinstance(item, list) or len(item) not in (2, 3):
            raise ParseError("%s: pcp_prio entry %r is not a [pcp, priority] pair" % (tool, item))
        _add_pair(pcp, _pcp_key(item[0], tool), json_uint(item[1], tool, "pcp_prio"), 0, tool, "pcp_prio", item)
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
    for row in text_tokens(text, tool):
        head, rest = row[0], row[1:]
        if head == "default-prio":
            for p in rest:
                if not isnum(p) or int(p) >= PRIOS:
                    raise ParseError("%s: default-prio %r is not a priority 0..7 in line %r" % (tool, p, " ".join(row)))
                out["default_prio"] = sorted(set(out["default_prio"] + [int(p)]))
            continue
        if head not in names and head != "pcp-prio":
            raise ParseError("%s: unknown selector %r in line %r" % (tool, head, " ".join(row)))
        for item in rest:
            key, sep, prio = item.rpartition(":")
            if not sep or not isnum(prio):
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
            elif isnum(key):
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
    if not is_json(text):
        rows = text_tokens(text, tool)
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
    if is_json(text):
        data = load_json_object(text, tool)
        for flag in ("willing", "cbs"):
            out[flag] = json_bool(data[flag], tool, flag) if flag in data else None
        out["ets_cap"] = json_uint(data["ets_cap"], tool, "ets_cap") if "ets_cap" in data else None
        for name in arrays:
            field = name.replace("-", "_")
            value = data.get(field)
            if value is None:
                out[field] = None
                continue
            if not isinstance(value, list) or len(value) != PRIOS:
                raise ParseError("%s: %r is not a list of %d values" % (tool, field, PRIOS))
            if field.endswith("tsa"):
                if not all(isinstance(v, str) for v in value):
                    raise ParseError("%s: %r holds a non-name: %r" % (tool, field, value))
                out[field] = list(value)
            else:
                out[field] = [ranged(json_uint(v, tool, field), field, tool) for v in value]
    else:
        fields = text_fields(text, tool, arrays)
        for flag in ("willing", "cbs"):
            out[flag] = None if flag not in fields else json_bool(fields[flag], tool, flag)
        out["ets_cap"] = text_uint(fields.get("ets-cap"), tool, "ets-cap")
        for name in arrays:
            field = name.replace("-", "_")
            if name not in fields:
                out[field] = None
            elif field.endswith("tsa"):
                tsa = [None] * PRIOS  # type: List[Any]
                for key, value in fields[name]:
                    if not isnum(key) or int(key) >= PRIOS or not value:
                        raise ParseError("%s: %s item %s:%s is not TC:TSA" % (tool, name, key, value))
                    tsa[int(key)] = value
                if any(v is None for v in tsa):
                    raise ParseError("%s: %r does not list all 8 TCs" % (tool, name))
                out[field] = tsa
            else:
                out[field] = text_u8_array(fields[name], name, tool, 100 if field.endswith("bw") else PRIOS - 1)
    if all(out[k.replace("-", "_")] is None for k in arrays):
        raise ParseError("%s: no prio-tc, tc-tsa or tc-bw in output" % tool)
    return out


# print_rate: bit/s with bit, Kbit, Mbit, Gbit, Tbit in powers of 1000 (or Kibit ... with -i)
_RATE = lazy_re(r"^(?P<n>\d+(?:\.\d+)?)(?P<unit>[KMGT]?)(?P<iec>i?)bit$")


def parse_dcb_buffer(text: str) -> Dict[str, Any]:
    """``dcb [-j] buffer show dev IF``: ``{"prio_buffer": [8 buffer indices], "buffer_size": [8 sizes in bytes],
    "total_size": bytes|None}``.  The text form prints sizes as iproute2's print_size rounds them
    (``10Kb``): read back in bytes, exact only to that rounding."""
    tool = "dcb buffer show"
    if is_json(text):
        data = load_json_object(text, tool)
        prio, size = data.get("prio_buffer"), data.get("buffer_size")
        if not isinstance(prio, list) or len(prio) != PRIOS or not isinstance(size, list) or len(size) != PRIOS:
            raise ParseError("%s: 'prio_buffer' and 'buffer_size' must be lists of %d values" % (tool, PRIOS))
        total = data.get("total_size")
        return {"prio_buffer": [ranged(json_uint(v, tool, "prio_buffer"), "prio_buffer", tool) for v in prio],
                "buffer_size": [json_uint(v, tool, "buffer_size") for v in size],
                "total_size": None if total is None else json_uint(total, tool, "total_size")}
    fields = text_fields(text, tool, ("prio-buffer", "buffer-size"))
    if "prio-buffer" not in fields and "buffer-size" not in fields:
        raise ParseError("%s: no prio-buffer or buffer-size line in output" % tool)
    sizes = None  # type: Optional[List[int]]
    if "buffer-size" in fields:
        sizes = [None] * PRIOS  # type: ignore
        for key, value in fields["buffer-size"]:
            if not isnum(key) or int(key) >= PRIOS:
                raise ParseError("%s: buffer-size item %s:%s has no buffer 0..7" % (tool, key, value))
            sizes[int(key)] = size_bytes(value, tool)  # type: ignore
        if any(v is None for v in sizes):  # type: ignore
            raise ParseError("%s: 'buffer-size' does not list all 8 buffers" % tool)
    total = fields.get("total-size")
    return {"prio_buffer": text_u8_array(fields["prio-buffer"], "prio-buffer", tool, PRIOS - 1)
            if "prio-buffer" in fields else None,
            "buffer_size": sizes, "total_size": None if total is None else size_bytes(total, tool)}


def parse_dcb_maxrate(text: str) -> Dict[str, Any]:
    """``dcb [-j] maxrate show dev IF``: ``{"tc_maxrate": [8 rates]}``, bit/s from the text form
    (``0:25Gbit``), the numbers as printed from JSON."""
    tool = "dcb maxrate show"
    if is_json(text):
        rates = load_json_object(text, tool).get("tc_maxrate")
        if not isinstance(rates, list) or len(rates) != PRIOS:
            raise ParseError("%s: 'tc_maxrate' is not a list of %d values" % (tool, PRIOS))
        return {"tc_maxrate": [json_uint(v, tool, "tc_maxrate") for v in rates]}
    fields = text_fields(text, tool, ("tc-maxrate",))
    if "tc-maxrate" not in fields:
        raise ParseError("%s: no tc-maxrate line in output" % tool)
    rates = [None] * PRIOS
    for key, value in fields["tc-maxrate"]:
        m = _RATE.match(value)
        if not isnum(key) or int(key) >= PRIOS or not m:
            raise ParseError("%s: tc-maxrate item %s:%s is not TC:RATE" % (tool, key, value))
        base = 1024 if m.group("iec") else 1000
        rates[int(key)] = int(float(m.group("n")) * base ** " KMGT".index(m.group("unit") or " "))
    if any(v is None for v in rates):
        raise ParseError("%s: 'tc-maxrate' does not list all 8 TCs" % tool)
    return {"tc_maxrate": rates}
