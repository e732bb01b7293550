# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Before/after tables and plots from stored runs: synthetic runs with known numbers, and a run the
playbook stored on the lab; the PNGs are real PNGs, the tables carry the right numbers."""
from __future__ import annotations

import json
import os
import struct

import pytest

from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchreport as rep
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchrun as br
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchstats as bs

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures")
LAB_RUN = os.path.join(FIXTURES, "bench-run.lab-smoke.captured.json")


def lat(samples):
    return bs.summarize(samples)


def synthetic(label, gbits, ib_gbits, scale, profile, errors=()):
    """A stored run: two pairs; latency samples 1..1000 us times ``scale``."""
    samples = [i * scale for i in range(1, 1001)]
    results = {
        "iperf3": {"a->b": {"gbits_received": gbits, "retransmits": 10}, "c->d": {"gbits_received": gbits / 2,
                                                                                  "retransmits": 0}},
        "ib_write_bw": {"a->b": {"gbits_average": ib_gbits}, "c->d": {"error": "rc 1: Couldn't connect"}},
        "sockperf": {"a->b": lat(samples), "c->d": lat([s * 2 for s in samples])},
    }
    return {"schema": br.SCHEMA, "run_id": "2026-%s" % label, "label": label, "started_at": "2026-12-04T15:00:00Z",
            "hosts": ["a", "b", "c", "d"], "nodes": {}, "pairs": [], "profiles": {"a": profile, "b": profile},
            "results": results, "errors": list(errors)}


@pytest.fixture
def runs(tmp_path):
    paths = []
    tuned = synthetic("mpi", 12.0, 3.0, 0.5, "mpi", ["ib_write_bw c->d: rc 1: Couldn't connect"])
    for run in (synthetic("untuned", 8.0, 2.0, 1.0, None), tuned):
        path = tmp_path / ("%s.json" % run["label"])
        path.write_text(json.dumps(run))
        paths.append(str(path))
    return paths


@pytest.mark.parametrize("test, pair, metric, values, changes, better", [
    ("iperf3", "a->b", "throughput", [8.0, 12.0], [50.0], [True]),
    ("iperf3", "c->d", "throughput", [4.0, 6.0], [50.0], [True]),
    ("iperf3", "a->b", "retransmits", [10, 10], [0.0], [None]),
    ("iperf3", "c->d", "retransmits", [0, 0], [None], [None]),
    ("ib_write_bw", "a->b", "bandwidth", [2.0, 3.0], [50.0], [True]),
    ("ib_write_bw", "c->d", "bandwidth", [None, None], [None], [None]),
    ("sockperf", "a->b", "p50", [500.0, 250.0], [-50.0], [True]),
    ("sockperf", "a->b", "p99.9", [999.0, 499.5], [-50.0], [True]),
    ("sockperf", "c->d", "p90", [1800.0, 900.0], [-50.0], [True]),
])
def test_compare_rows(runs, test, pair, metric, values, changes, better):
    table = rep.compare([br.load_run(p) for p in runs])
    row = [r for r in table["rows"] if (r["test"], r["pair"], r["metric"]) == (test, pair, metric)]
    assert len(row) == 1
    assert (row[0]["values"], row[0]["changes"], row[0]["better"]) == (values, changes, better)


def test_compare_header_and_errors(runs):
    table = rep.compare([br.load_run(p) for p in runs])
    assert table["runs"] == ["untuned", "mpi"] and table["tests"] == ["iperf3", "ib_write_bw", "sockperf"]
    assert table["profiles"] == [["none recorded"], ["mpi"]]
    assert table["errors"] == [("mpi", "ib_write_bw c->d: rc 1: Couldn't connect")]


def test_compare_needs_two_runs(runs):
    with pytest.raises(ValueError, match="compare needs two or more stored runs, got 1"):
        rep.compare([br.load_run(runs[0])])


def test_repeated_labels_get_the_run_id():
    a, b = synthetic("x", 1, 1, 1, None), synthetic("x", 1, 1, 1, None)
    b["run_id"] = "2026-y"
    assert rep.run_names([a, b]) == ["x (2026-x)", "x (2026-y)"]


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", head[16:24])


def test_report_writes_tables_and_pngs(runs, tmp_path):
    out = rep.report(runs, str(tmp_path / "report"))
    assert sorted(out["plots"]) == ["ib_write_bw", "iperf3", "sockperf"]
    for path in out["plots"].values():
        assert os.path.getsize(path) > 5000
        width, height = png_size(path)
        assert width >= 600 and height >= 400
    md = open(out["files"]["markdown"]).read()
    assert "| a->b | throughput (Gbit/s) | 8 | 12 | +50.0% better |" in md
    assert "| a->b | p99.9 (us) | 999 | 499.5 | -50.0% better |" in md
    assert "| c->d | bandwidth (Gbit/s) | - | - | - |" in md
    assert "![TCP latency (sockperf ping-pong, half round trip)](bench-sockperf.png)" in md
    assert "- mpi: ib_write_bw c->d: rc 1: Couldn't connect" in md
    page = open(out["files"]["html"]).read()
    assert "<td>a-&gt;b</td><td>throughput (Gbit/s)</td><td>8</td><td>12</td><td class=\"better\">+50.0% better</td>" in page
    assert "<img src=\"bench-iperf3.png\"" in page


def test_report_without_plots_needs_no_matplotlib(runs, tmp_path):
    out = rep.report(runs, str(tmp_path / "r"), plots=False)
    assert out["plots"] == {} and sorted(os.listdir(str(tmp_path / "r"))) == ["bench-report.html", "bench-report.md"]


def test_report_of_a_run_the_playbook_stored(tmp_path):
    lab = json.load(open(LAB_RUN))
    after = json.loads(json.dumps(lab))
    after["run_id"], after["label"] = after["run_id"] + "-b", "again"
    path = tmp_path / "after.json"
    path.write_text(json.dumps(after))
    out = rep.report([LAB_RUN, str(path)], str(tmp_path / "r"))
    assert sorted(out["plots"]) == ["iperf3", "sockperf"]
    md = open(out["files"]["markdown"]).read()
    assert "| node1->node2 | throughput (Gbit/s) | 7.569 | 7.569 | +0.0% |" in md
    p50 = lab["results"]["sockperf"]["node1->node2"]["percentiles"]["p50"]
    assert "| node1->node2 | p50 (us) | %s | %s |" % (rep._fmt(p50), rep._fmt(p50)) in md


@pytest.mark.parametrize("content, message", [
    ('{"schema": "hpcnet.rdma.rdma_verify/1", "findings": []}', "is not a stored hpcnet.rdma benchmark run"),
    ("<html></html>", "not JSON"),
])
def test_cli_names_a_file_that_is_not_a_run(runs, tmp_path, capsys, content, message):
    bad = tmp_path / "report.json"
    bad.write_text(content)
    assert rep.main([runs[0], str(bad), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bench_report: %s" % bad) and message in err


def test_cli_writes_the_report(runs, tmp_path, capsys):
    assert rep.main(runs + ["-o", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out.split()
    assert [os.path.basename(p) for p in printed] == ["bench-report.md", "bench-report.html", "bench-iperf3.png",
                                                      "bench-ib_write_bw.png", "bench-sockperf.png"]


def test_cli_needs_two_runs(runs):
    with pytest.raises(SystemExit):
        rep.main([runs[0]])
