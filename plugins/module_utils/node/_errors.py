# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The node layer's errors: :class:`HostError` (a node operation failed, naming the path or command),
:class:`NotSupported` (the driver lacks the operation), and the words for an OS error or a failed
command in their messages."""
from __future__ import annotations

import errno

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import List, Optional


class HostError(Exception):
    """A node operation failed; the message names the path or command.  ``errno``: the OS error
    behind it, when there is one (a domain words a refusal of the kernel from it)."""

    errno: Optional[int] = None


class NotSupported(HostError):
    """The driver does not implement the operation (ethtool: Operation not supported)."""


def os_reason(e: OSError) -> str:
    """The words for an OS error in a message that already names the path: its text, and for a full
    disk (or quota) what that means."""
    text = e.strerror or str(e)
    if e.errno == errno.ENOSPC:
        return "%s - the filesystem holding it is full; free space there and run again" % text
    if e.errno == errno.EDQUOT:
        return "%s - the disk quota there is used up; free space there and run again" % text
    return text


def command_error(argv: List[str], rc: int, msg: str, unsupported: bool) -> HostError:
    """The error of a failed command, naming its argv: NotSupported when the tool said so."""
    if unsupported:
        return NotSupported("%s: %s" % (" ".join(argv), msg))
    return HostError("%s failed (rc=%d): %s" % (" ".join(argv), rc, msg))
