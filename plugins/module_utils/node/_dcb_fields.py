# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""How ``dcb`` prints values, read for the parsers of ``_dcb_parse``: JSON booleans and numbers,
and the text form's ``name value`` / ``name k:v ...`` lines, per-priority arrays and print_size'd sizes.
Each reader raises ParseError naming the tool and the field."""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import lazy_re, ParseError, split_lines

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional, Tuple

PRIOS = 8   # IEEE 802.1p priorities


def json_bool(value: Any, tool: str, field: str) -> bool:
    # dcb prints booleans; accept "on"/"off" too (print_on_off before iproute2 5.11 era forks)
    if isinstance(value, bool):
        return value
    if value in ("on", "off"):
        return value == "on"
    raise ParseError("%s: %s holds %r, expected true/false" % (tool, field, value))


def isnum(text: str) -> bool:
    """ASCII digits only (str.isdigit() also takes '²', which int() refuses)."""
    return bool(text) and all("0" <= c <= "9" for c in text)


def json_uint(value: Any, tool: str, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ParseError("%s: %s holds %r, expected an unsigned integer" % (tool, field, value))
    return value


def is_json(text: Any) -> bool:
    return isinstance(text, str) and text.lstrip().startswith(("{", "["))


def text_tokens(text: str, tool: str) -> List[List[str]]:
    """The whitespace-split non-empty lines of a dcb text report; ParseError when there are none."""
    rows = [line.split() for line in split_lines(text, tool) if line]
    if not rows:
        raise ParseError("%s: empty output" % tool)
    return rows


def text_fields(text: str, tool: str, arrays: Tuple[str, ...]) -> Dict[str, Any]:
    """``dcb OBJ show`` text: ``name value`` scalars and ``name k:v k:v ...`` arrays on each line.

    ``arrays`` names the keywords whose values are ``k:v`` items; any other keyword takes the
    one token after it.  A token that is neither is a ParseError naming the line."""
    out = {}  # type: Dict[str, Any]
    for row in text_tokens(text, tool):
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


def text_u8_array(items: Any, name: str, tool: str, hi: int) -> List[int]:
    """``0:0 1:3 ... 7:0`` → a list of 8 ints in 0..hi, by key."""
    values = [None] * PRIOS  # type: List[Any]
    for key, value in items or []:
        if not isnum(key) or int(key) >= PRIOS or not isnum(value) or int(value) > hi:
            raise ParseError("%s: %s item %s:%s is out of range (0..7:0..%d)" % (tool, name, key, value, hi))
        values[int(key)] = int(value)
    if any(v is None for v in values):
        raise ParseError("%s: %r does not list all 8 entries" % (tool, name))
    return values


def text_uint(value: Optional[str], tool: str, field: str) -> Optional[int]:
    if value is None:
        return None
    if not isnum(value):
        raise ParseError("%s: %s holds %r, expected an unsigned integer" % (tool, field, value))
    return int(value)


def ranged(value: int, field: str, tool: str) -> int:
    hi = 100 if field.endswith("bw") else PRIOS - 1
    if value > hi:
        raise ParseError("%s: %s holds %d, allowed 0..%d" % (tool, field, value, hi))
    return value


# print_size (iproute2 lib/json_print.c): bytes with b, Kb, Mb, Gb in powers of 1024
SIZE = lazy_re(r"^(?P<n>\d+(?:\.\d+)?)(?P<unit>[KMG]?)b$")


def size_bytes(token: str, tool: str) -> int:
    if isnum(token):
        return int(token)
    m = SIZE.match(token)
    if not m:
        raise ParseError("%s: %r is not a size (N, Nb, NKb, NMb)" % (tool, token))
    return int(float(m.group("n")) * 1024 ** " KMG".index(m.group("unit") or " "))
