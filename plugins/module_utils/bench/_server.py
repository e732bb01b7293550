# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Benchmark servers on a node, started and stopped by PID (used by hpcnet.rdma.bench_server).

A server runs in a session of its own (``setsid``), its output goes to ``RUN_DIR/NAME.log`` and its
identity to ``RUN_DIR/NAME.pid``: ``PID STARTTIME ARGV0`` (STARTTIME is field 22 of
``/proc/PID/stat``, the clock ticks since boot the process started at).  Only what a pid file
records is ever signalled, and only while the PID still has that start time and its command line
still starts with that tool (a PID the kernel has reused for another process, or a PID no pid file
names, is never signalled); SIGTERM goes to the server's process group only when the server still
leads it, then SIGKILL after a grace period.

The run directory must be trusted as the journal's directory is (``_journal_file.trust_problem``: root's,
not writable by group or others, its parents only root can write) and not a symbolic link itself; the
pid and log files are opened with ``O_NOFOLLOW`` (a planted link is refused, its target untouched).
Removing the directory removes only the pid and log files of the servers recorded in it, then the
directory when nothing else is left.  ``proc`` is the procfs root, so tests can point it elsewhere.
"""
from __future__ import annotations

import os
import signal
import stat
import subprocess
import time

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._journal_file import trust_problem

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
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


def cmdline_tool(pid: int, proc: str = "/proc") -> Optional[str]:
    """The base name of the process's argv[0] (/proc/PID/cmdline), None when it cannot be read or is empty."""
    try:
        with open("%s/%d/cmdline" % (proc, pid), "rb") as f:
            argv0 = f.read().split(b"\0", 1)[0]
    except OSError:
        return None
    return os.path.basename(argv0.decode("utf-8", "replace")) or None


class UntrustedRunDir(RuntimeError):
    """The run directory (or a file in it) is not one only root controls."""


def check_run_dir(run_dir: str) -> None:
    """UntrustedRunDir when ``run_dir`` is a symbolic link or fails the journal directory's trust rule."""
    full = os.path.abspath(run_dir)
    problem = None
    if os.path.islink(full):
        problem = "%s is a symbolic link" % full
    elif os.path.lexists(full) and not os.path.isdir(full):
        problem = "%s is not a directory" % full
    else:
        problem = trust_problem(full)
    if problem:
        raise UntrustedRunDir("run_dir %s is not trusted: %s. Whoever can change it chooses what root signals, "
                              "truncates and removes there; use a directory owned by root, mode 0700, whose "
                              "parents only root can write (or sticky, like /tmp)" % (run_dir, problem))


