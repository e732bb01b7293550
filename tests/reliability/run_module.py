# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run hpcnet.rdma modules for real (AnsibleModule, exit_json/fail_json) against a fake root.

Usage: ``python run_module.py JOB.json`` (or the job on stdin); the job is::

    {"root": "/tmp/.../root", "kill_at": N or null, "count_file": PATH or null, "refuse": [PATH, ...] or null,
     "steps": [{"module": "sysctl_tuning", "params": {...}, "check_mode": false}, ...]}

Each step builds a real ``AnsibleModule`` from the module's ARGUMENT_SPEC and calls the module's
``run(module, host)`` with a ``Host`` rooted at ``root`` (as tests/unit/conftest.py does), then
``exit_json``.  Every step's JSON result is printed on its own line of stdout.

With ``kill_at`` the process SIGKILLs itself right before its Nth durable write: a call of
``os.write``, ``os.fsync``, ``os.replace``, ``os.rename``, ``os.unlink``, ``os.mkdir`` or
``os.rmdir`` (counted across all steps).  ``count_file`` receives how many such calls the steps
made, so a test can kill at each one in turn.  With ``refuse`` every open for writing of a path that
ends with one of those (e.g. ``/proc/sys/vm/dirty_ratio``) fails with EACCES, as a kernel that refuses
a value does.  Nothing in the collection knows about this.
"""
from __future__ import annotations

import errno
import io
import json
import os
import signal
import sys
from contextlib import redirect_stdout
from typing import Any, Dict, List

WRITES = ("write", "fsync", "replace", "rename", "unlink", "mkdir", "rmdir")


def arm(kill_at: Any) -> List[int]:
    """Count (and at ``kill_at`` die at) every durable write of this process."""
    seen = [0]

    def wrap(name: str, real: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            seen[0] += 1
            if kill_at is not None and seen[0] == kill_at:
                sys.stdout.flush()
                os.kill(os.getpid(), signal.SIGKILL)
            return real(*args, **kwargs)
        call.__name__ = name
        return call

    for name in WRITES:
        setattr(os, name, wrap(name, getattr(os, name)))
    return seen


def refuse(paths: Any) -> None:
    """Open for writing fails with EACCES for a path that ends with one of ``paths``."""
    import builtins
    if not paths:
        return
    real = builtins.open

    def guarded(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, str) and any(c in mode for c in "wax+") and file.endswith(tuple(paths)):
            raise PermissionError(errno.EACCES, "Permission denied (refused by the test)", file)
        return real(file, mode, *args, **kwargs)

    builtins.open = guarded


def step(root: str, spec: Dict[str, Any]) -> Dict[str, Any]:
    import importlib

    from ansible.module_utils import basic
    from ansible.module_utils.testing import patch_module_args
    from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host, module_bin_path, module_runner

    mod = importlib.import_module("ansible_collections.hpcnet.rdma.plugins.modules." + spec["module"])
    args = dict(spec.get("params") or {})
    args["_ansible_check_mode"] = bool(spec.get("check_mode"))
    args["_ansible_diff"] = True
    args["_ansible_no_log"] = False
    out = io.StringIO()
    rc = 0
    with patch_module_args(args), redirect_stdout(out):
        try:
            module = basic.AnsibleModule(argument_spec=mod.ARGUMENT_SPEC, supports_check_mode=True)
            host = Host(root=root, runner=module_runner(module), bin_path=module_bin_path(module))
            module.exit_json(**mod.run(module, host))
        except SystemExit as e:
            rc = int(e.code or 0)
    result = json.loads(out.getvalue())
    result["rc"] = rc
    return result


def run_job(job: Dict[str, Any], out: Any) -> int:
    """Run the job's steps in this process, one JSON result per line on ``out``."""
    import ansible.module_utils.basic  # noqa: F401  (imported before counting starts)
    seen = arm(job.get("kill_at"))
    refuse(job.get("refuse"))
    for spec in job["steps"]:
        out.write(json.dumps(step(job["root"], spec)) + "\n")
        out.flush()
    if job.get("count_file"):
        with open(job["count_file"], "w") as f:
            f.write("%d\n" % seen[0])
    return 0


def main() -> int:
    if len(sys.argv) > 1:
        with open(sys.argv[1], encoding="utf-8") as f:
            return run_job(json.load(f), sys.stdout)
    return run_job(json.load(sys.stdin), sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
