# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The body of hpcnet-rdma-check (roles/rdma_health/files/hpcnet-rdma-check.py, whose docstring is its manual):
the check's command runner, the run and what it writes (counters, node_exporter's textfile, Slurm's drain and
resume).  The installed program is only a launcher that parses the options, puts LIB on the path and sends
compiled bytecode under /run before importing this: Python compiles a program's own file on every run, never from a
cache - 0.06-0.11 s of the check's start on a lab VM under TCG for the 330 lines this was
(benchmarks/health_check.py); a module here is compiled once.  python3 standard library only."""
from __future__ import annotations

import json
import os
import select
import signal
import sys
import threading
import time

from ansible_collections.hpcnet.rdma.plugins.module_utils.health import _check as _health
from ansible_collections.hpcnet.rdma.plugins.module_utils.health import _judges
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host

SBIN = ("/usr/local/sbin", "/usr/sbin", "/sbin")


def make_runner(deadline, spent, memo=False):
    """argv-only commands with LC_ALL=C, each given what is left of the budget.  Past it - a command not
    started, or one cut off - raises ``spent`` (health/_check.BudgetSpent): the stage is then named as
    not read, never judged on what the tool would have said.

    With ``memo`` (the reading of the node, which only reads), one run's answer to an argv stands for the
    whole check: a second reader asking the same (``rdma -j link show``, which the stack domain runs for each
    journaled soft-RoCE link it reads) gets it again, not a second tool run of ~45 ms on a lab VM.  Nothing outlives the
    process; Slurm's runner (scontrol reads what its own update changed) has no memo.  The drift stage runs
    in a thread (health/_check.read): a second asker of an argv still running waits for that run's answer."""
    seen = {}
    lock = threading.Lock()

    def run(argv):
        if not memo:
            return run_once(argv)
        key = tuple(argv)
        with lock:                      # the drift stage runs in a thread: the first asker runs, the other waits
            cell = seen.get(key)
            first = cell is None
            if first:
                cell = seen[key] = {"done": threading.Event()}
        if first:
            try:
                cell["answer"] = run_once(argv)
            except BaseException as e:
                cell["error"] = e
                raise
            finally:
                cell["done"].set()
        cell["done"].wait()
        if "error" in cell:
            raise cell["error"]
        return cell["answer"]

    def run_once(argv):
        left = deadline - time.monotonic()
        if left <= 0:
            raise spent("%s not run: the time budget is spent" % argv[0])
        env = dict(os.environ, LC_ALL="C", LANG="C")
        try:
            return spawn(argv, env, left)
        except TimeoutError:
            raise spent("%s timed out after %.2fs (the time budget)" % (argv[0], left)) from None
        except OSError as e:
            return 127, "", "%s: %s" % (argv[0], e)
    return run


def spawn(argv, env, timeout):
    """``(returncode, stdout, stderr)`` of ``argv`` as ``subprocess.run(argv, stdout=PIPE, stderr=PIPE,
    universal_newlines=True, timeout=...)`` gives them (a signal's death is minus its number; the output as
    UTF-8 text with universal newlines, a byte that is not UTF-8 replaced), without importing subprocess:
    with its selectors, warnings, contextlib and locale that was 0.06 s of the check's start on a lab VM
    under TCG (15 runs alternated).  ``os.posix_spawnp`` with stdin from /dev/null and both pipes read as they
    fill; past ``timeout`` seconds the command is killed, reaped, and that is TimeoutError; one that cannot
    start is OSError.  The pipes are the check's own descriptors, not inherited by any other command (PEP 446)."""
    if not hasattr(os, "posix_spawnp"):     # Python 3.7 (3.8 added it)
        import subprocess
        try:
            res = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env,
                                 timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            raise TimeoutError("timed out") from None
        return res.returncode, _text(res.stdout), _text(res.stderr)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        pid = os.posix_spawnp(argv[0], argv, env, file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2)])
    except BaseException:
        os.close(out_r)
        os.close(err_r)
        raise
    finally:
        os.close(out_w)
        os.close(err_w)
    end = time.monotonic() + timeout
    got = {out_r: [], err_r: []}
    status = None
    try:
        poller = select.poll()
        for fd in got:
            poller.register(fd, select.POLLIN)
        reading = set(got)
        while reading:
            for fd, _event in poller.poll(_ms_until(end)):
                data = os.read(fd, 65536)
                if data:
                    got[fd].append(data)
                else:
                    poller.unregister(fd)
                    reading.discard(fd)
        while status is None:       # both pipes closed: the command is ending (or left a child holding none)
            done, status = os.waitpid(pid, os.WNOHANG)
            if not done:
                status = None
                _ms_until(end)
                time.sleep(0.001)
    finally:
        os.close(out_r)
        os.close(err_r)
        if status is None:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
    return code, _text(b"".join(got[out_r])), _text(b"".join(got[err_r]))


