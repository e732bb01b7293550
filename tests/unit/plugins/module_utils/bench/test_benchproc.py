# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Benchmark servers started and stopped by PID: real processes (sleep, and a TCP server on the loopback),
so every test can see a process left behind."""
from __future__ import annotations

import os
import shutil
import socket
import sys

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.bench import _server as bp
from ansible_collections.hpcnet.rdma.plugins.modules import bench_server


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_start_and_stop_by_pid(tmp_path):
    run_dir = str(tmp_path / "run")
    started = bp.start(run_dir, [{"name": "sleep.1", "argv": ["sleep", "60"], "listen": None}], timeout=5)
    pid = started[0]["pid"]
    assert bp.alive(pid, started[0]["start_time"])
    assert os.stat(run_dir).st_mode & 0o777 == 0o700
    assert open(os.path.join(run_dir, "sleep.1.pid")).read().split() == [str(pid), started[0]["start_time"], "sleep"]
    assert bp.stop(run_dir, [], check=True) == {"stopped": [pid], "gone": [], "unknown": [], "removed": []}
    assert bp.alive(pid, None)                      # check mode signalled nothing
    assert bp.stop(run_dir, [pid], grace=2) == {"stopped": [pid], "gone": [], "unknown": [], "removed": []}
    assert not bp.alive(pid, None)
    assert not os.path.exists(os.path.join(run_dir, "sleep.1.pid"))
    # the pid file is gone: the PID is no longer this run's, and the log is not known any more either
    assert bp.stop(run_dir, [pid], remove_dir=True) == {"stopped": [], "gone": [], "unknown": [pid], "removed": []}
    assert os.listdir(run_dir) == ["sleep.1.log"]


def test_waits_until_the_server_listens(tmp_path):
    # a real TCP server that takes a moment to listen (the interpreter's http.server on the loopback:
    # present wherever the tests run, unlike iperf3 - no skip)
    port = free_port()
    argv = [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)]
    started = bp.start(str(tmp_path), [{"name": "http.%d" % port, "argv": argv, "listen": port}], timeout=10)
    try:
        assert bp.listening(port)
    finally:
        res = bp.stop(str(tmp_path), [])
    assert res["stopped"] == [started[0]["pid"]] and not bp.listening(port)


@pytest.mark.parametrize("servers, message", [
    ([{"name": "bw", "argv": ["ib_write_bw", "-d", "rxe0"], "listen": None}],
     "ib_write_bw is not installed on this node (no ib_write_bw in PATH"),
    ([{"name": "ok", "argv": ["sleep", "60"], "listen": None},
      {"name": "bad", "argv": ["sleep", "--no-such-option"], "listen": None}],
     "server bad (sleep --no-such-option) exited with rc 1 before it was ready"),
    ([{"name": "ok", "argv": ["sleep", "60"], "listen": None},
      {"name": "deaf", "argv": ["sleep", "60"], "listen": 1}],
     "server deaf (sleep 60) does not listen on port 1 after 1 s"),
])
def test_a_failed_start_leaves_no_server(tmp_path, monkeypatch, servers, message):
    monkeypatch.setenv("PATH", os.path.dirname(shutil.which("sleep")))
    with pytest.raises(RuntimeError) as e:
        bp.start(str(tmp_path), servers, timeout=1)
    assert message in str(e.value)
    pids = [int(open(os.path.join(str(tmp_path), n)).read().split()[0]) for n in os.listdir(str(tmp_path))
            if n.endswith(".pid")]
    assert pids == []                            # every pid file gone: everything started was stopped


def test_start_stop_and_remove_dir(tmp_path):
    run_dir = str(tmp_path / "run")
    started = bp.start(run_dir, [{"name": "s", "argv": ["sleep", "60"], "listen": None}], timeout=5)
    with open(os.path.join(run_dir, "other.txt"), "w") as f:
        f.write("not the server's\n")
    assert bp.stop(run_dir, [], remove_dir=True, check=True)["removed"] == [
        os.path.join(run_dir, "s.pid"), os.path.join(run_dir, "s.log")]
    res = bp.stop(run_dir, [], remove_dir=True, grace=1)
    assert res["stopped"] == [started[0]["pid"]]
    assert res["removed"] == [os.path.join(run_dir, "s.pid"), os.path.join(run_dir, "s.log")]
    assert os.listdir(run_dir) == ["other.txt"]
    os.unlink(os.path.join(run_dir, "other.txt"))
    assert bp.stop(run_dir, [], remove_dir=True, check=True)["removed"] == [run_dir]
    assert bp.stop(run_dir, [], remove_dir=True)["removed"] == [run_dir] and not os.path.exists(run_dir)


def test_a_reused_pid_is_never_signalled(tmp_path):
    started = bp.start(str(tmp_path), [{"name": "s", "argv": ["sleep", "60"], "listen": None}], timeout=5)
    pid = started[0]["pid"]
    with open(os.path.join(str(tmp_path), "s.pid"), "w") as f:
        f.write("%d 1 sleep\n" % pid)            # the record says another start time: another process
    assert bp.stop(str(tmp_path), [], grace=1) == {"stopped": [], "gone": [pid], "unknown": [], "removed": []}
    assert bp.alive(pid, None)
    # without its pid file, naming the PID does not make it this run's
    assert bp.stop(str(tmp_path), [pid], grace=1) == {"stopped": [], "gone": [], "unknown": [pid], "removed": []}
    assert bp.alive(pid, None)
    assert bp.terminate({pid: (started[0]["start_time"], "sleep")}, grace=1) == []


@pytest.mark.parametrize("stat, expected", [
    ("42 (sleep) S 1 42 42 0 -1 4194560 101 0 0 0 0 0 0 0 20 0 1 0 812345 5 0", "812345"),
    ("42 (a) b) c) S 1 42 42 0 -1 4194560 101 0 0 0 0 0 0 0 20 0 1 0 99 5 0", "99"),
    ("42 (sleep) Z 1 42 42 0 -1 4194560 101 0 0 0 0 0 0 0 20 0 1 0 812345 5 0", None),
])
def test_start_time_from_stat(tmp_path, stat, expected):
    (tmp_path / "42").mkdir()
    (tmp_path / "42" / "stat").write_text(stat)
    assert bp.start_time(42, str(tmp_path)) == expected


@pytest.mark.parametrize("tcp, port, expected", [
    ("  sl  local_address rem_address   st\n   0: 0100007F:4844 00000000:0000 0A 0 0\n", 0x4844, True),
    ("  sl  local_address rem_address   st\n   0: 0100007F:4844 0100007F:9999 01 0 0\n", 0x4844, False),
    ("  sl  local_address rem_address   st\n", 18500, False),
])
def test_listening_from_proc_net_tcp(tmp_path, tcp, port, expected):
    (tmp_path / "net").mkdir()
    (tmp_path / "net" / "tcp").write_text(tcp)
    assert bp.listening(port, str(tmp_path)) is expected


def params(**kw):
    out = {"state": "started", "servers": [], "pids": [], "run_dir": "/run/x", "timeout": 15.0, "grace": 5.0,
           "remove_dir": False}
    out.update(kw)
    return out


@pytest.mark.parametrize("given, errors", [
    (params(servers=[{"name": "a", "argv": ["iperf3", "-s"], "listen": 5201}]), []),
    (params(servers=[]), ["servers: state=started needs at least one server"]),
    (params(state="stopped"), []),
    (params(servers=[{"name": "../a", "argv": ["iperf3"], "listen": None}]),
     ["servers[0].name: '../a' - letters, digits, '_', '.', '-'"]),
    (params(servers=[{"name": "a", "argv": ["bash", "-c", "x"], "listen": None}]),
     ["servers[0].argv: ['bash'] - the first word must be one of iperf3, sockperf, ib_write_bw, ib_send_lat, "
      "ib_write_lat, sleep"]),
    (params(servers=[{"name": "a", "argv": ["iperf3"], "listen": 0}, {"name": "a", "argv": ["iperf3"], "listen": None}]),
     ["servers[0].listen: 0 is outside 1..65535", "servers[1].name: 'a' is given twice"]),
    (params(state="stopped", timeout=0.5, grace=61), ["timeout: 0.5 is outside 1..120 seconds",
                                                      "grace: 61 is outside 0..60 seconds"]),
])
def test_module_validation(given, errors):
    assert bench_server.validate(given) == errors
