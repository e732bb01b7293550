# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ``file`` domain: whole files the collection owns (sysctl.d, .link, units, ...)."""
from __future__ import annotations

import sys

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._filestate import content_bytes, encode_content
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Plan
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._systemd import try_restart

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional, Union
    from ansible_collections.hpcnet.rdma.plugins.module_utils.node._filestate import FileState

HEADER = "# Managed by hpcnet.rdma ({module}); do not edit: the journal in {journal} restores the\n" \
         "# original when you run playbooks/rollback_rdma.yml (hpcnet.rdma.tuning_state).\n"


def read_value(host: Host, path: str) -> FileState:
    return host.file_state(path)


def read_values(host: Host, paths: List[str]) -> Dict[str, Any]:
    """:func:`read_value` of each path (a ``HostError`` in place of a state it could not read), each parent
    directory walked once for all of its files (``Host.file_states``)."""
    return host.file_states(paths)


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
        try_restart(host, value["notify"])


# What a replaced file keeps unless the planner names it (ansible's atomic_move keeps them too).
KEPT = ("uid", "gid", "selinux")


def _comparable(state: Dict[str, Any]) -> Dict[str, Any]:
    """A state with its content as bytes, so either encoding of the same bytes compares equal."""
    if "link" in state:
        return {"link": state["link"]}
    out = dict((k, v) for k, v in state.items() if k not in ("content", "encoding"))
    out["content"] = content_bytes(state)
    return out


def same(actual: Any, wanted: Any) -> bool:
    """Same bytes, mode, owner and link target; the SELinux label only when ``wanted`` names one
    (a file created without one gets the policy's label, which is right)."""
    a, w = _bare(actual), _bare(wanted)
    if a is None or w is None:
        return a is None and w is None
    a, w = _comparable(a), _comparable(w)
    if "selinux" not in w:
        a.pop("selinux", None)
    return a == w


def keep_attributes(plan: Plan) -> Plan:
    """The plan with every replaced regular file keeping its owner, group and SELinux label, unless
    the planner named them: a planner says what the file holds (content, mode), and a file whose
    content and mode already match is no change whoever owns it.  Not for rollback, which restores
    exactly the journaled state."""
    out = Plan()
    for c in plan:
        after = c.after
        if (c.domain == "file" and _regular(c.before) and _regular(after)
                and not any(k in after for k in KEPT)):
            after = dict(after)
            after.update((k, c.before[k]) for k in KEPT if k in c.before)
        out.add(c.key, c.before, after)
    return out


def _regular(state: Any) -> bool:
    return isinstance(state, dict) and not state.get("absent") and "link" not in state


def text(state: FileState) -> Optional[str]:
    """A file state's content as text (undecodable bytes as surrogate escapes), None when absent."""
    if not _regular(state):
        return None
    return content_bytes(state).decode("utf-8", "surrogateescape")


def summary(state: Any) -> Any:
    """A file state without its content: size and sha1 instead (for results that must not echo it)."""
    if not _regular(state):
        return state
    data = content_bytes(state)
    out = dict((k, v) for k, v in state.items() if k not in ("content", "encoding"))
    import hashlib  # here: loading OpenSSL is a tenth of the node health check's start on a slow node
    out.update(size=len(data), sha1=hashlib.sha1(data).hexdigest())
    return out


EDITED_SUFFIX = ".hpcnet-rdma-edited"


def edited(current: Any, written: Any) -> bool:
    """Whether ``current`` is a regular file whose bytes are not what the collection last wrote there
    (``written``, the journal's newest ``after`` of the key): a hand edit since the tune, or a file made
    where the collection had removed one.  A rollback keeps such a file beside the original."""
    cur = _bare(current)
    if not _regular(cur):
        return False
    last = _bare(written)
    if not _regular(last):
        return True
    return content_bytes(cur) != content_bytes(last)


def edited_copy(host: Host, path: str) -> str:
    """Where a rollback keeps the hand-edited ``path``: ``PATH.hpcnet-rdma-edited`` (a name no
    ``*.conf`` reader picks up), or ``.1``, ``.2``, ... after it when that is taken."""
    name = path + EDITED_SUFFIX
    n = 0
    while host.exists(name):
        n += 1
        name = "%s%s.%d" % (path, EDITED_SUFFIX, n)
    return name


def bare(value: FileState) -> FileState:
    """The state as a file holds it (without the ``notify`` hint)."""
    return _bare(value)


def is_absent(value: FileState) -> bool:
    return _bare(value) is None


def with_notify(state: FileState, unit: str) -> Dict[str, Any]:
    base = {"absent": True} if state is None else dict(state)
    base["notify"] = unit
    return base


def owned(content: Union[str, bytes], mode: str = "0644") -> Dict[str, Any]:
    """The state of a file the collection writes: its content in the form ``file_state`` reads
    back (text, or base64 for bytes that are not UTF-8), so an unchanged file plans no change."""
    data = content if isinstance(content, bytes) else content.encode("utf-8", "surrogateescape")
    state: Dict[str, Any] = encode_content(data)
    state["mode"] = mode
    return state


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
            host.mkdir(path)   # mode 0755 whatever the umask
        else:
            host.rmdir(path)

    @staticmethod
    def same(actual: Any, wanted: Any) -> bool:
        return bool(actual) == bool(wanted)


DIRS = _Dirs()

# the domain contract (_domain.Domain): file: is this file's read_value, write_value and same;
# every engine has both, since it plans the parent directories of the files it creates
DOMAINS = {"file": sys.modules[__name__], "dir": DIRS}


def normal_path(path: str) -> str:
    """``path`` with ``//`` and ``/./`` collapsed: the one spelling a journal key uses.  ValueError
    for a relative path, a ``..`` component (it means something else behind a symbolic link), a
    trailing ``/`` or a control character."""
    if (not isinstance(path, str) or not path.startswith("/") or path.endswith("/")
            or any(ord(ch) < 0x20 or ord(ch) == 0x7f for ch in path)
            or ".." in path.split("/")):
        raise ValueError("%r is not an absolute file path (no '..', no control characters, not ending in '/')"
                         % (path,))
    return "/" + "/".join(part for part in path.split("/") if part not in ("", "."))


def missing_parents(host: Host, path: str) -> list:
    """Ancestors of ``path`` that do not exist yet, outermost first (what creating it makes)."""
    out = []
    parent = path.rstrip("/").rsplit("/", 1)[0]
    while parent and not host.isdir(parent):
        out.append(parent)
        parent = parent.rsplit("/", 1)[0]
    return list(reversed(out))
