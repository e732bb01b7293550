# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The controller side of bench and verify with hostile input (issue 30), run by the real ansible-playbook:
a ``started_at`` that is a path, a crafted stored run, and node-controlled names with HTML in them.

Each case is one task of one play (one ansible-playbook run for the file: it takes seconds); a case
asserts the task's result and what is on disk afterwards.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from rlib import COLLECTIONS

BINARY = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
HTML = "<img src=x onerror=alert(1)>"
PLAN = {"steps": {"iperf3": {}}, "nodes": {}, "pairs": [], "left_out": []}


def _run(pair, label, value):
    return {"schema": "hpcnet.rdma.bench/1", "run_id": "r-" + label, "label": label, "started_at": "2026-12-04T00:00:00Z",
            "pairs": [], "nodes": {}, "profiles": {"n1": None}, "errors": ["iperf3 %s: %s" % (pair, HTML)],
            "results": {"iperf3": {pair: {"gbits_received": value, "retransmits": 0}}}}


@pytest.fixture(scope="module")
def play(tmp_path_factory):
    """Run the play once; per task name its result, and the directory it ran in."""
    d = str(tmp_path_factory.mktemp("controller"))
    runs = {"before.json": _run("a->" + HTML, "before", 8.0), "after.json": _run("a->" + HTML, HTML, 12.0),
            "crafted.json": _run("a->b", "crafted", "fast")}
    for name, run in runs.items():
        with open(os.path.join(d, name), "w") as f:
            json.dump(run, f)
    tasks = [
        {"name": "traversal", "hpcnet.rdma.bench_run": {
            "stage": "store", "options": {"tests": ["iperf3"], "label": "x"}, "hosts": [], "plan": PLAN,
            "results": {}, "logs": {}, "started_at": "2026-12-04T00:00:00Z/../../../escaped",
            "results_dir": os.path.join(d, "results")}},
        {"name": "store", "hpcnet.rdma.bench_run": {
            "stage": "store", "options": {"tests": ["iperf3"], "label": "x"}, "hosts": [], "plan": PLAN,
            "results": {}, "logs": {}, "started_at": "2026-12-04T15:54:29Z", "results_dir": os.path.join(d, "results")}},
        {"name": "crafted", "hpcnet.rdma.bench_report": {
            "runs": [os.path.join(d, "before.json"), os.path.join(d, "crafted.json")], "plots": False,
            "output_dir": os.path.join(d, "report-crafted")}},
        {"name": "html bench", "hpcnet.rdma.bench_report": {
            "runs": [os.path.join(d, "before.json"), os.path.join(d, "after.json")], "plots": False,
            "output_dir": os.path.join(d, "report")}},
        {"name": "html verify", "hpcnet.rdma.fabric_verify_info": {
            "stage": "compare", "nodes": {HTML: {}, "n2": {}}, "hosts": [HTML, "n2"], "formats": ["markdown", "html"],
            "report_dir": os.path.join(d, "verify")}},
    ]
    for t in tasks:
        t["ignore_errors"] = True
    with open(os.path.join(d, "play.yml"), "w") as f:
        json.dump([{"hosts": "localhost", "connection": "local", "gather_facts": False, "tasks": tasks}], f)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_LOCAL_TEMP=os.path.join(d, "tmp"),
               ANSIBLE_HOME=os.path.join(d, "home"), ANSIBLE_NOCOLOR="1", ANSIBLE_STDOUT_CALLBACK="json",
               ANSIBLE_INVENTORY_UNPARSED_WARNING="0", ANSIBLE_LOCALHOST_WARNING="0")
    proc = subprocess.run([BINARY, "play.yml"], cwd=d, env=env, capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = json.loads(proc.stdout)["plays"][0]["tasks"]
    return dict((t["task"]["name"], t["hosts"]["localhost"]) for t in out), d


def test_started_at_that_is_a_path_is_refused_and_nothing_is_written(play):
    results, d = play
    res = results["traversal"]
    assert res.get("failed") is True, res
    assert "started_at: '2026-12-04T00:00:00Z/../../../escaped' is not an ISO 8601 timestamp YYYY-MM-DDTHH:MM:SSZ" \
        in res["msg"]
    for top, _dirs, names in os.walk(os.path.dirname(d)):
        assert not [n for n in names if "escaped" in n], (top, names)
    # a timestamp is stored inside results_dir, its name made of it
    assert results["store"].get("failed") is not True, results["store"]
    assert os.listdir(os.path.join(d, "results")) == ["20261204T155429Z-x.json"]


def test_a_crafted_stored_run_is_named_with_its_file_and_field(play):
    results, d = play
    res = results["crafted"]
    assert res.get("failed") is True, res
    assert res["msg"] == ("%s: not a stored run the report can read: results.iperf3[\"a->b\"].gbits_received: 'fast' "
                          "is not a number" % os.path.join(d, "crafted.json")), res["msg"]
    assert not os.path.exists(os.path.join(d, "report-crafted", "bench-report.md"))


@pytest.mark.parametrize("task, name", [("html bench", "report/bench-report.md"), ("html verify", "verify/rdma-verify.md")])
def test_markdown_reports_keep_node_text_inert_as_the_html_ones_do(play, task, name):
    results, d = play
    assert results[task].get("failed") is not True, results[task]
    with open(os.path.join(d, name), encoding="utf-8") as f:
        md = f.read()
    assert "&lt;img src=x onerror=alert(1)>" in md and "<img" not in md
    with open(os.path.join(d, name[:-3] + ".html"), encoding="utf-8") as f:
        assert "<img" not in f.read()