def _ms_until(end):
    """Milliseconds left until ``end`` (a monotonic time), at least 1; TimeoutError once it has passed."""
    left = end - time.monotonic()
    if left <= 0:
        raise TimeoutError("timed out")
    return int(left * 1000) + 1


def _text(data):
    return data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")


def bin_path(name):
    """shutil.which over PATH and the sbin directories (not shutil itself: with tempfile and socket it was a
    sixth of the check's start on a lab VM - benchmarks/health_check.py)."""
    for directory in os.environ.get("PATH", "/usr/bin:/bin").split(":") + list(SBIN):
        path = os.path.join(directory or ".", name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def load_json(host, path):
    try:
        data = host.read_json(path)
    except Exception as e:  # noqa: BLE001 - an unreadable file is reported, the check goes on
        return None, "%s: %s" % (path, e)
    return data, None


def write_atomic(path, text):
    """As hpcnet-rdma-metrics writes its file: a temp file in the same directory (no .prom suffix, so the
    textfile collector never reads half a file), then rename.  Not Host.write_file: its trust rule refuses
    Debian's layout, where /var/lib/prometheus (above the textfile directory) belongs to the prometheus user."""
    tmp = os.path.join(os.path.dirname(path), ".hpcnet_rdma_health.%d.%s.tmp" % (os.getpid(), os.urandom(4).hex()))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)  # as tempfile.mkstemp
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def metrics(host, result, directory, started, metrics_mod, judges_mod):
    """Write the run's findings for node_exporter when ``directory`` exists; a failure is a finding."""
    if not directory:
        return None
    if not directory.startswith("/"):
        result["findings"].append(judges_mod.finding("metrics.unwritable", "%r is not an absolute path" % directory))
        return None
    if not host.isdir(directory):
        return None
    facts = result["facts"]
    text = metrics_mod.render(result["findings"], result["verdict"]["rc"] == 0, facts.get("skipped") or [],
                              time.monotonic() - started, time.time())
    path = os.path.join(directory, metrics_mod.FILE_NAME)
    try:
        write_atomic(host.p(path), text)
    except OSError as e:
        result["findings"].append(judges_mod.finding("metrics.unwritable", "%s: %s" % (path, e)))
        return None
    return path


def node_name(explicit):
    return explicit or os.environ.get("SLURMD_NODENAME") or os.uname().nodename.split(".")[0]


def slurm(host, health, slurm_mod, name, spent):
    """Read the node in Slurm, apply the drain/resume rule; returns what was done.  ``host`` runs scontrol
    until the watchdog's time (past the budget, which is for reading the node); ``spent`` is its signal."""
    try:
        node = slurm_mod.SCONTROL.call(host, "show_node", node=name)
    except (Exception, spent) as e:  # noqa: BLE001 - no Slurm answer: nothing changed, said so
        return {"action": "none", "why": "scontrol show node %s failed: %s" % (name, e)}
    decision = slurm_mod.decide(node, health["verdict"]["reason"])
    try:
        if decision["action"] == "drain":
            rc, _out, err = slurm_mod.SCONTROL.run(host, "drain", node=name, reason=decision["reason"])
        elif decision["action"] == "resume":
            rc, _out, err = slurm_mod.SCONTROL.run(host, "resume", node=name)
        else:
            return decision
    except spent as e:
        rc, err = 124, str(e)
    if rc != 0:
        decision["error"] = " ".join(err.split())[-300:]
    return decision


def say(line):
    """One line to standard output (print's; module_utils has no print - this is a program, not a module)."""
    sys.stdout.write(line + "\n")


