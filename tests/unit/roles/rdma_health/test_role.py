# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The role rdma_health installs the program with exactly the module_utils files it imports (the import
closure of what the program imports), and the program itself - run as Slurm runs it - on a fake node tree:
exit status and one line as NHC, --json, the counters kept between runs, --slurm's drain and resume."""
from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import sys

import pytest

import ansible_collections.hpcnet.rdma as collection
from ansible_collections.hpcnet.rdma.plugins.module_utils.health import _judges, _program

from ...conftest import FakeNic
from ...fake_qos import FakeRdma, QosNode
from ..role_render import load

ROOT = list(collection.__path__)[0]
MODULE_UTILS = os.path.join(ROOT, "plugins", "module_utils")
SCRIPT = os.path.join(ROOT, "roles", "rdma_health", "files", "hpcnet-rdma-check.py")
MU = "ansible_collections.hpcnet.rdma.plugins.module_utils"


def imports(name, path=None):
    """module_utils files (``package/_file``) a file imports, at any depth (tuning/_concerns imports the
    domain files inside a function; the program imports them inside main)."""
    with open(path or os.path.join(MODULE_UTILS, name + ".py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    found = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and (n.module or "").startswith(MU + "."):
            rel = n.module[len(MU) + 1:].replace(".", "/")
            if os.path.isdir(os.path.join(MODULE_UTILS, rel)):   # from MU.pkg import _file
                found.update(rel + "/" + a.name for a in n.names)
            else:                                                  # from MU.pkg._file import name
                found.add(rel)
    return found


def closure(roots):
    seen, todo = set(), list(roots)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(imports(name) - seen)
    return seen


PROGRAM_IMPORTS = sorted(imports("program", SCRIPT))


def test_the_role_installs_exactly_the_import_closure_of_the_check():
    listed = load("rdma_health", "vars/main.yml")["__rdma_health_module_utils"]
    assert sorted(listed) == sorted(closure(PROGRAM_IMPORTS))
    assert len(listed) == len(set(listed))


def test_nothing_installed_needs_ansible_on_the_node():
    for name in closure(PROGRAM_IMPORTS):
        with open(os.path.join(MODULE_UTILS, name + ".py"), encoding="utf-8") as f:
            assert not re.search(r"^\s*(from|import) ansible\.", f.read(), re.M), name


def test_what_the_check_imports_never_imports_typing_or_argparse():
    """The check starts on every Slurm health check and job: typing (annotations only in every file it imports),
    argparse and subprocess were 35, 65 and 60 ms of its start on a lab VM, socket.py's enums 30-60 ms of its drift
    stage (docs/health.md).  Every installed file imported in a fresh python3 -IS, as the program runs: none is in
    sys.modules, and a socket made by node/_sockets does not bring socket.py in."""
    import subprocess
    names = [MU + "." + name.replace("/", ".") for name in closure(PROGRAM_IMPORTS)]
    code = ("import importlib, sys; sys.path.insert(0, sys.argv[1]); [importlib.import_module(n) for n in sys.argv[2:]]; "
            "from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _sockets; _sockets._socket(); "
            "print(' '.join(sorted(set(sys.modules) & {'typing', 'argparse', 'shutil', 'tempfile', 'subprocess', 'socket'})))")
    lib = os.path.dirname(os.path.dirname(os.path.dirname(ROOT)))
    run = subprocess.run([sys.executable, "-IS", "-c", code, lib] + names, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, check=False)
    assert (run.returncode, run.stderr) == (0, "")
    assert len(names) > 40 and run.stdout.split() == []


def launcher():
    """The installed program's file as a module (its options and parser; nothing imported from LIB yet)."""
    spec = importlib.util.spec_from_file_location("hpcnet_rdma_check", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def program(monkeypatch):
    monkeypatch.setattr(sys, "pycache_prefix", sys.pycache_prefix)   # the program sets it for its process
    monkeypatch.setattr(sys, "dont_write_bytecode", sys.dont_write_bytecode)
    monkeypatch.setenv("HPCNET_RDMA_LIB", os.path.dirname(os.path.dirname(os.path.dirname(ROOT))))
    return launcher()


def lab(tmp_path):
    n = QosNode(str(tmp_path / "root"))
    os.makedirs(n.root)
    n.add_nic(FakeNic("data0", "virtio_net", mtu=1500, mac="52:54:00:00:00:09"))
    n.add_rdma(FakeRdma("rxe0", "data0", active_mtu=1024))
    n.write("/sys/class/net/data0/operstate", "up\n")
    n.write("/sys/class/net/data0/carrier_changes", "2\n")
    n.write("/etc/security/limits.d/rdma.conf", "@rdma - memlock unlimited\n")
    n.write("/etc/hpcnet-rdma/health.json", json.dumps({"tools": [], "fleet_size": 2, "budget": 5}))
    return n


def run(program, n, capsys, *args):
    rc = program.main(["--root", n.root] + list(args))
    return rc, capsys.readouterr().out


def test_healthy_is_exit_0_and_silent_then_a_fault_is_one_line(program, tmp_path, capsys):
    n = lab(tmp_path)
    assert run(program, n, capsys) == (0, "")
    assert sys.pycache_prefix == n.path("/run/hpcnet-rdma/pycache")      # bytecode under /run, never beside the files
    assert json.loads(n.read("/run/hpcnet-rdma/health-state.json"))["netdevs"]["data0"]["carrier_changes"] == 2
    n.write("/sys/class/net/data0/carrier_changes", "4\n")
    rc, out = run(program, n, capsys)
    assert rc == 1
    assert out.splitlines() == ["ERROR: hpcnet-rdma: link.flap data0 carrier_changes grew by 2 since the last check 0s ago"]


def test_json_lists_every_finding_and_stage(program, tmp_path, capsys):
    n = lab(tmp_path)
    n.write("/etc/security/limits.d/rdma.conf", "@rdma - memlock 1024\n")
    rc, out = run(program, n, capsys, "--json")
    doc = json.loads(out)
    assert rc == doc["rc"] == 1 and doc["line"].startswith("ERROR: hpcnet-rdma: memlock.low ")
    assert [f["code"] for f in doc["findings"]] == ["memlock.low", "counters.baseline", "manifest.missing"]
    assert set(doc["stages"]) == {"fabric", "drift", "limits", "hardware"} and doc["skipped"] == []


def tree(root):
    """Every path under ``root`` with its bytes (None for a directory)."""
    found = {}
    for top, dirs, files in os.walk(root):
        for name in dirs:
            found[os.path.relpath(os.path.join(top, name), root)] = None
        for name in files:
            with open(os.path.join(top, name), "rb") as f:
                found[os.path.relpath(os.path.join(top, name), root)] = f.read()
    return found


@pytest.mark.parametrize("argv, code, out", [
    (["--bogus"], 2, ""), (["--budget", "soon"], 2, ""), (["--json=yes"], 2, ""), (["-h"], 0, "usage: hpcnet-rdma-check"),
    (["--budget", "0"], 2, "ERROR: hpcnet-rdma: usage --budget 0.0 is outside 0..60 seconds\n"),
    (["--budget=61", "--json"], 2, "ERROR: hpcnet-rdma: usage --budget 61.0 is outside 0..60 seconds\n"),
])
def test_a_refused_command_line_leaves_the_node_as_it_was(tmp_path, argv, code, out):
    """Refused (or only --help) before the body is imported: no bytecode under /run, no counters - the root is
    byte for byte what it was (951b6b5 imported the body first, and a usage error wrote 68 .pyc files).  Run as
    Slurm runs it, in a fresh python3 -IS: in this process the readers are imported already and write nothing."""
    import subprocess
    n = lab(tmp_path)
    before = tree(n.root)
    env = dict(os.environ, HPCNET_RDMA_LIB=os.path.dirname(os.path.dirname(os.path.dirname(ROOT))))

    def check(*args):
        return subprocess.run([sys.executable, "-IS", SCRIPT, "--root", n.root] + list(args), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, env=env, check=False)
    refused = check(*argv)
    assert refused.returncode == code and refused.stdout.startswith(out)
    assert tree(n.root) == before
    good = check("--budget", "5")                      # the same root, a good command line: counters and bytecode
    assert (good.returncode, good.stdout, good.stderr) == (0, "", "")
    assert "run/hpcnet-rdma/health-state.json" in tree(n.root)
    assert any(p.startswith("run/hpcnet-rdma/pycache/") and p.endswith(".pyc") for p in tree(n.root))


def test_a_bad_budget_in_the_config_is_refused(program, tmp_path, capsys):
    n = lab(tmp_path)
    n.write("/etc/hpcnet-rdma/health.json", json.dumps({"tools": [], "budget": 0}))
    rc, out = run(program, n, capsys)
    assert (rc, out) == (2, "ERROR: hpcnet-rdma: usage budget 0.0 in /etc/hpcnet-rdma/health.json is outside 0..60 seconds\n")


def test_slurm_drains_with_our_reason_and_resumes_only_ours(program, tmp_path, capsys, monkeypatch):
    n = lab(tmp_path)
    calls = []
    state = {"line": "NodeName=n1 Arch=x86_64 State=IDLE ThreadsPerCore=1 Partitions=lab"}

    def runner(deadline, spent, memo=False):
        def answer(argv):
            assert not (memo and "scontrol" in argv[0]), "Slurm's runner must see what its own update changed"
            calls.append(argv[1:])
            if argv[1:3] == ["show", "node"]:
                return 0, state["line"] + "\n", ""
            return 0, "", ""
        return answer
    monkeypatch.setattr(_program, "make_runner", runner)
    monkeypatch.setattr(_program, "bin_path", lambda name: "/usr/bin/" + name)
    n.write("/sys/class/net/data0/mtu", "1400\n")
    n.write("/etc/hpcnet-rdma/manifest.json", json.dumps({"schema": 1, "items": {"mtu": {"value": 1500, "hosts": 2, "of": 2}}}))
    rc, _out = run(program, n, capsys, "--slurm", "--node", "n1")
    reason = "hpcnet-rdma:manifest.differs data-interface MTU is 1400, the fleet's majority (2 of 2 hosts) has 1500"
    assert rc == 1 and calls[-1] == ["update", "NodeName=n1", "State=DRAIN", "Reason=" + reason]
    n.write("/sys/class/net/data0/mtu", "1500\n")
    state["line"] = "NodeName=n1 State=IDLE+DRAIN Partitions=lab Reason=%s [root@2026-12-06T20:00:26]" % reason
    assert run(program, n, capsys, "--slurm", "--node", "n1")[0] == 0
    assert calls[-1] == ["update", "NodeName=n1", "State=RESUME"]
    state["line"] = "NodeName=n1 State=IDLE+DRAIN Partitions=lab Reason=disk swap [root@2026-12-06T20:00:26]"
    calls.clear()
    assert run(program, n, capsys, "--slurm", "--node", "n1")[0] == 0
    assert calls == [["show", "node", "-o", "n1"]]        # someone else's drain: read, nothing done


def test_the_reading_runner_runs_an_argv_once_the_slurm_runner_every_time(tmp_path):
    """The node's reading asks 'rdma -j link show' twice (fabric stage, then the drift stage's rxe keys): one tool run."""
    counter = tmp_path / "count"
    script = tmp_path / "tool"
    script.write_text("#!/bin/sh\necho x >> %s\nwc -l < %s\n" % (counter, counter))
    script.chmod(0o755)
    deadline = _program.time.monotonic() + 30
    reading = _program.make_runner(deadline, RuntimeError, memo=True)
    assert [reading([str(script), "a"])[1] for _i in range(3)] == ["1\n"] * 3
    assert reading([str(script), "b"])[1] == "2\n"
    slurm = _program.make_runner(deadline, RuntimeError)
    assert [slurm([str(script), "a"])[1] for _i in range(2)] == ["3\n", "4\n"]


def test_the_reading_runner_runs_an_argv_once_when_two_threads_ask_at_once(tmp_path):
    """The drift stage runs in a thread: both stages asking 'rdma -j link show' while the first run is still
    going get that one run's answer (the second waits for it), and a run cut off by the budget is that error for both."""
    import threading
    counter = tmp_path / "count"
    script = tmp_path / "tool"
    script.write_text("#!/bin/sh\necho x >> %s\nsleep 0.3\nwc -l < %s\n" % (counter, counter))
    script.chmod(0o755)
    reading = _program.make_runner(_program.time.monotonic() + 30, RuntimeError, memo=True)
    answers = []
    threads = [threading.Thread(target=lambda: answers.append(reading([str(script)])[1])) for _i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert answers == ["1\n"] * 3 and counter.read_text() == "x\n"
    spent = _program.make_runner(_program.time.monotonic() + 0.1, RuntimeError, memo=True)
    errors = []

    def ask():
        try:
            spent([str(script), "cut"])
        except RuntimeError as e:
            errors.append(str(e))
    threads = [threading.Thread(target=ask) for _i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(errors) == 2 and len(set(errors)) == 1 and "timed out" in errors[0]


SPAWNED = [
    # (shell script, what subprocess.run(..., universal_newlines=True) gives for it)
    ("echo out; echo err >&2; exit 3", (3, "out\n", "err\n")),
    ("printf 'a\\r\\nb\\rc'", (0, "a\nb\nc", "")),                              # universal newlines
    ("printf '\\377ok'", (0, "\ufffdok", "")),                                  # not UTF-8: replaced
    ("head -c 300000 /dev/zero | tr '\\0' o; head -c 300000 /dev/zero | tr '\\0' e >&2", (0, "o" * 300000, "e" * 300000)),
    ("read line; echo \"$?[$line]\"", (0, "1[]\n", "")),                           # stdin is /dev/null
    ("kill -TERM $$", (-15, "", "")),
    ("echo $LC_ALL", (0, "C\n", "")),
]


@pytest.mark.parametrize("script, expected", SPAWNED)
def test_the_runner_gives_what_subprocess_gave(script, expected, monkeypatch):
    """The check starts its tools with os.posix_spawnp, not subprocess (its import was 0.06 s of the start on a
    lab VM): the same return code, text and newlines - both pipes read as they fill, past the 64 KiB a pipe holds -
    as the runner gave before, and on a Python without posix_spawnp (3.7) through subprocess itself."""
    run = _program.make_runner(_program.time.monotonic() + 30, RuntimeError)
    assert run(["sh", "-c", script]) == expected
    monkeypatch.delattr(_program.os, "posix_spawnp")
    assert run(["sh", "-c", script]) == expected


def test_the_runner_kills_a_command_past_the_budget_and_says_127_for_one_that_cannot_start(tmp_path, monkeypatch):
    import subprocess
    for without_spawn in (False, True):
        if without_spawn:
            monkeypatch.delattr(_program.os, "posix_spawnp")
        pidfile = tmp_path / "pid"
        run = _program.make_runner(_program.time.monotonic() + 0.5, RuntimeError)
        started = _program.time.monotonic()
        with pytest.raises(RuntimeError, match="timed out after"):
            run(["sh", "-c", "echo $$ > %s; exec sleep 30" % pidfile])
        assert _program.time.monotonic() - started < 5
        pid = int(pidfile.read_text())
        assert subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], stdout=subprocess.PIPE, check=False).stdout == b""
        rc, out, err = _program.make_runner(_program.time.monotonic() + 30, RuntimeError)([str(tmp_path / "no-such-tool")])
        assert (rc, out) == (127, "") and "no-such-tool" in err


def _argparse_of():
    """What argparse gave for the same OPTIONS (the program's parser before it dropped argparse)."""
    import argparse
    ap = argparse.ArgumentParser(prog="hpcnet-rdma-check", allow_abbrev=False)
    for flag, dest, kind, default, text in launcher().OPTIONS:
        if kind is None:
            ap.add_argument(flag, dest=dest, action="store_true", help=text)
        else:
            ap.add_argument(flag, dest=dest, type=kind, default=default, help=text)
    return ap


@pytest.mark.parametrize("argv", [
    [], ["--json"], ["--json", "--slurm", "--node", "n1"], ["--budget", "1.5"], ["--budget=0.001", "--json"],
    ["--metrics-dir", ""], ["--metrics-dir="], ["--root", "/tmp/x", "--state", "/tmp/s.json", "--config", "/c", "--manifest", "/m"],
    ["--node=a=b"], ["--budget", "-1"],
])
def test_options_read_as_argparse_read_them(argv):
    assert vars(launcher().parse_args(argv)) == vars(_argparse_of().parse_args(argv))


@pytest.mark.parametrize("argv, message", [
    (["--bogus"], "unrecognized arguments: --bogus"),
    (["--budget"], "argument --budget: expected one argument"),
    (["--budget", "soon"], "argument --budget: invalid float value: 'soon'"),
    (["--json=yes"], "argument --json: ignored explicit argument 'yes'"),
    (["extra"], "unrecognized arguments: extra"),
])
def test_a_usage_error_is_exit_2_with_the_usage_on_stderr(capsys, argv, message):
    with pytest.raises(SystemExit) as e:
        launcher().parse_args(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.startswith("usage: hpcnet-rdma-check [-h] [--json] [--budget BUDGET]")
    assert "hpcnet-rdma-check: error: " + message in err


def test_the_launcher_says_what_the_body_says():
    """The launcher's own copies of what the body knows: the finding prefix of its usage line."""
    assert launcher().PREFIX == _judges.PREFIX


def test_help_names_every_option_and_exits_0(program, capsys):
    with pytest.raises(SystemExit) as e:
        program.main(["--help"])
    out = capsys.readouterr().out
    assert e.value.code == 0 and "the node's RDMA fabric health" in out
    assert all(flag in out for flag, *_rest in program.OPTIONS)


def test_tools_are_found_on_path_then_in_sbin_and_only_when_executable(tmp_path, monkeypatch):
    bin_dir, sbin = tmp_path / "bin", tmp_path / "sbin"
    for d in (bin_dir, sbin):
        d.mkdir()
    (bin_dir / "rdma").write_text("#!/bin/sh\n")
    (bin_dir / "rdma").chmod(0o644)                     # not executable: not a tool
    (sbin / "rdma").write_text("#!/bin/sh\n")
    (sbin / "rdma").chmod(0o755)
    (bin_dir / "ibv_devinfo").write_text("#!/bin/sh\n")
    (bin_dir / "ibv_devinfo").chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setattr(_program, "SBIN", (str(sbin),))
    assert _program.bin_path("ibv_devinfo") == str(bin_dir / "ibv_devinfo")
    assert _program.bin_path("rdma") == str(sbin / "rdma")
    assert _program.bin_path("dcb") is None


def test_the_metrics_file_is_replaced_whole_and_no_temp_file_stays(tmp_path):
    target = tmp_path / "hpcnet_rdma_health.prom"
    target.write_text("old\n")
    _program.write_atomic(str(target), "new\n")
    assert target.read_text() == "new\n" and oct(target.stat().st_mode & 0o777) == "0o644"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hpcnet_rdma_health.prom"]
    with pytest.raises(FileNotFoundError):                # no such directory: the error, nothing made
        _program.write_atomic(str(tmp_path / "missing" / "x.prom"), "x\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hpcnet_rdma_health.prom"]


def test_the_node_name_is_slurms_then_the_short_host_name(monkeypatch):
    assert _program.node_name("n7") == "n7"
    monkeypatch.setenv("SLURMD_NODENAME", "n3")
    assert _program.node_name(None) == "n3"
    monkeypatch.delenv("SLURMD_NODENAME")
    assert _program.node_name(None) == os.uname().nodename.split(".")[0]
