# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ``file`` domain: whole files the collection owns (sysctl.d, .link, units, ...)."""
from __future__ import annotations

import sys
from typing import Any, Dict

from ansible_collections.hpcnet.rdma.plugins.module_utils._host import FileState, Host

HEADER = "# Managed by hpcnet.rdma ({module}); do not edit: the journal in {journal} restores the\n" \
         "# original when you run playbooks/rollback-rdma.yml (hpcnet.rdma.tuning_state).\n"


def read_value(host: Host, path: str) -> FileState:
    return host.file_state(path)


def _bare(value: FileState) -> FileState:
    """The state without the ``notify`` hint; ``{"absent": True}`` is an absent file."""
    if value is None or value.get("absent"):
        return None
    return dict((k, v) for k, v in value.items() if k != "notify")


def write_value(host: Host, path: str, value: FileState) -> None:
    """Write the file; with ``notify: UNIT`` restart that unit if running, so it reads the file.

    The planner puts ``notify`` on both the before and the after state, so the journal's original
    carries it too and a rollback restarts the unit with the restored file.
    """
    host.write_file(path, _bare(value))
    if value is not None and value.get("notify"):
        from ansible_collections.hpcnet.rdma.plugins.module_utils import _service
        _service.try_restart(host, value["notify"])


def same(actual: Any, wanted: Any) -> bool:
    return _bare(actual) == _bare(wanted)


def is_absent(value: FileState) -> bool:
    return _bare(value) is None


def with_notify(state: FileState, unit: str) -> Dict[str, Any]:
    base = {"absent": True} if state is None else dict(state)
    base["notify"] = unit
    return base


def owned(content: str, mode: str = "0644") -> FileState:
    return {"content": content, "mode": mode}


class _Dirs(object):
    """The ``dir`` domain: a directory the collection created (``dir:/etc/ucx``,
    ``dir:/sys/kernel/config/rdma_cm/rxe0``).  The value is True (exists) or False (absent);
    rollback removes what was created, after the files inside it were restored (first-touch order).
    """

    @staticmethod
    def read_value(host: Host, path: str) -> bool:
        return host.isdir(path)

    @staticmethod
    def write_value(host: Host, path: str, value: Any) -> None:
        if value:
            host.mkdir(path)
        else:
            host.rmdir(path)

    @staticmethod
    def same(actual: Any, wanted: Any) -> bool:
        return bool(actual) == bool(wanted)


DIRS = _Dirs()

# the domain contract (_domain.Domain): file: is this file's read_value, write_value and same;
# every engine has both, since it plans the parent directories of the files it creates
DOMAINS = {"file": sys.modules[__name__], "dir": DIRS}


def missing_parents(host: Host, path: str) -> list:
    """Ancestors of ``path`` that do not exist yet, outermost first (what creating it makes)."""
    out = []
    parent = path.rstrip("/").rsplit("/", 1)[0]
    while parent and not host.isdir(parent):
        out.append(parent)
        parent = parent.rsplit("/", 1)[0]
    return list(reversed(out))
