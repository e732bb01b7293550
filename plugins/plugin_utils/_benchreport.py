# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Compare stored benchmark runs: before/after tables (Markdown, HTML) and PNG plots (controller only).

Used by the action ``hpcnet.rdma.bench_report`` and as a command on the controller::

    python3 -m ansible_collections.hpcnet.rdma.plugins.plugin_utils._benchreport BEFORE.json AFTER.json [-o DIR]

The first run is the baseline; every later run gets a change against it.  Plots: for each latency test
a CDF of every run and pair with p50/p90/p99/p99.9 marked; for each bandwidth test bars per pair, one
per run.  matplotlib is imported only to draw (Agg backend), so the tables need nothing but Python.
"""
from __future__ import annotations

import argparse
import html
import os
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchrun, _benchstats, _findings_report

# test -> the metrics compared: (key in the result, column title, unit, higher is better)
METRICS: Dict[str, List[Tuple[str, str, str, bool]]] = {
    "iperf3": [("gbits_received", "throughput", "Gbit/s", True), ("retransmits", "retransmits", "", False)],
    "ib_write_bw": [("gbits_average", "bandwidth", "Gbit/s", True)],
    "sockperf": [(_benchstats.pkey(p), _benchstats.pkey(p), "us", False) for p in _benchstats.PERCENTILES],
    "ib_send_lat": [(_benchstats.pkey(p), _benchstats.pkey(p), "us", False) for p in _benchstats.PERCENTILES],
    "ib_write_lat": [(_benchstats.pkey(p), _benchstats.pkey(p), "us", False) for p in _benchstats.PERCENTILES],
}
TITLES = {"iperf3": "TCP throughput (iperf3)", "ib_write_bw": "RDMA write bandwidth (ib_write_bw)",
          "sockperf": "TCP latency (sockperf ping-pong, half round trip)", "ib_send_lat": "RDMA send latency (ib_send_lat)",
          "ib_write_lat": "RDMA write latency (ib_write_lat)"}
NAMES = {"markdown": "bench-report.md", "html": "bench-report.html"}


def run_names(runs: Sequence[Dict[str, Any]]) -> List[str]:
    """A column name per run: its label, or label and run id when labels repeat."""
    labels = [r.get("label") or r["run_id"] for r in runs]
    return [lab if labels.count(lab) == 1 else "%s (%s)" % (lab, r["run_id"]) for lab, r in zip(labels, runs)]


def _value(run: Dict[str, Any], test: str, pair: str, key: str) -> Optional[float]:
    res = ((run.get("results") or {}).get(test) or {}).get(pair) or {}
    if "error" in res:
        return None
    if key.startswith("p") and key[1:2].isdigit():
        return (res.get("percentiles") or {}).get(key)
    return res.get(key)


def compare(runs: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    """The table: per test and pair and metric the value in every run and the change of each later run."""
    if len(runs) < 2:
        raise ValueError("compare needs two or more stored runs, got %d" % len(runs))
    names = run_names(runs)
    tests = []
    for run in runs:
        for t in run["results"]:
            if t not in tests and t in METRICS:
                tests.append(t)
    rows = []
    for test in tests:
        pairs: List[str] = []
        for run in runs:
            for p in (run["results"].get(test) or {}):
                if p not in pairs:
                    pairs.append(p)
        for pair in pairs:
            for key, title, unit, higher in METRICS[test]:
                values = [_value(r, test, pair, key) for r in runs]
                changes = [_benchstats.percent_change(values[0], v) for v in values[1:]]
                better = [None if c is None else ((c > 0) == higher if c != 0 else None) for c in changes]
                rows.append({"test": test, "pair": pair, "metric": title, "unit": unit, "values": values,
                             "changes": changes, "better": better})
    return {"runs": names, "run_ids": [r["run_id"] for r in runs],
            "profiles": [sorted(set(v for v in (r.get("profiles") or {}).values() if v)) or ["none recorded"]
                         for r in runs],
            "started": [r.get("started_at") for r in runs], "tests": tests, "rows": rows,
            "errors": [(n, e) for n, r in zip(names, runs) for e in r.get("errors") or []]}


def _fmt(v: Optional[float]) -> str:
    if v is None:
        return "-"
    if isinstance(v, int) or float(v).is_integer():
        return "%d" % v
    return "%.3f" % v if abs(v) < 100 else "%.1f" % v


def _fmt_change(c: Optional[float], better: Optional[bool]) -> str:
    if c is None:
        return "-"
    return "%+.1f%%%s" % (c, "" if better is None else (" better" if better else " worse"))


def to_markdown(table: Dict[str, Any], plots: Optional[Dict[str, str]] = None) -> str:
    """The tables in Markdown; every name and text from a run (labels, ids, pairs, profiles, errors) made inert
    as the HTML report escapes it (``_findings_report.md_text``)."""
    md = _findings_report.md_text
    runs = [md(n) for n in table["runs"]]
    out = ["# Benchmark comparison", "",
           "Baseline: **%s**.  Changes are against the baseline; latency in microseconds (lower is better), "
           "bandwidth in Gbit/s (higher is better)." % runs[0], ""]
    out += ["| run | run id | started | profile(s) |", "|---|---|---|---|"]
    for name, rid, started, prof in zip(runs, table["run_ids"], table["started"], table["profiles"]):
        out.append("| %s | %s | %s | %s |" % (name, md(rid), md(started or "-"), md(", ".join(prof))))
    for test in table["tests"]:
        out += ["", "## %s" % md(TITLES.get(test, test)), ""]
        head = ["pair", "metric"] + runs + ["change %s" % n for n in runs[1:]]
        out += ["| %s |" % " | ".join(head), "|%s" % ("---|" * len(head))]
        for row in [r for r in table["rows"] if r["test"] == test]:
            metric = "%s (%s)" % (row["metric"], row["unit"]) if row["unit"] else row["metric"]
            cells = [md(row["pair"]), md(metric)] + [_fmt(v) for v in row["values"]] + \
                [_fmt_change(c, b) for c, b in zip(row["changes"], row["better"])]
            out.append("| %s |" % " | ".join(cells))
        if plots and test in plots:
            out += ["", "![%s](%s)" % (md(TITLES.get(test, test)), os.path.basename(plots[test]))]
    if table["errors"]:
        out += ["", "## Errors in the runs", ""] + ["- %s: %s" % (md(n), md(e)) for n, e in table["errors"]]
    return "\n".join(out) + "\n"


def to_html(table: Dict[str, Any], plots: Optional[Dict[str, str]] = None) -> str:
    esc = html.escape
    runs = table["runs"]
    parts = ["<!DOCTYPE html>", "<html><head><meta charset=\"utf-8\"><title>Benchmark comparison</title>",
             "<style>body{font-family:sans-serif}table{border-collapse:collapse}td,th{border:1px solid #999;"
             "padding:2px 8px;text-align:right}td:first-child,td:nth-child(2){text-align:left}"
             ".better{color:#060}.worse{color:#a00}</style></head><body>",
             "<h1>Benchmark comparison</h1>",
             "<p>Baseline: <b>%s</b>. Changes are against the baseline; latency in microseconds (lower is better), "
             "bandwidth in Gbit/s (higher is better).</p>" % esc(runs[0]),
             "<table><tr><th>run</th><th>run id</th><th>started</th><th>profile(s)</th></tr>"]
    for name, rid, started, prof in zip(runs, table["run_ids"], table["started"], table["profiles"]):
        parts.append("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>"
                     % (esc(name), esc(rid), esc(started or "-"), esc(", ".join(prof))))
    parts.append("</table>")
    for test in table["tests"]:
        parts.append("<h2>%s</h2><table><tr>" % esc(TITLES.get(test, test)))
        head = ["pair", "metric"] + runs + ["change %s" % n for n in runs[1:]]
        parts.append("".join("<th>%s</th>" % esc(h) for h in head) + "</tr>")
        for row in [r for r in table["rows"] if r["test"] == test]:
            metric = "%s (%s)" % (row["metric"], row["unit"]) if row["unit"] else row["metric"]
            cells = ["<td>%s</td>" % esc(x) for x in [row["pair"], metric] + [_fmt(v) for v in row["values"]]]
            for c, b in zip(row["changes"], row["better"]):
                cls = "" if b is None else (" class=\"better\"" if b else " class=\"worse\"")
                cells.append("<td%s>%s</td>" % (cls, esc(_fmt_change(c, b))))
            parts.append("<tr>%s</tr>" % "".join(cells))
        parts.append("</table>")
        if plots and test in plots:
            parts.append("<p><img src=\"%s\" alt=\"%s\"></p>" % (esc(os.path.basename(plots[test])),
                                                                 esc(TITLES.get(test, test))))
    if table["errors"]:
        parts.append("<h2>Errors in the runs</h2><ul>%s</ul>"
                     % "".join("<li>%s: %s</li>" % (esc(n), esc(e)) for n, e in table["errors"]))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


# ---------------------------------------------------------------------- plots
def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise RuntimeError("matplotlib is not installed on the controller (pip install -r requirements.txt, or "
                           "Debian's python3-matplotlib for the system python): the tables need nothing, the "
                           "plots need it - or turn the plots off")
    return plt


def plot_latency_cdf(runs: Sequence[Dict[str, Any]], names: Sequence[str], test: str, path: str) -> Optional[str]:
    """The CDF of every run and pair of a latency test, p50/p90/p99/p99.9 marked; None when no run has one."""
    series = []
    for name, run in zip(names, runs):
        for pair, res in sorted(((run.get("results") or {}).get(test) or {}).items()):
            if res.get("cdf"):
                series.append(("%s %s" % (name, pair), res))
    if not series:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 5), dpi=100)
    for label, res in series:
        xs = [v for _p, v in res["cdf"]]
        ys = [p for p, _v in res["cdf"]]
        line, = ax.plot(xs, ys, label=label, drawstyle="steps-post")
        for key, value in sorted((res.get("percentiles") or {}).items(), key=lambda kv: float(kv[0][1:])):
            p = float(key[1:])
            ax.plot([value], [p], marker="o", color=line.get_color())
            ax.annotate("%s %.1f" % (key, value), (value, p), textcoords="offset points", xytext=(4, -10),
                        fontsize=7, color=line.get_color())
    ax.set_xscale("log")
    ax.set_xlabel("latency (us, log scale)")
    ax.set_ylabel("percentile")
    ax.set_ylim(0, 100.5)
    ax.set_title(TITLES.get(test, test))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def plot_bandwidth(runs: Sequence[Dict[str, Any]], names: Sequence[str], test: str, path: str) -> Optional[str]:
    """Bars per pair, one per run; None when no run has a value."""
    key = METRICS[test][0][0]
    pairs: List[str] = []
    for run in runs:
        for p in ((run.get("results") or {}).get(test) or {}):
            if p not in pairs:
                pairs.append(p)
    values = [[_value(r, test, p, key) for p in pairs] for r in runs]
    if not pairs or all(v is None for row in values for v in row):
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(pairs) * len(runs)), 4.5), dpi=100)
    width = 0.8 / len(runs)
    for i, (name, row) in enumerate(zip(names, values)):
        xs = [j + i * width for j in range(len(pairs))]
        rects = ax.bar(xs, [v or 0 for v in row], width=width, label=name)
        for rect, v in zip(rects, row):
            ax.annotate("-" if v is None else "%.2f" % v, (rect.get_x() + rect.get_width() / 2, rect.get_height()),
                        ha="center", va="bottom", fontsize=8)
    ax.set_xticks([j + width * (len(runs) - 1) / 2 for j in range(len(pairs))])
    ax.set_xticklabels(pairs)
    ax.set_ylabel("Gbit/s")
    ax.set_title(TITLES.get(test, test))
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def report(paths: Sequence[str], out_dir: str, plots: bool = True) -> Dict[str, Any]:
    """Load the runs (NotARun names a file that is not one), write the tables and plots; what was written."""
    runs = [_benchrun.load_run(p) for p in paths]
    table = compare(runs)
    os.makedirs(out_dir, exist_ok=True)
    written: Dict[str, str] = {}
    pngs: Dict[str, str] = {}
    if plots:
        for test in table["tests"]:
            target = os.path.join(out_dir, "bench-%s.png" % test)
            if test in _benchrun.LATENCY_TESTS:
                made = plot_latency_cdf(runs, table["runs"], test, target)
            else:
                made = plot_bandwidth(runs, table["runs"], test, target)
            if made:
                pngs[test] = made
    for fmt, render in (("markdown", to_markdown), ("html", to_html)):
        written[fmt] = os.path.join(out_dir, NAMES[fmt])
        _findings_report.write_text(written[fmt], render(table, pngs))
    return {"table": table, "files": written, "plots": pngs}


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_report", description=(
        "Compare two or more stored hpcnet.rdma benchmark runs (the first is the baseline): Markdown and "
        "HTML tables and PNG plots (latency CDFs, bandwidth bars)."))
    parser.add_argument("runs", nargs="+", help="stored run files (JSON, schema %s)" % _benchrun.SCHEMA)
    parser.add_argument("-o", "--output", default="rdma-bench-report", help="directory for the report")
    parser.add_argument("--no-plots", action="store_true", help="tables only (no matplotlib needed)")
    args = parser.parse_args(argv)
    if len(args.runs) < 2:
        parser.error("give two or more stored runs (the first is the baseline)")
    try:
        out = report(args.runs, args.output, plots=not args.no_plots)
    except (_benchrun.NotARun, RuntimeError, ValueError, OSError) as e:
        print("bench_report: %s" % e, file=sys.stderr)
        return 2
    for path in list(out["files"].values()) + list(out["plots"].values()):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