_OPEN_FLAGS = os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def _open_own(path: str, flags: int) -> int:
    """A file of the run directory, opened without following a link; UntrustedRunDir names a link or a
    file that is not a regular file of root's."""
    try:
        fd = os.open(path, flags | _OPEN_FLAGS, 0o600)
    except OSError as e:
        if os.path.islink(path):
            raise UntrustedRunDir("%s is a symbolic link; refusing to follow it (its target is left untouched)" % path)
        raise e
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid not in (0, os.geteuid()) or st.st_nlink > 1:
        os.close(fd)
        raise UntrustedRunDir("%s is not a regular file of root's with one link (uid %d, mode %o, %d links); "
                              "left untouched" % (path, st.st_uid, st.st_mode, st.st_nlink))
    return fd


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
    check_run_dir(run_dir)
    os.makedirs(run_dir, mode=0o700, exist_ok=True)
    check_run_dir(run_dir)
    started: List[Dict[str, Any]] = []
    try:
        for srv in servers:
            exe = which(srv["argv"][0])
            if exe is None:
                raise RuntimeError("%s is not installed on this node (no %s in PATH %s) - server %s"
                                   % (srv["argv"][0], srv["argv"][0], os.environ.get("PATH"), srv["name"]))
            log = os.path.join(run_dir, srv["name"] + ".log")
            pidfile = os.path.join(run_dir, srv["name"] + ".pid")
            out = _open_own(log, os.O_WRONLY | os.O_CREAT)
            try:
                os.ftruncate(out, 0)
                p = subprocess.Popen([exe] + list(srv["argv"][1:]), stdin=subprocess.DEVNULL, stdout=out,
                                     stderr=subprocess.STDOUT, close_fds=True, start_new_session=True,
                                     env=dict(os.environ, LC_ALL="C"))
            finally:
                os.close(out)
            st = start_time(p.pid, proc)
            entry = {"name": srv["name"], "pid": p.pid, "start_time": st, "argv": list(srv["argv"]), "log": log,
                     "_popen": p}
            started.append(entry)
            pid_fd = _open_own(pidfile, os.O_WRONLY | os.O_CREAT)
            try:
                os.ftruncate(pid_fd, 0)
                os.write(pid_fd, ("%d %s %s\n" % (p.pid, st, srv["argv"][0])).encode())
            finally:
                os.close(pid_fd)
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
        # What this call started is known by its Popen (a pid file may be missing if its write failed), so it
        # is stopped through it: a child that has not exec'd its tool yet would not pass same_process's
        # command-line check, and a loaded machine was seen to leave one running that way.
        for e in started:
            stop_child(e["_popen"])
        forget(run_dir, [e["name"] for e in started])
        raise
    for e in started:
        # the server outlives this process: drop the Popen object without waiting
        e["_popen"].returncode = 0
        del e["_popen"]
    return started


def stop_child(p: Any, grace: float = 5.0) -> None:
    """Stop a server this very call started (its own session, so it leads its process group): SIGTERM to
    the group, SIGKILL after ``grace``, and reap it."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 2.0)):
        if p.poll() is not None:
            return
        try:
            os.killpg(p.pid, sig)
        except OSError:
            pass
        try:
            p.wait(wait)
        except subprocess.TimeoutExpired:
            pass


def recorded(run_dir: str) -> Dict[int, Dict[str, Any]]:
    """PID -> {start_time, tool, name, pidfile} of every pid file in the run directory (a file that is a
    link, not root's or not ``PID STARTTIME TOOL`` records nothing)."""
    out: Dict[int, Dict[str, Any]] = {}
    try:
        names = sorted(os.listdir(run_dir))
    except OSError:
        return out
    for name in names:
        if not name.endswith(".pid"):
            continue
        path = os.path.join(run_dir, name)
        try:
            fd = _open_own(path, os.O_RDONLY | os.O_NONBLOCK)
        except (OSError, UntrustedRunDir):
            continue
        try:
            fields = os.read(fd, 4096).decode("utf-8", "replace").split()
        except OSError:
            continue
        finally:
            os.close(fd)
        if len(fields) != 3 or not fields[0].isdigit() or not fields[1].isdigit():
            continue
        out[int(fields[0])] = {"start_time": fields[1], "tool": fields[2], "name": name[:-len(".pid")],
                               "pidfile": path}
    return out


def same_process(pid: int, expected_start: Optional[str], tool: Optional[str], proc: str = "/proc") -> bool:
    """The process that was started: running (not a zombie), with that start time and that tool as argv[0]."""
    st = start_time(pid, proc)
    if st is None or expected_start is None or st != expected_start:
        return False
    return tool is None or cmdline_tool(pid, proc) == os.path.basename(tool)


def alive(pid: int, expected_start: Optional[str], proc: str = "/proc") -> bool:
    st = start_time(pid, proc)
    return st is not None and (expected_start in (None, "None") or st == expected_start)


def _signal(pid: int, sig: int) -> None:
    """``sig`` to the server's process group when it still leads one (it was started in a session of its own),
    else to the server alone: never to a group it does not lead."""
    try:
        if os.getpgid(pid) == pid:
            os.killpg(pid, sig)
            return
    except OSError:
        pass
    try:
        os.kill(pid, sig)
    except OSError:
        pass


def terminate(targets: Dict[int, Any], grace: float = 5.0, proc: str = "/proc") -> List[int]:
    """SIGTERM, then SIGKILL after ``grace``, to each PID of ``targets`` (PID -> (start time, tool)) while it is
    still that process.  Returns the PIDs that survived SIGKILL."""
    running = [pid for pid in sorted(targets) if same_process(pid, targets[pid][0], targets[pid][1], proc)]
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 2.0)):
        left = [pid for pid in running if same_process(pid, targets[pid][0], targets[pid][1], proc)]
        for pid in left:
            _signal(pid, sig)
        deadline = time.monotonic() + wait
        while left and time.monotonic() < deadline:
            for pid in list(left):
                try:
                    os.waitpid(pid, os.WNOHANG)
                except OSError:
                    pass
            left = [pid for pid in left if alive(pid, targets[pid][0], proc)]
            if left:
                time.sleep(0.05)
    return [pid for pid in running if alive(pid, targets[pid][0], proc)]


