# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""bench_server in hostile state (issue 30): real module runs (the module file run as Ansible runs it)
against real processes and a run directory under a temp dir.

It signals only what it started (a pid file of its run directory whose PID still has the recorded start
time and tool), removes only the files its servers wrote, opens nothing through a planted link and refuses
a run directory another user controls.  The suite runs as root; "another user" is uid 65534.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import time

import pytest

from rlib import module_process

SLEEP = ["sleep", "300"]


def _victim():
    """A process this module never started, leading a process group of its own (as a server would)."""
    return subprocess.Popen(SLEEP, start_new_session=True)


def _running(proc):
    return proc.poll() is None


def _end(proc):
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def _start_time(pid):
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[19]


def _gone(pid, start):
    """Exited (a zombie until whoever adopted it reaps it), or the PID is another process now."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            rest = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return True
    return rest[0] == "Z" or rest[19] != start


def test_a_pid_without_a_pid_file_is_never_signalled(work):
    victim = _victim()
    run_dir = os.path.join(work, "run")
    os.mkdir(run_dir, 0o700)
    try:
        res = module_process("bench_server", {"state": "stopped", "pids": [victim.pid], "run_dir": run_dir, "grace": 1})
        time.sleep(0.2)
        assert _running(victim), "bench_server signalled a process group it never started"
        assert res["rc"] == 0 and res["unknown"] == [victim.pid] and res["stopped"] == [] and not res["changed"]
        assert "never signalled" in json.dumps(res.get("warnings")), res
    finally:
        _end(victim)


def test_a_pid_file_whose_process_runs_another_command_is_never_signalled(work):
    """Right PID, right start time, but the command is not the recorded tool: not ours."""
    victim = _victim()
    run_dir = os.path.join(work, "run")
    os.mkdir(run_dir, 0o700)
    with open(os.path.join(run_dir, "iperf3.18500.pid"), "w") as f:
        f.write("%d %s iperf3\n" % (victim.pid, _start_time(victim.pid)))
    try:
        res = module_process("bench_server", {"state": "stopped", "run_dir": run_dir, "grace": 1})
        time.sleep(0.2)
        assert _running(victim)
        assert res["rc"] == 0 and res["gone"] == [victim.pid] and res["stopped"] == []
    finally:
        _end(victim)


def test_a_server_it_started_is_stopped_by_its_pid_file(work):
    run_dir = os.path.join(work, "run")
    started = module_process("bench_server", {"state": "started", "run_dir": run_dir,
                                              "servers": [{"name": "s.1", "argv": SLEEP}]})
    assert started["rc"] == 0, started
    pid = started["servers"][0]["pid"]
    res = module_process("bench_server", {"state": "stopped", "pids": [pid], "run_dir": run_dir, "grace": 1})
    assert res["rc"] == 0 and res["stopped"] == [pid] and res["changed"], res
    assert _gone(pid, started["servers"][0]["start_time"])


def test_remove_dir_removes_only_its_servers_files_and_says_changed(work):
    run_dir = os.path.join(work, "node")
    os.mkdir(run_dir, 0o700)
    precious = {"site.conf": "keep me\n", "iperf3.x.csv": "1,2\n"}
    for name, text in precious.items():
        with open(os.path.join(run_dir, name), "w") as f:
            f.write(text)
    # a server of an earlier run that has exited: its pid and log files are this module's to remove
    with open(os.path.join(run_dir, "sleep.1.pid"), "w") as f:
        f.write("999999999 1 sleep\n")
    with open(os.path.join(run_dir, "sleep.1.log"), "w") as f:
        f.write("log\n")
    params = {"state": "stopped", "run_dir": run_dir, "remove_dir": True, "grace": 1}
    check = module_process("bench_server", params, check_mode=True)
    assert check["rc"] == 0 and check["changed"] and sorted(os.listdir(run_dir)) == sorted(list(precious) + [
        "sleep.1.log", "sleep.1.pid"])
    res = module_process("bench_server", params)
    assert res["rc"] == 0 and res["changed"] is True, res
    assert sorted(res["removed"]) == [os.path.join(run_dir, "sleep.1.log"), os.path.join(run_dir, "sleep.1.pid")]
    assert sorted(os.listdir(run_dir)) == sorted(precious)
    for name, text in precious.items():
        with open(os.path.join(run_dir, name)) as f:
            assert f.read() == text


def test_remove_dir_removes_the_directory_its_servers_alone_used(work):
    run_dir = os.path.join(work, "run")
    started = module_process("bench_server", {"state": "started", "run_dir": run_dir,
                                              "servers": [{"name": "s.1", "argv": SLEEP}]})
    assert started["rc"] == 0, started
    res = module_process("bench_server", {"state": "stopped", "run_dir": run_dir, "remove_dir": True, "grace": 1})
    assert res["rc"] == 0 and res["changed"] and res["removed"][-1] == run_dir and not os.path.exists(run_dir)


def _plant(work, case):
    run_dir = os.path.join(work, "run")
    victim = os.path.join(work, "victim")
    with open(victim, "w") as f:
        f.write("precious\n")
    if case == "symlinked log":
        os.mkdir(run_dir, 0o700)
        os.symlink(victim, os.path.join(run_dir, "s.1.log"))
    elif case == "symlinked pid file":
        os.mkdir(run_dir, 0o700)
        os.symlink(victim, os.path.join(run_dir, "s.1.pid"))
    elif case == "run_dir of another uid":
        os.mkdir(run_dir, 0o700)
        os.chown(run_dir, 65534, 65534)
    elif case == "group-writable run_dir":
        os.mkdir(run_dir, 0o700)
        os.chmod(run_dir, 0o770)
    elif case == "run_dir is a symlink":
        os.mkdir(os.path.join(work, "elsewhere"), 0o700)
        os.symlink(os.path.join(work, "elsewhere"), run_dir)
    elif case == "parent writable by others":
        parent = os.path.join(work, "open")
        os.mkdir(parent, 0o777)
        os.chmod(parent, 0o777)
        run_dir = os.path.join(parent, "run")
    return run_dir, victim


HOSTILE = {
    "symlinked log": r"/run/s\.1\.log is a symbolic link; refusing to follow it",
    "symlinked pid file": r"/run/s\.1\.pid is a symbolic link; refusing to follow it",
    "run_dir of another uid": r"run_dir .*/run is not trusted: .*/run is owned by uid 65534, not by root",
    "group-writable run_dir": r"run_dir .*/run is not trusted: .*/run is writable by group or others \(mode 0770\)",
    "run_dir is a symlink": r"run_dir .*/run is not trusted: .*/run is a symbolic link",
    "parent writable by others": r"run_dir .*/open/run is not trusted: .*/open is writable by group or others "
                                 r"\(mode 0777\) without the sticky bit",
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_run_dir_is_refused_and_nothing_runs_or_changes(work, case):
    run_dir, victim = _plant(work, case)
    before = sorted(os.listdir(work))
    mark = "299.%d" % os.getpid()          # a command line only this test's server would have
    res = module_process("bench_server", {"state": "started", "run_dir": run_dir,
                                          "servers": [{"name": "s.1", "argv": ["sleep", mark]}]})
    assert res["rc"] == 1 and res["failed"], res
    assert re.search(HOSTILE[case], res["msg"]), res["msg"]
    with open(victim) as f:
        assert f.read() == "precious\n"
    assert sorted(os.listdir(work)) == before
    ps = subprocess.run(["pgrep", "-f", "sleep %s$" % mark], stdout=subprocess.PIPE, text=True, check=False).stdout
    assert ps.split() == [], "a server was left running"
    if os.path.isdir(run_dir) and case not in ("symlinked log", "symlinked pid file"):
        stop = module_process("bench_server", {"state": "stopped", "run_dir": run_dir, "remove_dir": True})
        assert stop["rc"] == 1 and re.search(HOSTILE[case], stop["msg"]), stop
