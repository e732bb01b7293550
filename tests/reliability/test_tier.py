# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The tier this suite is: scripts/results.py records it, and a run that collected no test
(pytest exit code 5) or failed one fails the tier, as `make test` needs."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

RESULTS_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "results.py")
JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="{f}"
 skipped="0" tests="{t}"></testsuite></testsuites>"""


def _record(tmp_path, rc, tests, failures):
    junit = tmp_path / "reliability.xml"
    junit.write_text(JUNIT.format(t=tests, f=failures))
    env = dict(os.environ, HPCNET_RESULTS_DIR=str(tmp_path / "results"))
    proc = subprocess.run([sys.executable, RESULTS_PY, "record", "reliability", "--rc", str(rc), "--junit", str(junit)],
                          env=env, capture_output=True, text=True, check=False)
    return proc.returncode, json.loads((tmp_path / "results" / "reliability.json").read_text())


@pytest.mark.parametrize("rc, tests, failures, ok, detail", [
    (0, 12, 0, True, "12 passed, 0 failed, 0 skipped"),
    (5, 0, 0, False, "runner exit code 5 (no tests collected)"),
    (1, 12, 1, False, "11 passed, 1 failed"),
])
def test_results_py_records_the_reliability_tier(tmp_path, rc, tests, failures, ok, detail):
    code, recorded = _record(tmp_path, rc, tests, failures)
    assert (code == 0) is ok
    assert recorded["tier"] == "reliability" and recorded["ok"] is ok and recorded["unit"] == "reliability tests passed"
    assert detail in recorded["detail"]


def test_make_test_runs_the_tier_after_unit():
    makefile = os.path.join(os.path.dirname(RESULTS_PY), "..", "Makefile")
    with open(makefile) as f:
        tiers = [line.split(":=", 1)[1].split() for line in f if line.startswith("TIERS :=")]
    assert tiers and tiers[0][:2] == ["unit", "reliability"]