def main(args):
    """The check, with the options the launcher parsed (its parse_args: a refused command line never gets here)."""
    started = time.monotonic()
    probe = Host(root=args.root)
    config, config_error = load_json(probe, args.config)
    opts = dict((k, v) for k, v in (config or {}).items() if k in _health.DEFAULTS)
    if args.budget is not None:
        opts["budget"] = args.budget
    if args.metrics_dir is not None:
        opts["metrics_dir"] = args.metrics_dir
    budget = float(opts.get("budget", _health.DEFAULTS["budget"]))
    if not 0 < budget <= 60:
        say("ERROR: %s: usage budget %r in %s is outside 0..60 seconds" % (_judges.PREFIX, budget, args.config))
        return 2
    deadline = started + budget
    host = Host(root=args.root, runner=make_runner(deadline, _health.BudgetSpent, memo=True), bin_path=bin_path)
    host.concurrent_reads = True      # its runner is safe in threads: ethtool's runs (where netlink did not answer) go side by side

    def checkpoint():
        """File reads never ask the runner: between the journal's domains and its files' directories the read
        ends here once the budget is spent, as a tool run would (a --budget far below the read was 0.2-0.5 s
        of files on a lab VM, then the watchdog)."""
        if time.monotonic() >= deadline:
            raise _health.BudgetSpent("the rest of the read not done: the time budget is spent")
    host.on_checkpoint = checkpoint

    # The last resort against a read that never returns (a wedged device's sysfs file): past twice the
    # budget the check stops and says so - a warning, since a stuck read proves nothing about the fabric.
    # Flushed before os._exit: Slurm (and --json's reader) read stdout through a pipe, where an unflushed line is lost.
    def watchdog(_sig, _frame):
        line = "WARNING: %s: budget.exceeded the check did not finish in %.1fs (2 x budget)" % (_judges.PREFIX, 2 * budget)
        if args.json:
            line = json.dumps({"rc": 0, "line": line, "findings": [_judges.finding(
                "budget.exceeded", "%.2fs of %gs used; stopped by the watchdog at 2 x budget + 0.5 s"
                % (time.monotonic() - started, budget))], "watchdog": True}, indent=1, sort_keys=True)
        os.write(1, (line + "\n").encode())
        os._exit(0)
    signal.signal(signal.SIGALRM, watchdog)
    signal.setitimer(signal.ITIMER_REAL, 2 * budget + 0.5)

    manifest, manifest_error = load_json(host, args.manifest)
    before, _state_error = load_json(host, args.state)
    result = _health.run(host, opts, manifest if isinstance(manifest, dict) else None,
                         before if isinstance(before, dict) else None)
    host.on_checkpoint = None         # the budget is for reading the node; keeping the counters is not cut short
    for what, error in (("config", config_error), ("manifest", manifest_error)):
        if error:
            result["findings"].append(_judges.finding("read.failed", error, stage=what))
    if result["state"] is not None:
        try:
            host.write_file(args.state, {"content": json.dumps(result["state"], sort_keys=True), "mode": "0600"})
        except Exception as e:  # noqa: BLE001 - the next run then judges against an older state, or none
            result["findings"].append(_judges.finding("read.failed", "cannot keep the counters in %s: %s" % (args.state, e),
                                                      stage="state"))
    done = {}
    if args.slurm:
        slurm_host = Host(root=args.root, runner=make_runner(started + 2 * budget, _health.BudgetSpent), bin_path=bin_path)
        from ansible_collections.hpcnet.rdma.plugins.module_utils.health import _slurm   # only with --slurm
        done = slurm(slurm_host, result, _slurm, node_name(args.node), _health.BudgetSpent)
    written = None
    if opts.get("metrics_dir"):
        from ansible_collections.hpcnet.rdma.plugins.module_utils.health import _metrics  # only with a textfile directory
        written = metrics(host, result, opts.get("metrics_dir"), started, _metrics, _judges)
    signal.setitimer(signal.ITIMER_REAL, 0)
    verdict = result["verdict"]
    if args.json:
        facts = result["facts"]
        say(json.dumps({"rc": verdict["rc"], "line": verdict["line"], "findings": result["findings"],
                        "stages": facts.get("stages"), "skipped": facts.get("skipped"),
                        "elapsed": round(time.monotonic() - started, 4), "slurm": done or None,
                        "metrics": written}, indent=1, sort_keys=True))
    elif verdict["line"]:
        say(verdict["line"])
    return verdict["rc"]
