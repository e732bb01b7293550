# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""iproute2's ``dcb``: its argv table (``dcb -j pfc|app|apptrust|ets|buffer show``, and the sets of
pfc, apptrust and the app table), run through :class:`_runner.Tool`; its parsers are ``_dcb_parse``."""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._dcb_parse import (
    parse_dcb_app_json, parse_dcb_apptrust_json, parse_dcb_buffer, parse_dcb_ets, parse_dcb_pfc_json)
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import is_not_supported
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._runner import Failure, Tool

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Optional


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
