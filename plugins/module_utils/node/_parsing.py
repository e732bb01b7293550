# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What every tool-output parser shares: :class:`ParseError`, line and ``label: value`` splitting,
integer fields, JSON loading, and recognising "the driver does not support this" in a tool's
error text.

The parsers themselves live one file per tool (``_ethtool``, ``_iproute``, ``_dcb``,
``_mlnx_qos``, ``_ibtools``, ``_nvidia_smi``, ``_procnet``, ``_pkgtools``, ``_kmodfiles``).  They
are pure: each takes the text a tool printed and returns plain Python data, or raises ParseError
whose message starts with the tool (``"ethtool -g: ..."``).  Parsing is by field name, never by
column or line position, and unknown lines are ignored, so newer tool versions do not break it.
"""
from __future__ import annotations

import json
import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional, Tuple

NA = "n/a"


class lazy_re(object):  # pylint: disable=invalid-name
    """``re.compile(pattern, flags)`` on first use: a module's patterns are made at import, but a call uses few
    of them (the node health check imports 95 and used 26 on a tuned lab VM, where compiling the rest was a
    tenth of its wall time under TCG - benchmarks/health_check.py).  Behaves as the compiled pattern for
    attribute use (``.match``, ``.search``, ``.sub``, ``.pattern`` ...); the ``re`` functions themselves take a
    compiled pattern or a string, not this.  A method looked up once is kept on the instance, so later
    calls cost what the compiled pattern's own do."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)
        self._compiled: Any = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_args", "_compiled"):
            raise AttributeError(name)
        if self._compiled is None:
            self._compiled = re.compile(*self._args)
        value = getattr(self._compiled, name)
        if callable(value):
            self.__dict__[name] = value
        return value

    def __repr__(self) -> str:
        return "lazy_re(%r)" % (self._args[0],)


# errno strings tools print when the driver lacks the operation; 524 is the kernel-internal
# ENOTSUPP that a few drivers leak to user space ("netlink error: Unknown error 524").
_NOT_SUPPORTED = lazy_re(r"operation not supported|unknown error 524", re.IGNORECASE)


class ParseError(ValueError):
    """Tool output could not be parsed; the message names the tool and the offending line/field."""


def is_not_supported(stderr: str) -> bool:
    """True when a tool's error text says the driver does not implement the operation.

    Matches "Operation not supported" (EOPNOTSUPP) in any form ethtool/dcb print it
    ("netlink error: Operation not supported", "Cannot get device ring settings: Operation not
    supported", ...) and "Unknown error 524" (the kernel-internal ENOTSUPP some drivers leak).
    Other failures ("No such device", "Operation not permitted") return False.
    """
    return bool(stderr) and _NOT_SUPPORTED.search(stderr) is not None


def snake(label: str) -> str:
    """'RX Buf Len' -> 'rx_buf_len', 'rx-frames-irq' -> 'rx_frames_irq'."""
    return re.sub(r"[^a-z0-9]+", "_", label.strip().lower()).strip("_")


def split_lines(text: str, tool: str) -> List[str]:
    """Stripped lines of ``text``; ParseError when it is not text or holds nothing but blanks."""
    if not isinstance(text, str):
        raise ParseError("%s: expected text output, got %s" % (tool, type(text).__name__))
    out = [line.strip() for line in text.splitlines()]
    if not any(out):
        raise ParseError("%s: empty output" % tool)
    return out


def int_or_none(value: str, tool: str, line: str) -> Optional[int]:
    """'8192' -> 8192, 'n/a' -> None; anything else is a ParseError."""
    value = value.strip()
    if value.lower() == NA:
        return None
    try:
        return int(value, 10)
    except ValueError:
        raise ParseError("%s: expected an integer or 'n/a' in line %r" % (tool, line)) from None


def split_field(line: str) -> Optional[Tuple[str, str]]:
    """'RX Mini:\\tn/a' -> ('rx mini', 'n/a'); None when the line has no 'label: value' shape."""
    label, sep, value = line.partition(":")
    if not sep or not label.strip():
        return None
    return " ".join(label.lower().split()), value.strip()


def load_json(text: str, tool: str) -> Any:
    """The JSON value a tool printed; ParseError naming the tool when it is not text, not JSON, or
    nested deeper than Python's JSON decoder can follow (it raises RecursionError, not ValueError)."""
    if not isinstance(text, str):
        raise ParseError("%s: expected JSON text, got %s" % (tool, type(text).__name__))
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ParseError("%s: malformed JSON: %s" % (tool, exc)) from None
    except RecursionError:
        raise ParseError("%s: malformed JSON: nested too deeply to read (%d characters)" % (tool, len(text))) from None


def load_json_list(text: str, tool: str, what: str) -> List[Dict[str, Any]]:
    """A JSON list of objects (``what`` names them in the error: "interfaces", "links")."""
    data = load_json(text, tool)
    if not isinstance(data, list):
        raise ParseError("%s: expected a JSON list of %s, got %s" % (tool, what, type(data).__name__))
    for index, item in enumerate(data):
        if not isinstance(item, dict):
            raise ParseError("%s: entry %d is %s, not an object" % (tool, index, type(item).__name__))
    return data


def load_json_object(text: str, tool: str) -> Dict[str, Any]:
    data = load_json(text, tool)
    if not isinstance(data, dict):
        raise ParseError("%s: expected a JSON object, got %s" % (tool, type(data).__name__))
    return data
