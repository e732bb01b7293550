# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Helpers of the reliability suite: real module runs (AnsibleModule, exit_json/fail_json) on a fake root
tree under a temp dir, as separate processes that can be killed with SIGKILL at any write.

A fake node here is a directory: ``/proc/sys`` values as files (as tests/unit/conftest.py does),
``/etc`` files with their modes.  The modules used (sysctl_tuning, managed_files, tuning_state)
need no command, so every run touches only the tree and its journal under it.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import traceback
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _journal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_module  # noqa: E402  (the wrapper, also run as a script)
# Imported once here, so forked runs start fast.
import ansible.module_utils.basic  # pylint: disable=unused-import
import ansible.module_utils.testing  # pylint: disable=unused-import
from ansible_collections.hpcnet.rdma.plugins.modules import managed_files, sysctl_tuning, tuning_state  # pylint: disable=unused-import

RUNNER = os.path.join(HERE, "run_module.py")
JDIR = "/var/lib/hpcnet-rdma"
# The directory holding ansible_collections/, for the subprocesses' PYTHONPATH.
COLLECTIONS = _journal.__file__.split(os.sep + "ansible_collections" + os.sep, maxsplit=1)[0]

SYSCTLS = {"net.ipv4.tcp_rmem": [4096, 87380, 268435456], "net.ipv4.tcp_sack": 0, "vm.swappiness": 10}
FILES = [
    {"path": "/etc/ucx/ucx.conf", "content": "[UCX]\nUCX_TLS=rc,sm\n", "mode": "0644"},   # new dir + file
    {"path": "/etc/security/limits.d/90-rdma.conf", "content": "@rdma - memlock unlimited\n", "mode": "0644"},
    {"path": "/etc/old-rdma.conf", "state": "absent"},
]
TUNE = [
    {"module": "sysctl_tuning", "params": {"sysctls": SYSCTLS, "context": "host"}},
    {"module": "managed_files", "params": {"files": FILES}},
]
ROLLBACK = [{"module": "tuning_state", "params": {"action": "rollback"}}]
STATUS = [{"module": "tuning_state", "params": {"action": "status"}}]


def make_node(root: str) -> None:
    """A pristine node: the values and files the tune above changes, with odd modes."""
    def write(path: str, data: bytes, mode: int = 0o644) -> None:
        full = os.path.join(root, path.lstrip("/"))
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data)
        os.chmod(full, mode)

    write("/proc/sys/net/ipv4/tcp_rmem", b"4096\t131072\t6291456\n")
    write("/proc/sys/net/ipv4/tcp_sack", b"1\n")
    write("/proc/sys/vm/swappiness", b"60\n")
    write("/etc/sysctl.d/90-hpcnet-rdma.conf", b"# a file that was here before\nvm.swappiness = 30\n", 0o640)
    write("/etc/security/limits.d/90-rdma.conf", b"# site limits\r\n@hpc - memlock 1024\r\n", 0o640)
    os.chown(os.path.join(root, "etc/security/limits.d/90-rdma.conf"), 65534, 65534)   # nobody:nogroup, CRLF
    write("/etc/old-rdma.conf", b"options ib_core netns_mode=0\n", 0o644)
    os.makedirs(os.path.join(root, "var/lib"), 0o755)   # as on every node; the journal dir is ours


def snapshot(root: str, skip: Tuple[str, ...] = (JDIR,)) -> Dict[str, Any]:
    """Every entry under ``root`` but the journal directory: type, mode, owner, bytes or target."""
    out: Dict[str, Any] = {}
    skipped = tuple(os.path.join(root, s.lstrip("/")) for s in skip)
    for d, dirs, names in os.walk(root):
        if d.startswith(skipped):
            continue
        for n in dirs + names:
            full = os.path.join(d, n)
            if full.startswith(skipped):
                continue
            st = os.lstat(full)
            rel = os.path.relpath(full, root)
            if os.path.islink(full):
                out[rel] = ("link", os.readlink(full))
            elif os.path.isdir(full):
                out[rel] = ("dir", oct(st.st_mode), st.st_uid, st.st_gid)
            else:
                with open(full, "rb") as f:
                    data = f.read()
                if rel.startswith("proc" + os.sep):
                    data = b" ".join(data.split())   # the kernel renders a value; its whitespace is not state
                out[rel] = ("file", oct(st.st_mode), st.st_uid, st.st_gid, data)
    return out


def journal_entries(root: str) -> List[str]:
    d = os.path.join(root, JDIR.lstrip("/"))
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


