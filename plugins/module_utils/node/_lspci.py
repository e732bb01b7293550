# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``lspci -vvv -s BDF`` (pciutils): its argv table and the parser of what the health check reads from it -
the PCI Express port type and the Access Control Services capability and control bits.

sysfs has no file for ACS: it lives in the extended configuration space, which lspci decodes (as root; as
another user it prints ``Capabilities: <access denied>``).  Lines look like (tests/unit/fixtures/real/lspci/)::

    03:02.0 PCI bridge: Advanced Micro Devices, Inc. [AMD] Matisse PCIe GPP Bridge (prog-if 00 [Normal decode])
    \tCapabilities: [58] Express (v2) Downstream Port (Slot+), MSI 00
    \tCapabilities: [2a0 v1] Access Control Services
    \t\tACSCap:\tSrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans+
    \t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-
"""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import lazy_re, ParseError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._runner import Tool

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional

_DEVICE = lazy_re(r"^([0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7] ")
_EXPRESS = lazy_re(r"^\s*Capabilities: \[[0-9a-f]+\] Express \(v\d\) (.+?)(?: \(Slot[+-]\))?, ")
_FLAGS = lazy_re(r"([A-Za-z][A-Za-z0-9]*)([+-])(?=\s|$)")


def _flags(text: str) -> Dict[str, bool]:
    return dict((name, sign == "+") for name, sign in _FLAGS.findall(text))


def parse_lspci_vvv(text: str) -> Dict[str, Any]:
    """One device of ``lspci -vvv -s BDF``: ``{"slot", "description", "port_type" ("Root Port", "Downstream
    Port", "Upstream Port", "Endpoint", ... or None), "capabilities_readable", "acs_cap", "acs_ctl" ({bit:
    bool} or None without an ACS capability), "driver"}``.  ParseError on empty output or no device line."""
    tool = "lspci -vvv"
    if not isinstance(text, str) or not text.strip():
        raise ParseError("%s: empty output (no such device?)" % tool)
    lines = text.splitlines()
    first = next((i for i, line in enumerate(lines) if _DEVICE.match(line)), None)
    if first is None:
        raise ParseError("%s: no device line (BB:DD.F ...) in %r" % (tool, lines[0][:120]))
    slot, _sep, description = lines[first].partition(" ")
    out: Dict[str, Any] = {"slot": slot, "description": description.strip(), "port_type": None,
                           "capabilities_readable": True, "acs_cap": None, "acs_ctl": None, "driver": None}
    for line in lines[first + 1:]:
        if _DEVICE.match(line):          # a second device: -s matched more than one; the first is ours
            break
        stripped = line.strip()
        m = _EXPRESS.match(line)
        if m:
            out["port_type"] = m.group(1)
        elif stripped == "Capabilities: <access denied>":
            out["capabilities_readable"] = False
        elif stripped.startswith("ACSCap:"):
            out["acs_cap"] = _flags(stripped[len("ACSCap:"):])
        elif stripped.startswith("ACSCtl:"):
            out["acs_ctl"] = _flags(stripped[len("ACSCtl:"):])
        elif stripped.startswith("Kernel driver in use:"):
            out["driver"] = stripped.split(":", 1)[1].strip()
    return out


def redirects(acs_ctl: Optional[Dict[str, bool]]) -> List[str]:
    """The ACS controls that send peer-to-peer requests or completions up to the root complex."""
    return [bit for bit in ("ReqRedir", "CmpltRedir") if (acs_ctl or {}).get(bit)]


LSPCI = Tool("lspci", {"device": ["-vvv", "-s", "{bdf}"]}, parsers={"device": parse_lspci_vvv})
