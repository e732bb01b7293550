# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The mpi test's program (roles/rdma_bench/files/hpcnet-rdma-mpi-bench.py) really run: two ranks on this host
under Debian's mpirun and UCX (shared memory), its output read by the controller's parser - so the program and
the parser cannot drift apart.  Skipped where Open MPI or mpi4py is missing; needs no network."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchrun

PROGRAM = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "rdma_bench", "files",
                       "hpcnet-rdma-mpi-bench.py")
PYTHON = "/usr/bin/python3"


def _mpi_ready() -> bool:
    if not shutil.which("mpirun") or not os.path.exists(PYTHON):
        return False
    return subprocess.run([PYTHON, "-I", "-c", "import mpi4py"], capture_output=True, check=False).returncode == 0


@pytest.mark.skipif(not _mpi_ready(), reason="needs Open MPI (mpirun) and python3-mpi4py on this host")
def test_two_ranks_on_this_host_give_what_the_parser_reads(tmp_path):
    argv = ["mpirun", "-np", "2", "--mca", "pml", "ucx", "--mca", "pml_ucx_tls", "any", "--mca", "pml_ucx_devices",
            "any", "--timeout", "60", "-wdir", str(tmp_path)]
    if os.geteuid() == 0:
        argv.append("--allow-run-as-root")
    argv += [PYTHON, "-I", os.path.abspath(PROGRAM), "--sizes", "8,4096", "--iterations", "50", "--warmup", "5"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False, cwd=str(tmp_path))
    out = _benchrun.parse_client("mpi", {"rc": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}, None)
    assert "error" not in out, out
    assert [(s["op"], s["bytes"], s["count"]) for s in out["series"]] == [
        ("pingpong", 8, 50), ("allreduce", 8, 50), ("pingpong", 4096, 50), ("allreduce", 4096, 50)]
    assert all(0 < s["percentiles"]["p50"] <= s["percentiles"]["p99"] for s in out["series"])
    assert (out["iterations"], out["warmup"], len(out["hosts"])) == (50, 5, 2)
    assert out["mpi"]["library"].startswith("Open MPI") and out["mpi"]["mpi4py"]


@pytest.mark.parametrize("args, message", [
    (["--sizes", "8,0"], "give message sizes in bytes"),
    (["--iterations", "0"], "--iterations >= 1"),
    (["--ops", "bcast"], "--ops of pingpong,allreduce"),
])
def test_the_program_refuses_bad_arguments_before_it_imports_mpi(args, message):
    proc = subprocess.run([PYTHON if os.path.exists(PYTHON) else "python3", "-I", PROGRAM] + args,
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2 and message in proc.stderr
