# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ``file`` domain: whole files the collection owns (sysctl.d, .link, units, ...)."""
from __future__ import annotations

from typing import Any

from ansible_collections.hpcnet.rdma.plugins.module_utils._host import FileState, Host

HEADER = "# Managed by hpcnet.rdma ({module}); do not edit: the journal in {journal} restores the\n" \
         "# original when you run playbooks/rollback-rdma.yml (hpcnet.rdma.tuning_state).\n"


def read_value(host: Host, path: str) -> FileState:
    return host.file_state(path)


def write_value(host: Host, path: str, value: FileState) -> None:
    host.write_file(path, value)


def same(actual: Any, wanted: Any) -> bool:
    return actual == wanted


def owned(content: str, mode: str = "0644") -> FileState:
    return {"content": content, "mode": mode}
