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
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchload as bl
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


@pytest.mark.parametrize("test, pair, metric, values, changes, verdicts, better", [
    # one figure per run, no spread: the change is shown, never called better or worse
    ("iperf3", "a->b", "throughput", [8.0, 12.0], [50.0], ["not tested"], [None]),
    ("iperf3", "c->d", "throughput", [4.0, 6.0], [50.0], ["not tested"], [None]),
    ("iperf3", "a->b", "retransmits", [10, 10], [0.0], ["not tested"], [None]),
    ("iperf3", "c->d", "retransmits", [0, 0], [None], [None], [None]),
    ("ib_write_bw", "a->b", "bandwidth", [2.0, 3.0], [50.0], ["not tested"], [None]),
    ("ib_write_bw", "c->d", "bandwidth", [None, None], [None], [None], [None]),
    # 1000 samples each, every latency halved: far outside the noise
    ("sockperf", "a->b", "mean", [500.5, 250.25], [-50.0], ["better"], [True]),
    ("sockperf", "a->b", "p50", [500.0, 250.0], [-50.0], ["better"], [True]),
    ("sockperf", "a->b", "p99.9", [999.0, 499.5], [-50.0], ["better"], [True]),
    ("sockperf", "c->d", "p90", [1800.0, 900.0], [-50.0], ["better"], [True]),
])
def test_compare_rows(runs, test, pair, metric, values, changes, verdicts, better):
    table = rep.compare([bl.load_run(p) for p in runs])
    row = [r for r in table["rows"] if (r["test"], r["pair"], r["metric"]) == (test, pair, metric)]
    assert len(row) == 1
    assert (row[0]["values"], row[0]["changes"], row[0]["verdicts"], row[0]["better"]) == (values, changes, verdicts, better)


def test_iperf3_intervals_give_an_interval_and_noise_is_no_change(tmp_path):
    """Two runs whose one-second throughputs overlap: the mean moved 2 %, the interval crosses zero."""
    before, after = synthetic("untuned", 8.0, 2.0, 1.0, None), synthetic("mpi", 8.16, 2.0, 1.0, "mpi")
    before["results"]["iperf3"]["a->b"]["intervals_gbits"] = [7.5, 8.4, 8.1, 7.9, 8.2, 7.8, 8.3, 7.8]
    after["results"]["iperf3"]["a->b"]["intervals_gbits"] = [8.6, 7.7, 8.4, 8.0, 8.3, 7.9, 8.2, 8.2]
    row = [r for r in rep.compare([before, after])["rows"] if (r["test"], r["pair"], r["metric"]) ==
           ("iperf3", "a->b", "throughput")][0]
    assert row["verdicts"] == ["no significant change"] and row["better"] == [None]
    assert row["intervals"][0]["method"] == "welch-t" and row["intervals"][0]["low"] < 0 < row["intervals"][0]["high"]
    assert row["spread"][0] == ["n=8 s", "sd 0.302"]
    md = rep.to_markdown(rep.compare([before, after]))
    assert "| a->b | throughput (Gbit/s) | 8 (n=8 s, sd 0.302) | 8.160 (n=8 s, sd 0.288) | +2.0% [-1.9%, +6.0%] " \
        "no significant change |" in md


def test_compare_header_and_errors(runs):
    table = rep.compare([bl.load_run(p) for p in runs])
    assert table["runs"] == ["untuned", "mpi"] and table["tests"] == ["iperf3", "ib_write_bw", "sockperf"]
    assert table["profiles"] == [["none recorded"], ["mpi"]]
    assert table["errors"] == [("mpi", "ib_write_bw c->d: rc 1: Couldn't connect")]


def test_compare_needs_two_runs(runs):
    with pytest.raises(ValueError, match="compare needs two or more stored runs, got 1"):
        rep.compare([bl.load_run(runs[0])])


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
    assert "| a->b | throughput (Gbit/s) | 8 (n=1) | 12 (n=1) | +50.0% not tested |" in md
    assert "| a->b | p99.9 (us) | 999 (n=1000, IQR 250-750) | 499.5 (n=1000, IQR 125-375) | -50.0% [-50.3%, -49.6%] better |" in md
    assert "| c->d | bandwidth (Gbit/s) | - | - | - |" in md
    assert "95 % confidence interval of the difference" in md
    assert "![TCP latency (sockperf ping-pong, half round trip)](bench-sockperf.png)" in md
    assert "- mpi: ib_write_bw c->d: rc 1: Couldn't connect" in md
    page = open(out["files"]["html"]).read()
    assert ("<td>a-&gt;b</td><td>throughput (Gbit/s)</td><td>8 (n=1)</td><td>12 (n=1)</td>"
            "<td class=\"same\">+50.0% not tested</td>") in page
    assert "<td class=\"better\">-50.0% [-50.3%, -49.6%] better</td>" in page
    assert "<img src=\"bench-iperf3.png\"" in page