def read_journal(root: str) -> Optional[Dict[str, Any]]:
    path = os.path.join(root, JDIR.lstrip("/"), "journal.json")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def forked(root: str, steps: List[Dict[str, Any]], out: str, kill_at: Optional[int] = None,
           count_file: Optional[str] = None, refuse: Optional[List[str]] = None) -> Tuple[int, List[Dict[str, Any]]]:
    """Run ``steps`` in a forked child (a separate process; fork keeps the suite in seconds where
    a fresh interpreter per run would take minutes).  Returns the raw wait status and the results.
    ``refuse``: paths whose writes fail with EACCES in the child (run_module.refuse)."""
    job = {"root": root, "steps": steps, "kill_at": kill_at, "count_file": count_file, "refuse": refuse}
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 70
        try:
            with open(out, "w", encoding="utf-8") as f:
                code = run_module.run_job(job, f)
        except BaseException:  # noqa: BLE001 - report anything, then leave without pytest's teardown
            traceback.print_exc()
        finally:
            os._exit(code)
    _pid, status = os.waitpid(pid, 0)
    with open(out, encoding="utf-8") as f:
        results = [json.loads(line) for line in f if line.strip()]
    return status, results


def parallel(fn: Any, items: List[Any], workers: int = 0) -> List[Any]:
    """``[fn(item) for item in items]``, each call in a forked worker, ``workers`` at a time (the
    CPU count by default); ``fn`` returns something JSON can carry."""
    workers = workers or os.cpu_count() or 2
    results: Dict[int, Any] = {}
    running: Dict[int, Tuple[int, str]] = {}
    todo = list(enumerate(items))
    tmp = tempfile.mkdtemp(prefix="hpcnet-parallel-")
    try:
        while todo or running:
            while todo and len(running) < workers:
                i, item = todo.pop(0)
                path = os.path.join(tmp, "%d.json" % i)
                pid = os.fork()
                if pid == 0:
                    code = 70
                    try:
                        value = fn(item)
                        with open(path, "w", encoding="utf-8") as f:
                            json.dump(value, f)
                        code = 0
                    except BaseException:  # noqa: BLE001
                        traceback.print_exc()
                    finally:
                        os._exit(code)
                running[pid] = (i, path)
            pid, status = os.wait()
            i, path = running.pop(pid)
            if status != 0:
                raise AssertionError("worker for %r exited with status %d" % (items[i], status))
            with open(path, encoding="utf-8") as f:
                results[i] = json.load(f)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return [results[i] for i in range(len(items))]


def killed(status: int) -> bool:
    return os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL


def spawn(root: str, steps: List[Dict[str, Any]], job_file: str) -> subprocess.Popen:
    """The wrapper in a fresh interpreter (used where processes must really run side by side)."""
    with open(job_file, "w", encoding="utf-8") as f:
        json.dump({"root": root, "steps": steps}, f)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([COLLECTIONS, os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, RUNNER, job_file], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, text=True)


def module_process(module: str, params: Dict[str, Any], check_mode: bool = False, env: Optional[Dict[str, str]] = None,
                   timeout: float = 120) -> Dict[str, Any]:
    """One module run as Ansible runs it: the module file in a fresh interpreter, its arguments in a JSON
    file (``{"ANSIBLE_MODULE_ARGS": ...}``); the JSON it prints, with ``rc`` (for a module that acts on the
    real host, as bench_server does, where a fake root tree cannot stand in)."""
    fd, args_file = tempfile.mkstemp(prefix="hpcnet-args-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump({"ANSIBLE_MODULE_ARGS": dict(params, _ansible_check_mode=check_mode)}, f)
    path = os.path.join(COLLECTIONS, "ansible_collections", "hpcnet", "rdma", "plugins", "modules", module + ".py")
    environ = dict(os.environ, PYTHONPATH=os.pathsep.join([COLLECTIONS, os.environ.get("PYTHONPATH", "")]))
    environ.update(env or {})
    try:
        proc = subprocess.run([sys.executable, path, args_file], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=environ, text=True, timeout=timeout, check=False)
    finally:
        os.unlink(args_file)
    try:
        result = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError("%s printed no JSON (rc %d): %s %s" % (module, proc.returncode, proc.stdout, proc.stderr))
    result["rc"] = proc.returncode
    return result


def clone(template: str, dest: str) -> str:
    """A copy of a node tree with modes, and owners (copytree alone makes every file root's)."""
    shutil.copytree(template, dest, symlinks=True)
    for d, dirs, names in os.walk(template):
        for n in dirs + names:
            src = os.path.join(d, n)
            st = os.lstat(src)
            if (st.st_uid, st.st_gid) != (0, 0):
                os.lchown(os.path.join(dest, os.path.relpath(src, template)), st.st_uid, st.st_gid)
    return dest
