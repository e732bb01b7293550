# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""benchmarks/health_check.py: its local fake-node mode runs end to end (two runs, no timing asserted: the
benchmark prints it) and the overrun is the named finding; the container and VM modes build the transports
the lab uses (docker exec -i, lab/labctl.py vm ssh) - checked on their argv, nothing started here."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("health_check", os.path.join(ROOT, "benchmarks", "health_check.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_local_fake_node_times_the_check_and_names_the_overrun(bench, tmp_path, capsys):
    out = tmp_path / "figures.json"
    assert bench.main(["--local", "--fake", "--runs", "2", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["timed"]["runs"] == 2 and doc["timed"]["rcs"] == [0] and doc["timed"]["wall_median_s"] > 0
    assert ("manifest.missing", "info") in [tuple(f) for f in doc["timed"]["findings"]]
    assert doc["overrun"]["ok"] is True and "not read:" in doc["overrun"]["finding"]
    assert "overrun, --budget 0.001" in capsys.readouterr().out


@pytest.mark.parametrize("args, prefix, joined", [
    (["--container", "health-n1"], ["docker", "exec", "-i", "health-n1"], False),
    (["--vm", "vm1"], [sys.executable, os.path.join(ROOT, "lab", "labctl.py"), "vm", "ssh", "--run", "lab", "vm1"], True),
])
def test_remote_modes_use_the_labs_transports(bench, monkeypatch, args, prefix, joined):
    seen = []

    def fake_run(argv, **kw):
        seen.append((argv, kw["input"]))
        return subprocess.CompletedProcess(argv, 0, b"[]", b"")
    monkeypatch.setattr(bench.subprocess, "run", fake_run)
    opts = {"container": None, "vm": None, "vm_run": "lab", "timeout": 5}
    opts[args[0][2:]] = args[1]
    ns = bench.argparse.Namespace(**opts)
    bench.on_target(ns, ["python3", "-", '{"runs": 1}'], b"code")
    argv, stdin = seen[0]
    assert argv[:len(prefix)] == prefix and stdin == b"code"
    assert argv[len(prefix):] == (["python3 - '{\"runs\": 1}'"] if joined else ["python3", "-", '{"runs": 1}'])


def test_ship_packs_the_program_and_exactly_the_roles_module_utils(bench):
    import io
    import tarfile
    names = tarfile.open(fileobj=io.BytesIO(bench.ship_tar())).getnames()
    assert "hpcnet-rdma-check" in names
    assert "lib/ansible_collections/hpcnet/rdma/plugins/module_utils/health/_metrics.py" in names
    assert len(names) == 1 + len(bench.module_utils_files())


def test_ship_gives_the_program_the_roles_first_line_and_its_lib(bench):
    import io
    import tarfile
    tar = tarfile.open(fileobj=io.BytesIO(bench.ship_tar("/w", None, "base/")))
    member = tar.getmember("base/hpcnet-rdma-check")
    text = tar.extractfile(member).read().decode()
    assert member.mode == 0o755
    assert text.splitlines()[0] == bench.role_vars()["__rdma_health_shebang"] == "#!/usr/bin/python3 -IS"
    assert 'LIB = os.environ.get("HPCNET_RDMA_LIB", "/w/base/lib")' in text


def test_baseline_runs_both_programs_alternated_and_prints_the_ratio(bench, tmp_path, capsys):
    out = tmp_path / "figures.json"
    assert bench.main(["--local", "--fake", "--runs", "2", "--baseline", "HEAD", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["baseline"]["ref"] == "HEAD" and doc["baseline"]["runs"] == 2 and doc["timed"]["runs"] == 2
    assert doc["baseline"]["rcs"] == [0] and doc["baseline"]["ratio_wall"] > 0
    assert doc["check"][0].endswith("/ship/hpcnet-rdma-check")
    assert "this / baseline: wall" in capsys.readouterr().out


def test_baseline_needs_a_shipped_program(bench, capsys):
    with pytest.raises(SystemExit):
        bench.main(["--vm", "vm1", "--baseline", "HEAD"])
    assert "--baseline compares shipped programs" in capsys.readouterr().err
