# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Compare stored benchmark runs: before/after tables (Markdown, HTML) and PNG plots (controller only).

Used by the action ``hpcnet.rdma.bench_report`` and as a command on the controller::

    python3 -m ansible_collections.hpcnet.rdma.plugins.plugin_utils._benchreport BEFORE.json AFTER.json [-o DIR]

The first run is the baseline; every later run gets a change against it, with a 95 % confidence interval
of the difference and a verdict that calls it better or worse only when the interval excludes zero
(``_benchsig``).  Plots: for each latency test the latency of every run and pair by percentile on a "nines"
axis (p50, p90, p99, p99.9 evenly spaced, so the tail is readable), the marked percentiles' values in the
legend; for each bandwidth test bars per pair, one per run.  The tables are the Jinja2 templates
``templates/bench-report.{md,html}.j2`` (``_render``: node text escaped in both formats).  matplotlib is
imported only to draw (Agg backend), so the tables need nothing but Python and Jinja2.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchload, _benchopts, _benchrun, _benchsig, _benchstats, _findings_report, _render

# test -> the metrics compared: (key in the result, column title, unit, higher is better)
LATENCY: List[Tuple[str, str, str, bool]] = [("mean", "mean", "us", False)] + [
    (_benchstats.pkey(p), _benchstats.pkey(p), "us", False) for p in _benchstats.PERCENTILES]
METRICS: Dict[str, List[Tuple[str, str, str, bool]]] = dict(
    [("iperf3", [("gbits_received", "throughput", "Gbit/s", True), ("retransmits", "retransmits", "", False)]),
     ("ib_write_bw", [("gbits_average", "bandwidth", "Gbit/s", True)])]
    + [(test, LATENCY) for test in _benchopts.LATENCY_TESTS])
HOW = ("A change is called better or worse only when the 95 %% confidence interval of the difference (after - "
       "before, shown in %% of the baseline) excludes zero; \"no significant change\" when it crosses zero; \"not "
       "tested\" for a figure measured once per run (no spread). Means and iperf3 throughput: %s (iperf3's "
       "one-second intervals are not independent, so that interval is too narrow). Percentiles: %s. Beside each "
       "figure: its sample count n and spread (IQR of the latency samples, sd of the means or intervals).") % (
    _benchsig.METHODS["welch-t"], _benchsig.METHODS["order-statistics"])
TITLES = {"iperf3": "TCP throughput (iperf3)", "ib_write_bw": "RDMA write bandwidth (ib_write_bw)",
          "sockperf": "TCP latency (sockperf ping-pong, half round trip)", "ib_send_lat": "RDMA send latency (ib_send_lat)",
          "ib_write_lat": "RDMA write latency (ib_write_lat)",
          "mpi": "MPI latency (mpirun over UCX: ping-pong one-way, Allreduce; per message size)"}
NAMES = {"markdown": "bench-report.md", "html": "bench-report.html"}


def run_names(runs: Sequence[Dict[str, Any]]) -> List[str]:
    """A column name per run: its label, or label and run id when labels repeat."""
    labels = [r.get("label") or r["run_id"] for r in runs]
    return [lab if labels.count(lab) == 1 else "%s (%s)" % (lab, r["run_id"]) for lab, r in zip(labels, runs)]


def _result(run: Dict[str, Any], test: str, pair: str, series: str = "") -> Dict[str, Any]:
    """A pair's result, or with ``series`` (the mpi test's "pingpong 8 B") that figure's statistics; an error of
    the pair is the error of each of its figures."""
    res = ((run.get("results") or {}).get(test) or {}).get(pair) or {}
    if not isinstance(res, dict) or "error" in res or not series:
        return res if isinstance(res, dict) else {}
    return dict(_benchstats.series_of(res)).get(series) or {}


def subjects(runs: Sequence[Dict[str, Any]], test: str) -> List[Tuple[str, str]]:
    """(pair, series) of a test over all runs, in first-seen order: series "" for one figure per pair, else one per
    mpi op and message size."""
    out: List[Tuple[str, str]] = []
    for run in runs:
        for pair, res in ((run.get("results") or {}).get(test) or {}).items():
            for name, _figure in _benchstats.series_of(res):
                if (pair, name) not in out:
                    out.append((pair, name))
    # a pair that failed in one run and has figures in another shows its figures (their cells say "-")
    return [(p, n) for p, n in out if n or not any(q == p and m for q, m in out)]


def _value(run: Dict[str, Any], test: str, pair: str, key: str, series: str = "") -> Optional[float]:
    res = _result(run, test, pair, series)
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
        for pair, series in subjects(runs, test):
            results = [_result(r, test, pair, series) for r in runs]
            for key, title, unit, higher in METRICS[test]:
                values = [_value(r, test, pair, key, series) for r in runs]
                if key == "mean" and all(v is None for v in values):
                    continue
                changes = [_benchstats.percent_change(values[0], v) for v in values[1:]]
                sig = [_benchsig.compare_figure(results[0], res, key, higher) if c is not None
                       else {"interval": None, "verdict": None} for res, c in zip(results[1:], changes)]
                rows.append({"test": test, "pair": pair, "series": series, "metric": title, "unit": unit, "values": values,
                             "spread": [_benchsig.spread_text(res, key) if v is not None else []
                                        for res, v in zip(results, values)],
                             "changes": changes, "intervals": [x["interval"] for x in sig],
                             "verdicts": [x["verdict"] for x in sig],
                             "better": [{"better": True, "worse": False}.get(x["verdict"]) for x in sig]})
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