def forget(run_dir: str, names: List[str], logs: bool = False) -> List[str]:
    """Remove the pid files (and with ``logs`` the log files) of the servers ``names``; the paths removed."""
    removed = []
    for name in names:
        for suffix in (".pid", ".log") if logs else (".pid",):
            path = os.path.join(run_dir, name + suffix)
            try:
                st = os.lstat(path)
                if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):   # a link is removed, never followed
                    os.unlink(path)
                    removed.append(path)
            except OSError:
                pass
    return removed


def stop(run_dir: str, pids: List[int], grace: float = 5.0, proc: str = "/proc", check: bool = False,
         remove_dir: bool = False) -> Dict[str, List[Any]]:
    """Stop every server recorded in ``run_dir``: SIGTERM to its group, SIGKILL after ``grace``.

    ``pids`` names servers to stop; each must be recorded in ``run_dir`` (a PID no pid file there names was
    not started by this module there: ``unknown``, never signalled).  Returns ``stopped`` (were running and
    are gone now), ``gone`` (had already exited, or the PID is another process now: left alone),
    ``unknown`` and ``removed`` (the files and directory removed).  ``check`` only predicts.
    UntrustedRunDir when the run directory is not trusted, RuntimeError when a server survives SIGKILL.
    """
    if not os.path.lexists(run_dir):
        unknown = sorted(set(int(p) for p in pids or []))
        return {"stopped": [], "gone": [], "unknown": unknown, "removed": []}
    check_run_dir(run_dir)
    known = recorded(run_dir)
    unknown = sorted(set(int(p) for p in pids or []) - set(known))
    targets = dict((pid, (info["start_time"], info["tool"])) for pid, info in known.items())
    running = [pid for pid in sorted(targets) if same_process(pid, targets[pid][0], targets[pid][1], proc)]
    result: Dict[str, List[Any]] = {"stopped": running, "gone": [pid for pid in sorted(targets) if pid not in running],
                                    "unknown": unknown, "removed": []}
    names = [known[pid]["name"] for pid in sorted(known)]
    if check:
        if remove_dir:
            result["removed"] = _removable(run_dir, names)
        return result
    survivors = terminate(targets, grace, proc)
    if survivors:
        raise RuntimeError("server PID(s) %s survived SIGKILL" % survivors)
    if remove_dir:
        result["removed"] = forget(run_dir, names, logs=True)
        try:
            os.rmdir(run_dir)            # only when nothing but what its servers wrote was in it
            result["removed"].append(run_dir)
        except OSError:
            pass
    else:
        forget(run_dir, names)
    return result


def _removable(run_dir: str, names: List[str]) -> List[str]:
    """What ``stop(remove_dir=True)`` would remove (check mode)."""
    paths = [os.path.join(run_dir, n + s) for n in names for s in (".pid", ".log")]
    out = [p for p in paths if os.path.lexists(p)]
    try:
        rest = [n for n in os.listdir(run_dir) if os.path.join(run_dir, n) not in out]
    except OSError:
        rest = ["?"]
    return out + ([] if rest else [run_dir])
