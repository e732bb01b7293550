# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The body of module hpcnet.rdma.managed_files: its argument spec and ``run(module, host)``.

The module calls it, and so does hpcnet.rdma.node_tuning, which runs several tuning modules in
one module call (one Python start, one payload, one connection round trip for all of them).
"""
from __future__ import annotations

import os

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _files
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _spec
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._engine import Engine
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._journal_file import DEFAULT_DIR
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Plan
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import lazy_re

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Optional

ARGUMENT_SPEC = _spec.argument_spec(dict(
    files=dict(type="list", elements="dict", required=True, options=dict(
        path=dict(type="path", required=True),
        content=dict(type="str", no_log=True),
        mode=dict(type="raw", default="0644"),
        state=dict(type="str", choices=["present", "absent"], default="present"),
    )),
), _spec.JOURNAL_DIR, _spec.RUN)

_MODE = lazy_re(r"^0?[0-7]{3}$")
# Kernel and device filesystems: their entries are not files a rename can replace (a /proc/sys value is
# sysctl_tuning's, a device node devnode's).
KERNEL_TREES = ("/proc", "/sys", "/dev")


def _under(path: str, top: str) -> bool:
    top = top.rstrip("/") or "/"
    return path == top or path.startswith(top if top == "/" else top + "/")


def _real(host: Host, path: str) -> str:
    """The node path ``path`` names once every symbolic link on the way is resolved (for the part
    that exists), so a link cannot hide the journal directory."""
    prefix = host.p("/").rstrip("/")
    real = os.path.realpath(host.p(path))
    if prefix and real.startswith(prefix + "/"):
        return real[len(prefix):]
    return real if not prefix else path


def refused_target(host: Host, path: str, journal_dirs: tuple) -> Optional[str]:
    """Why ``path`` can never be a managed file, or None: the collection's own journal and lock, or a
    kernel or device filesystem."""
    real = _real(host, path)
    for top in journal_dirs:
        for p, t in ((path, top), (real, _real(host, top))):
            if _under(p, t):
                return ("%s is inside the journal directory %s (journal.json, its lock, its temp files), which only "
                        "the collection writes; allowed: paths outside it" % (path, top))
    for top in KERNEL_TREES:
        if _under(path, top) or _under(real, top):
            return ("%s is in %s, a kernel or device filesystem, not a file managed_files can replace; allowed: "
                    "paths outside %s (sysctl_tuning sets /proc/sys values)" % (path, top, ", ".join(KERNEL_TREES)))
    return None


def file_mode(value: object) -> str:
    """``"0644"`` from a mode option: a string is octal, an integer the numeric mode (ansible-core's
    file modules read ``mode: 0644`` unquoted, the YAML integer 420, the same way).  ValueError."""
    if isinstance(value, int) and not isinstance(value, bool):
        if 0 <= value <= 0o777:
            return "%04o" % value
        raise ValueError("%r is the integer %d (octal %s), not a permission mode; quote octal modes: \"0644\""
                         % (value, value, "0%o" % value if value >= 0 else "-0%o" % -value))
    if isinstance(value, str) and _MODE.match(value):
        return "%04o" % int(value, 8)
    raise ValueError("%r is not an octal mode; allowed: e.g. \"0644\" (permission bits only)" % (value,))


def validate(files: list, host: Optional[Host] = None, journal_dir: str = DEFAULT_DIR) -> list:
    """Normalised entries; ValueError naming the entry for bad input (with ``host``, also a path in the
    journal directory - this call's or the default one - or in a kernel or device filesystem)."""
    out, seen = [], {}
    journal_dirs = tuple(sorted(set([journal_dir.rstrip("/") or "/", DEFAULT_DIR])))
    for i, f in enumerate(files):
        try:
            path = _files.normal_path(f["path"])
        except ValueError as e:
            raise ValueError("files[%d].path: %s" % (i, e))
        refused = refused_target(host, path, journal_dirs) if host is not None else None
        if refused:
            raise ValueError("files[%d].path: %s" % (i, refused))
        if path in seen:
            first = seen[path]
            raise ValueError("files[%d].path: %s is given twice (files[%d].path %r and files[%d].path %r)"
                             % (i, path, first, files[first]["path"], i, f["path"]))
        seen[path] = i
        try:
            mode = file_mode(f["mode"])
        except ValueError as e:
            raise ValueError("files[%d].mode: %s" % (i, e))
        if f["state"] == "present" and f["content"] is None:
            raise ValueError("files[%d].content: required for %s with state present" % (i, path))
        out.append({"path": path, "mode": mode, "state": f["state"], "content": f["content"]})
    return out


def build_plan(host: Host, files: list):
    p, previous = Plan(), {}
    for f in files:
        before = host.file_state(f["path"])
        after = _files.owned(f["content"], f["mode"]) if f["state"] == "present" else None
        # the directories a created file needs are journaled by the engine (with_parent_dirs)
        previous["file:" + f["path"]] = before
        p.add("file:" + f["path"], before, after)
    return p, previous


def run(module, host: Host) -> dict:
    try:
        files = validate(module.params["files"], host, module.params["journal_dir"])
    except ValueError as e:
        module.fail_json(msg=str(e))
    engine = Engine(module, host, module.params["journal_dir"], domains=(_files.DOMAINS,))
    return without_content(engine.run("managed_files", lambda: build_plan(host, files)))


def without_content(out: dict) -> dict:
    """The result with every file state's content replaced by its size and sha1 (content is
    no_log, as in ansible.builtin.copy; the journal on the node keeps the bytes)."""
    out = dict(out)
    for field in ("previous", "current"):
        if field in out:
            out[field] = dict((k, _files.summary(v)) for k, v in out[field].items())
    if "changes" in out:
        out["changes"] = [dict(c, before=_files.summary(c["before"]), after=_files.summary(c["after"]))
                          for c in out["changes"]]
    return out
