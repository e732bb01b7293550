# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""benchmarks/tuning_gain.py (make bench) says what it is doing while a playbook runs: each play and task as it
starts, with its time, while the whole output goes to the log; a failed playbook ends the run with its tail."""
from __future__ import annotations

import importlib.util
import os
import stat

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

OUTPUT = """
PLAY [Benchmark the fabric] ****************************************************

TASK [hpcnet.rdma.rdma_bench : Check the options] ******************************
ok: [vm1]
ok: [vm2]

TASK [hpcnet.rdma.rdma_bench : Run the clients] ********************************
changed: [vm1]

PLAY RECAP *********************************************************************
vm1                        : ok=2    changed=1    unreachable=0    failed=0
"""


@pytest.fixture()
def gain(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("tuning_gain", os.path.join(ROOT, "benchmarks", "tuning_gain.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    monkeypatch.setattr(mod, "BIN", bindir)
    monkeypatch.setattr(mod, "OUT", tmp_path / "out")
    (tmp_path / "out").mkdir()
    return mod


def fake_playbook(gain, text, rc):
    exe = gain.BIN / "ansible-playbook"
    exe.write_text("#!/bin/sh\ncat <<'EOF'\n%sEOF\nexit %d\n" % (text, rc))
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)


def test_a_playbook_shows_its_plays_and_tasks_and_logs_everything(gain, tmp_path, capsys):
    fake_playbook(gain, OUTPUT, 0)
    gain.playbook(tmp_path / "hosts.yml", "bench_rdma.yml", "-e", "{}")
    shown = [line.split("s  ", 1)[1] if "s  " in line else line for line in capsys.readouterr().out.splitlines()]
    assert shown == [
        "  $ -i %s %s -e {}" % (tmp_path / "hosts.yml", os.path.join(ROOT, "playbooks", "bench_rdma.yml")),
        "PLAY [Benchmark the fabric]",
        "TASK [hpcnet.rdma.rdma_bench : Check the options]",
        "TASK [hpcnet.rdma.rdma_bench : Run the clients]",
        "PLAY RECAP",
        "bench_rdma.yml: exit 0",
    ]
    assert (tmp_path / "out" / "ansible.log").read_text() == OUTPUT


def test_a_failed_playbook_ends_the_run_with_its_tail(gain, tmp_path):
    fake_playbook(gain, "TASK [x] ***\nfatal: [vm1]: FAILED! => boom\n", 2)
    with pytest.raises(SystemExit) as e:
        gain.playbook(tmp_path / "hosts.yml", "tune_rdma.yml")
    assert "fatal: [vm1]: FAILED! => boom" in str(e.value) and "tune_rdma.yml failed (exit 2)" in str(e.value)


def test_make_bench_runs_every_test_with_mpi_before_and_after(gain):
    """issue 28: the mpi test is in make bench's untuned and tuned runs, bounded for the TCG guests."""
    extra = gain.bench_vars("untuned", 10)
    assert extra["rdma_bench_tests"] == ["iperf3", "sockperf", "ib_write_bw", "ib_send_lat", "mpi"]
    assert (extra["rdma_bench_mpi_iterations"], extra["rdma_bench_mpi_timeout"]) == (200, 600)
    assert extra["rdma_bench_mpi_args"] == ["-x", "UCX_NET_DEVICES=rxe0:1", "-x", "UCX_IB_GID_INDEX=0"]
    assert extra["rdma_bench_results_dir"] == str(gain.OUT) and extra["rdma_bench_install"] is False
