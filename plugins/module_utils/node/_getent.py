# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""getent: its argv table and the parser of a ``group`` entry (NSS: local files, LDAP, SSSD)."""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._runner import Tool

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Optional


def parse_group_gid(text: str) -> Optional[int]:
    """The gid of ``getent group NAME``'s first line (``name:x:gid:members``); None when absent."""
    if not text.strip():
        return None
    fields = text.strip().splitlines()[0].split(":")
    return int(fields[2]) if len(fields) > 2 and fields[2].isdigit() else None


GETENT = Tool("getent", {"group": ["group", "{name}"]}, parsers={"group": parse_group_gid})