def _fmt_value(v: Optional[float], spread: Sequence[str]) -> str:
    return _fmt(v) if v is None or not spread else "%s (%s)" % (_fmt(v), ", ".join(spread))


def _fmt_change(c: Optional[float], verdict: Optional[str], interval: Optional[Dict[str, Any]] = None,
                base: Optional[float] = None) -> str:
    """"-12.3% [-15.0%, -9.1%] better", "+0.6% [-3.1%, +4.2%] no significant change", "+71.1% not tested"."""
    if c is None:
        return "-"
    text = "%+.1f%%" % c
    if interval is not None and base:
        text += " [%+.1f%%, %+.1f%%]" % (100.0 * interval["low"] / base, 100.0 * interval["high"] / base)
    return text + (" %s" % verdict if verdict else "")


def _view(table: Dict[str, Any], plots: Optional[Dict[str, str]]) -> Dict[str, Any]:
    """What the templates show: per run its row, per test its title, rows (pair, metric, formatted values and
    changes with their verdicts) and plot file; the errors of the runs."""
    sections = []
    for test in table["tests"]:
        rows = [{"pair": "%s %s" % (row["pair"], row["series"]) if row["series"] else row["pair"],
                 "metric": "%s (%s)" % (row["metric"], row["unit"]) if row["unit"] else row["metric"],
                 "cells": [_fmt_value(v, s) for v, s in zip(row["values"], row["spread"])],
                 "changes": [{"text": _fmt_change(c, v, i, row["values"][0]), "verdict": v}
                             for c, v, i in zip(row["changes"], row["verdicts"], row["intervals"])]}
                for row in table["rows"] if row["test"] == test]
        sections.append({"title": TITLES.get(test, test), "rows": rows,
                         "plot": os.path.basename(plots[test]) if plots and test in plots else None})
    return {"runs": table["runs"], "how": HOW, "sections": sections, "errors": table["errors"],
            "run_rows": [{"name": n, "run_id": rid, "started": started, "profiles": prof} for n, rid, started, prof
                         in zip(table["runs"], table["run_ids"], table["started"], table["profiles"])]}


def to_markdown(table: Dict[str, Any], plots: Optional[Dict[str, str]] = None) -> str:
    """templates/bench-report.md.j2: every name and text from a run (labels, ids, pairs, profiles, errors) made
    inert as the HTML report escapes it (``_render.md_text``)."""
    return _render.render("bench-report.md.j2", **_view(table, plots))


def to_html(table: Dict[str, Any], plots: Optional[Dict[str, str]] = None) -> str:
    """templates/bench-report.html.j2, autoescaped."""
    return _render.render("bench-report.html.j2", **_view(table, plots))


# ---------------------------------------------------------------------- plots
NO_MATPLOTLIB = ("matplotlib is not installed on the controller, so the report has tables and no plots "
                 "(pip install matplotlib in the controller's Python or execution environment, or Debian's "
                 "python3-matplotlib)")


class NoPlots(RuntimeError):
    """matplotlib cannot be imported: the report degrades to tables only (:func:`report`)."""


def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise NoPlots(NO_MATPLOTLIB)
    return plt


def _nines(p: float, n: Optional[int]) -> float:
    """The x position of percentile ``p`` on a "nines" axis: -log10(1 - p/100), so p50, p90, p99, p99.9 are evenly
    spaced (0.3, 1, 2, 3) and the tail gets as much room as the body; the maximum sits at the 1 - 1/n level."""
    rest = 1.0 - p / 100.0
    floor = 1.0 / n if isinstance(n, int) and n > 0 else 1e-4
    return -math.log10(max(rest, floor))


def series_styles(series: Sequence[Tuple[int, Tuple[str, str]]]) -> List[Dict[str, Any]]:
    """Per plotted series (run index, (pair, figure)) its style: {} (matplotlib's colour cycle) when every pair has one
    figure; else the same colour for the same pair and figure in every run (index into tab10, or tab20 above ten)
    and one line style per run."""
    if not any(key[1] for _ri, key in series):
        return [{} for _s in series]
    keys: List[Tuple[str, str]] = []
    for _ri, key in series:
        if key not in keys:
            keys.append(key)
    cmap = "tab10" if len(keys) <= 10 else "tab20"
    return [{"colormap": cmap, "color": keys.index(key) % 20, "linestyle": ("-", "--", ":", "-.")[ri % 4]}
            for ri, key in series]


