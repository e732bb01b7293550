# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Benchmark servers on a node, started and stopped by PID (used by hpcnet.rdma.bench_server).

A server runs in a session of its own (``setsid``), its output goes to ``RUN_DIR/NAME.log`` and its
identity to ``RUN_DIR/NAME.pid``: ``PID STARTTIME ARGV0`` (STARTTIME is field 22 of
``/proc/PID/stat``, the clock ticks since boot the process started at).  Stopping checks that the
PID still has that start time (a PID the kernel has reused for another process is never signalled),
sends SIGTERM to the server's process group, then SIGKILL after a grace period.  ``proc`` is the
procfs root, so tests can point it elsewhere.
"""
from __future__ import annotations

import os
import signal
import subprocess
import time
from typing import Any, Dict, List, Optional

SERVER_TOOLS = ("iperf3", "sockperf", "ib_write_bw", "ib_send_lat", "ib_write_lat", "sleep")


def which(tool: str, path: Optional[str] = None) -> Optional[str]:
    for d in (path or os.environ.get("PATH") or "/usr/sbin:/usr/bin:/sbin:/bin").split(os.pathsep):
        candidate = os.path.join(d, tool)
        if d and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def start_time(pid: int, proc: str = "/proc") -> Optional[str]:
    """Field 22 of /proc/PID/stat (after the parenthesised command), None when the process is gone or a zombie."""
    try:
        with open("%s/%d/stat" % (proc, pid)) as f:
            stat = f.read()
    except OSError:
        return None
    rest = stat[stat.rfind(")") + 2:].split()
    if len(rest) < 20 or rest[0] == "Z":
        return None
    return rest[19]


def listening(port: int, proc: str = "/proc") -> bool:
    """A TCP socket in LISTEN (state 0A) on ``port`` (any address), from /proc/net/tcp and tcp6."""
    for name in ("tcp", "tcp6"):
        try:
            with open("%s/net/%s" % (proc, name)) as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 3 and fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                return True
    return False


def _tail(path: str, limit: int = 400) -> str:
    try:
        with open(path, errors="replace") as f:
            return " ".join(f.read()[-limit:].split())
    except OSError:
        return ""


def start(run_dir: str, servers: List[Dict[str, Any]], timeout: float, proc: str = "/proc") -> List[Dict[str, Any]]:
    """Start every server; wait until each listens (``listen`` port) or is still alive after a second.

    On any failure the servers already started are stopped and RuntimeError names the server and why.
    """
    os.makedirs(run_dir, mode=0o700, exist_ok=True)
    started: List[Dict[str, Any]] = []
    try:
        for srv in servers:
            exe = which(srv["argv"][0])
            if exe is None:
                raise RuntimeError("%s is not installed on this node (no %s in PATH %s) - server %s"
                                   % (srv["argv"][0], srv["argv"][0], os.environ.get("PATH"), srv["name"]))
            log = os.path.join(run_dir, srv["name"] + ".log")
            with open(log, "wb") as out:
                p = subprocess.Popen([exe] + list(srv["argv"][1:]), stdin=subprocess.DEVNULL, stdout=out,
                                     stderr=subprocess.STDOUT, close_fds=True, start_new_session=True,
                                     env=dict(os.environ, LC_ALL="C"))
            st = start_time(p.pid, proc)
            entry = {"name": srv["name"], "pid": p.pid, "start_time": st, "argv": list(srv["argv"]), "log": log,
                     "_popen": p}
            with open(os.path.join(run_dir, srv["name"] + ".pid"), "w") as f:
                f.write("%d %s %s\n" % (p.pid, st, srv["argv"][0]))
            started.append(entry)
        deadline = time.monotonic() + timeout
        for entry, srv in zip(started, servers):
            while True:
                if entry["_popen"].poll() is not None:
                    raise RuntimeError("server %s (%s) exited with rc %s before it was ready: %s"
                                       % (srv["name"], " ".join(srv["argv"]), entry["_popen"].returncode,
                                          _tail(entry["log"])))
                if srv.get("listen") and listening(int(srv["listen"]), proc):
                    break
                if not srv.get("listen") and time.monotonic() >= deadline - timeout + 1.0:
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError("server %s (%s) does not listen on port %s after %.0f s: %s"
                                       % (srv["name"], " ".join(srv["argv"]), srv.get("listen"), timeout,
                                          _tail(entry["log"])))
                time.sleep(0.05)
    except BaseException:
        stop(run_dir, [e["pid"] for e in started], proc=proc)
        for e in started:
            e["_popen"].poll()
        raise
    for e in started:
        # the server outlives this process: drop the Popen object without waiting
        e["_popen"].returncode = 0
        del e["_popen"]
    return started


def recorded(run_dir: str) -> Dict[int, Dict[str, Any]]:
    """PID -> {start_time, tool, pidfile} of every pid file in the run directory."""
    out: Dict[int, Dict[str, Any]] = {}
    try:
        names = sorted(os.listdir(run_dir))
    except OSError:
        return out
    for name in names:
        if not name.endswith(".pid"):
            continue
        try:
            with open(os.path.join(run_dir, name)) as f:
                fields = f.read().split()
            out[int(fields[0])] = {"start_time": fields[1], "tool": fields[2], "pidfile": os.path.join(run_dir, name)}
        except (OSError, ValueError, IndexError):
            continue
    return out


def alive(pid: int, expected_start: Optional[str], proc: str = "/proc") -> bool:
    st = start_time(pid, proc)
    return st is not None and (expected_start in (None, "None") or st == expected_start)


def stop(run_dir: str, pids: List[int], grace: float = 5.0, proc: str = "/proc", check: bool = False,
         remove_dir: bool = False) -> Dict[str, List[int]]:
    """Stop the given PIDs and every PID recorded in ``run_dir``: SIGTERM to the group, SIGKILL after ``grace``.

    Returns ``stopped`` (were running and are gone now) and ``gone`` (had already exited).  A PID whose
    start time no longer matches its pid file belongs to another process now and is left alone (``gone``).
    ``check`` only predicts.  RuntimeError when a server survives SIGKILL.
    """
    known = recorded(run_dir)
    todo: Dict[int, Optional[str]] = dict((pid, info["start_time"]) for pid, info in known.items())
    for pid in pids or []:
        todo.setdefault(int(pid), None)
    running = [pid for pid, st in sorted(todo.items()) if alive(pid, st, proc)]
    result = {"stopped": running, "gone": [pid for pid in sorted(todo) if pid not in running]}
    if check:
        return result
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 2.0)):
        left = [pid for pid in running if alive(pid, todo[pid], proc)]
        for pid in left:
            try:
                os.killpg(pid, sig)
            except OSError:
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
        deadline = time.monotonic() + wait
        while left and time.monotonic() < deadline:
            for pid in list(left):
                try:
                    os.waitpid(pid, os.WNOHANG)
                except OSError:
                    pass
            left = [pid for pid in left if alive(pid, todo[pid], proc)]
            if left:
                time.sleep(0.05)
    survivors = [pid for pid in running if alive(pid, todo[pid], proc)]
    if survivors:
        raise RuntimeError("server PID(s) %s survived SIGKILL" % survivors)
    for info in known.values():
        try:
            os.unlink(info["pidfile"])
        except OSError:
            pass
    if remove_dir and os.path.isdir(run_dir):
        for name in os.listdir(run_dir):
            try:
                os.unlink(os.path.join(run_dir, name))
            except OSError:
                pass
        try:
            os.rmdir(run_dir)
        except OSError:
            pass
    return result
