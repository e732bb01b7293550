# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""sysctl_tuning on bad input (issue 30): a value the real kernel refuses is named with its allowed
range and every change of the call is reverted (in a throwaway network namespace, what is asserted
is what the kernel reads back); an empty ``sysctls`` is a no-op that creates nothing."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile

from rlib import COLLECTIONS, RUNNER, clone, forked, journal_entries, snapshot


def _netns_run(ns: str, tmp: str, steps: list) -> list:
    job = os.path.join(tmp, "job.json")
    with open(job, "w", encoding="utf-8") as f:
        json.dump({"root": "/", "steps": steps}, f)
    env = {"PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"), "PYTHONPATH": COLLECTIONS, "LC_ALL": "C"}
    proc = subprocess.run(["ip", "netns", "exec", ns, sys.executable, RUNNER, job], env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=300, check=False)
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert len(lines) == len(steps), "rc=%d stderr=%s" % (proc.returncode, proc.stderr[-2000:])
    return [json.loads(line) for line in lines]


def _kernel(ns: str, key: str) -> str:
    path = "/proc/sys/" + key.replace(".", "/")
    proc = subprocess.run(["ip", "netns", "exec", ns, "cat", path], capture_output=True, text=True, check=True)
    return " ".join(proc.stdout.split())


def test_a_value_the_kernel_refuses_names_key_value_errno_and_range_and_reverts_the_call():
    assert os.geteuid() == 0, "the reliability tier runs as root (network namespaces)"
    ns = "hpcnet-sysctl-%d" % os.getpid()
    tmp = tempfile.mkdtemp(prefix="hpcnet-sysctl-", dir="/run")   # a journal dir only root can reach
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        keys = ("net.ipv4.tcp_sack", "net.ipv4.ip_default_ttl")
        before = dict((k, _kernel(ns, k)) for k in keys)
        sack = "0" if before["net.ipv4.tcp_sack"] == "1" else "1"
        # runtime only: the node root is the real / here, no sysctl.d file may be written
        params = {"sysctls": {"net.ipv4.tcp_sack": sack, "net.ipv4.ip_default_ttl": 0}, "mode": "runtime",
                  "context": "host", "journal_dir": os.path.join(tmp, "journal")}
        (result,) = _netns_run(ns, tmp, [{"module": "sysctl_tuning", "params": params}])
        assert result["rc"] == 1 and result["failed"], result
        msg = result["msg"]
        assert "sysctl_tuning failed and changed nothing" in msg, msg
        assert ("the kernel refused '0' for net.ipv4.ip_default_ttl (EINVAL: Invalid argument): out of the range or "
                "set of values it allows; allowed: 1-255; it still holds %r" % before["net.ipv4.ip_default_ttl"]) in msg, msg
        assert "reverted 1 earlier change(s) of this call" in msg, msg
        # the kernel's word: both keys as they were, tcp_sack written and then reverted
        assert dict((k, _kernel(ns, k)) for k in keys) == before
        # a call that changed nothing leaves no journal, and no directory or lock it created either
        assert not os.path.exists(os.path.join(tmp, "journal"))
    finally:
        subprocess.run(["ip", "netns", "delete", ns], capture_output=True, check=False)
        shutil.rmtree(tmp, ignore_errors=True)


def test_empty_sysctls_is_a_no_op_that_creates_nothing(pristine, work):
    node = clone(pristine, os.path.join(work, "node"))
    before = snapshot(node, skip=())
    steps = [
        {"module": "sysctl_tuning", "params": {"sysctls": {}, "context": "host"}},
        {"module": "sysctl_tuning", "params": {"sysctls": {}, "mode": "persist"}},
        {"module": "node_tuning", "params": {"steps": [{"module": "sysctl_tuning", "args": {"sysctls": {}}}]}},
    ]
    status, results = forked(node, steps, os.path.join(work, "out.json"))
    assert status == 0 and [r["rc"] for r in results] == [0, 0, 0], [r.get("msg") for r in results]
    assert [r["changed"] for r in results] == [False, False, False]
    assert results[0]["changes"] == [] and results[0]["msg"] == "sysctls is empty: nothing to do"
    assert snapshot(node, skip=()) == before          # no journal directory, no lock, no sysctl.d file
    assert journal_entries(node) == []
