# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Item 6 of issue 27: the same run of hpcnet-rdma-check writes its findings for node_exporter's textfile
collector - atomically, only when the directory exists - and what it writes passes `promtool check metrics`
(the alert rules on it are tested with the collector's in tests/unit/roles/rdma_metrics/alerts_test.yml)."""
from __future__ import annotations

import json
import os

from ..rdma_metrics.test_promtool import promtool
from . import test_role
from .test_role import lab, run

program = test_role.program   # the fixture, shared

TEXTFILE = "/var/lib/prometheus/node-exporter"


def test_a_run_writes_every_code_and_its_result_clean_for_promtool(program, tmp_path, capsys):  # noqa: F811
    n = lab(tmp_path)
    os.makedirs(n.path(TEXTFILE))
    n.write("/etc/security/limits.d/rdma.conf", "@rdma - memlock 1024\n")
    rc, out = run(program, n, capsys, "--json", "--metrics-dir", TEXTFILE)
    assert rc == 1 and json.loads(out)["metrics"] == TEXTFILE + "/hpcnet_rdma_health.prom"
    assert os.listdir(n.path(TEXTFILE)) == ["hpcnet_rdma_health.prom"]          # no temp file left behind
    text = n.read(TEXTFILE + "/hpcnet_rdma_health.prom")
    lines = text.splitlines()
    assert 'hpcnet_rdma_health_finding{code="memlock.low",severity="drain"} 1' in lines
    assert 'hpcnet_rdma_health_finding{code="port.down",severity="drain"} 0' in lines     # known codes: always there
    assert 'hpcnet_rdma_health_finding{code="counters.baseline",severity="info"} 1' in lines
    assert "hpcnet_rdma_health_passed 0" in lines and 'hpcnet_rdma_health_stage_skipped{stage="drift"} 0' in lines
    assert [line.split()[0] for line in lines if line.startswith("hpcnet_rdma_health_") and "{" not in line] == [
        "hpcnet_rdma_health_passed", "hpcnet_rdma_health_duration_seconds", "hpcnet_rdma_health_last_run_timestamp_seconds"]
    proc = promtool("check", "metrics", stdin=text)
    assert (proc.returncode, proc.stdout + proc.stderr) == (0, ""), text
    n.write("/etc/security/limits.d/rdma.conf", "@rdma - memlock unlimited\n")
    assert run(program, n, capsys, "--metrics-dir", TEXTFILE) == (0, "")             # fixed: the same file, rewritten
    lines = n.read(TEXTFILE + "/hpcnet_rdma_health.prom").splitlines()
    assert 'hpcnet_rdma_health_finding{code="memlock.low",severity="drain"} 0' in lines and "hpcnet_rdma_health_passed 1" in lines


def test_the_config_turns_it_on_and_a_missing_directory_means_no_node_exporter(program, tmp_path, capsys):  # noqa: F811
    n = lab(tmp_path)
    n.write("/etc/hpcnet-rdma/health.json", json.dumps({"tools": [], "fleet_size": 2, "budget": 5, "metrics_dir": TEXTFILE}))
    rc, out = run(program, n, capsys, "--json")
    assert rc == 0 and json.loads(out)["metrics"] is None and not os.path.exists(n.path(TEXTFILE))
    os.makedirs(n.path(TEXTFILE))
    assert json.loads(run(program, n, capsys, "--json")[1])["metrics"] == TEXTFILE + "/hpcnet_rdma_health.prom"
    os.remove(n.path(TEXTFILE + "/hpcnet_rdma_health.prom"))
    assert json.loads(run(program, n, capsys, "--json", "--metrics-dir", "")[1])["metrics"] is None   # off
    assert os.listdir(n.path(TEXTFILE)) == []


def test_a_file_it_cannot_write_is_a_warning_not_a_failed_check(program, tmp_path, capsys):  # noqa: F811
    n = lab(tmp_path)
    os.makedirs(n.path(TEXTFILE + "/hpcnet_rdma_health.prom"))                       # rename onto a directory fails
    rc, out = run(program, n, capsys, "--json", "--metrics-dir", TEXTFILE)
    doc = json.loads(out)
    bad = [f for f in doc["findings"] if f["code"] == "metrics.unwritable"]
    assert rc == 0 and doc["metrics"] is None and bad and bad[0]["severity"] == "warn"
    assert os.listdir(n.path(TEXTFILE)) == ["hpcnet_rdma_health.prom"]              # the temp file is gone
    rc, out = run(program, n, capsys, "--json", "--metrics-dir", "relative/dir")
    assert "'relative/dir' is not an absolute path" in out