def test_report_without_plots_needs_no_matplotlib(runs, tmp_path):
    out = rep.report(runs, str(tmp_path / "r"), plots=False)
    assert out["plots"] == {} and sorted(os.listdir(str(tmp_path / "r"))) == ["bench-report.html", "bench-report.md"]


def test_report_without_matplotlib_is_the_tables_and_one_note(runs, tmp_path, monkeypatch, capsys):
    # An execution environment without matplotlib: `import matplotlib` fails, the tables are written all the same.
    import builtins
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError("No module named %r" % name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    out = rep.report(runs, str(tmp_path / "r"))
    assert out["plots"] == {} and out["notes"] == [rep.NO_MATPLOTLIB]
    assert sorted(os.listdir(str(tmp_path / "r"))) == ["bench-report.html", "bench-report.md"]
    assert ".png" not in open(out["files"]["markdown"]).read()
    assert rep.main(runs + ["-o", str(tmp_path / "cli")]) == 0
    err = capsys.readouterr().err
    assert err == "bench_report: %s\n" % rep.NO_MATPLOTLIB


def test_report_of_a_run_the_playbook_stored(tmp_path):
    lab = json.load(open(LAB_RUN))
    after = json.loads(json.dumps(lab))
    after["run_id"], after["label"] = after["run_id"] + "-b", "again"
    path = tmp_path / "after.json"
    path.write_text(json.dumps(after))
    out = rep.report([LAB_RUN, str(path)], str(tmp_path / "r"))
    assert sorted(out["plots"]) == ["iperf3", "sockperf"]
    md = open(out["files"]["markdown"]).read()
    # the same run twice: every change is 0 and none is called better or worse
    assert "| node1->node2 | throughput (Gbit/s) | 7.569 (n=2 s, sd 0.666) | 7.569 (n=2 s, sd 0.666) | +0.0% [" in md
    p50 = lab["results"]["sockperf"]["node1->node2"]["percentiles"]["p50"]
    assert "| node1->node2 | p50 (us) | %s (n=15503, IQR" % rep._fmt(p50) in md
    assert "] better" not in md and "] worse" not in md and md.count("] no significant change |") == 6


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


@pytest.mark.parametrize("p, n, x", [(50.0, 1000, 0.301), (90.0, 1000, 1.0), (99.0, 1000, 2.0), (99.9, 1000, 3.0),
                                     (100.0, 1000, 3.0), (100.0, 15503, 4.19), (100.0, None, 4.0)])
def test_the_latency_plot_spreads_the_tail_evenly(p, n, x):
    """p50, p90, p99, p99.9 sit at 0.3, 1, 2, 3 on the x axis: the tail gets the room the CDF's top 1 % lacked."""
    assert rep._nines(p, n) == pytest.approx(x, abs=0.01)


def test_the_latency_plot_names_the_percentiles_in_its_legend(runs, tmp_path, monkeypatch):
    """The values of the marked percentiles go into the legend, not beside the points where p99 and p99.9 collided."""
    plt = rep._pyplot()
    seen = {}
    real_savefig = plt.Figure.savefig

    def savefig(fig, path, *args, **kwargs):
        ax = fig.axes[0]
        seen["legend"] = [t.get_text() for t in ax.get_legend().get_texts()]
        seen["annotations"] = [c for c in ax.get_children() if type(c).__name__ == "Annotation"]
        seen["ticks"] = [t.get_text() for t in ax.get_xticklabels()]
        seen["yscale"] = ax.get_yscale()
        return real_savefig(fig, path, *args, **kwargs)

    monkeypatch.setattr(plt.Figure, "savefig", savefig)
    loaded = [bl.load_run(p) for p in runs]
    assert rep.plot_latency_percentiles(loaded, ["untuned", "mpi"], "sockperf", str(tmp_path / "l.png"))
    assert seen["legend"][0] == "untuned a->b (n=1000): p50 500, p90 900, p99 990, p99.9 999"
    assert seen["annotations"] == [] and seen["yscale"] == "log"
    assert seen["ticks"][:5] == ["p0", "p50", "p90", "p99", "p99.9"]