def plot_latency_percentiles(runs: Sequence[Dict[str, Any]], names: Sequence[str], test: str, path: str) -> Optional[str]:
    """Latency by percentile of every run and pair of a latency test, on a "nines" x axis (p50 ... p99.9 evenly
    spaced, the tail readable) and a log latency axis; p50/p90/p99/p99.9 marked with their values in the legend
    (no labels on the plot to collide).  A test with several figures per pair (mpi: op and message size) gets one
    colour per pair and figure and one line style per run, the legend beside the plot.  None when no run has a CDF."""
    series = []
    for ri, (name, run) in enumerate(zip(names, runs)):
        for pair, res in sorted(((run.get("results") or {}).get(test) or {}).items()):
            for figure, stats in _benchstats.series_of(res) if isinstance(res, dict) else []:
                if isinstance(stats, dict) and stats.get("cdf"):
                    series.append((" ".join(w for w in (name, pair, figure) if w), stats, ri, (pair, figure)))
    if not series:
        return None
    plt = _pyplot()
    styles = series_styles([(ri, key) for _l, _s, ri, key in series])
    many = bool(styles[0])
    fig, ax = plt.subplots(figsize=(13, 6) if many else (9, 5.5), dpi=100)
    top = 0.0
    for (label, res, _ri, _key), style in zip(series, styles):
        if style:
            style = dict(style, color=plt.get_cmap(style.pop("colormap"))(style.pop("color")))
        n = res.get("count")
        points = sorted((float(p), float(v)) for p, v in res["cdf"] if float(p) >= 1.0)
        xs = [_nines(p, n) for p, _v in points]
        top = max([top] + xs)
        marks = sorted(((float(k[1:]), v) for k, v in (res.get("percentiles") or {}).items()), key=lambda kv: kv[0])
        legend = "%s (n=%s): %s" % (label, n if isinstance(n, int) else "?",
                                    ", ".join("p%g %s" % (p, _fmt(v)) for p, v in marks))
        line, = ax.plot(xs, [v for _p, v in points], label=legend, drawstyle="steps-post", linewidth=1.6, **style)
        ax.plot([_nines(p, n) for p, _v in marks], [v for _p, v in marks], linestyle="none", marker="o",
                markersize=5, color=line.get_color())
    ticks = [p for p in (0.0, 50.0, 90.0, 99.0, 99.9, 99.99, 99.999) if _nines(p, None if p < 99.99 else 10 ** 6) <= top + 1e-9]
    ax.set_xticks([_nines(p, 10 ** 6) for p in ticks])
    ax.set_xticklabels(["p%g" % p for p in ticks])
    ax.set_xlim(0, max(top, 3.0) * 1.02)
    ax.set_yscale("log")
    ax.set_xlabel("percentile (\"nines\" scale: the tail spread out; the last point is the maximum)")
    ax.set_ylabel("latency (us, log scale)")
    ax.set_title(TITLES.get(test, test))
    ax.grid(True, which="both", alpha=0.3)
    if many:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    else:
        ax.legend(fontsize=7.5, loc="upper left")
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
    """Load the runs (NotARun names a file that is not one), write the tables and plots; what was written.
    Without matplotlib the report is the tables alone and ``notes`` says so in one line."""
    runs = [_benchload.load_run(p) for p in paths]
    table = compare(runs)
    os.makedirs(out_dir, exist_ok=True)
    written: Dict[str, str] = {}
    pngs: Dict[str, str] = {}
    notes: List[str] = []
    try:
        for test in table["tests"] if plots else []:
            target = os.path.join(out_dir, "bench-%s.png" % test)
            if test in _benchopts.LATENCY_TESTS:
                made = plot_latency_percentiles(runs, table["runs"], test, target)
            else:
                made = plot_bandwidth(runs, table["runs"], test, target)
            if made:
                pngs[test] = made
    except NoPlots as e:
        notes.append(str(e))
    for fmt, render in (("markdown", to_markdown), ("html", to_html)):
        written[fmt] = os.path.join(out_dir, NAMES[fmt])
        _findings_report.write_text(written[fmt], render(table, pngs))
    return {"table": table, "files": written, "plots": pngs, "notes": notes}


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_report", description=(
        "Compare two or more stored hpcnet.rdma benchmark runs (the first is the baseline): Markdown and "
        "HTML tables and PNG plots (latency by percentile, bandwidth bars)."))
    parser.add_argument("runs", nargs="+", help="stored run files (JSON, schema %s)" % _benchrun.SCHEMA)
    parser.add_argument("-o", "--output", default="rdma-bench-report", help="directory for the report")
    parser.add_argument("--no-plots", action="store_true", help="tables only (no matplotlib needed)")
    args = parser.parse_args(argv)
    if len(args.runs) < 2:
        parser.error("give two or more stored runs (the first is the baseline)")
    try:
        out = report(args.runs, args.output, plots=not args.no_plots)
    except (_benchload.NotARun, RuntimeError, ValueError, OSError) as e:
        print("bench_report: %s" % e, file=sys.stderr)
        return 2
    for note in out["notes"]:
        print("bench_report: %s" % note, file=sys.stderr)
    for path in list(out["files"].values()) + list(out["plots"].values()):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
