# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Benchmark statistics and the parsers of the benchmark tools' output (pure, no Ansible).

Runs on the controller: the role ``hpcnet.rdma.rdma_bench`` registers each client's stdout and the
action ``hpcnet.rdma.bench_run`` hands it here.  Every parser returns a dict; a tool's own failure
is ``{"error": "..."}`` (never an exception), so one failed pair does not hide the others.

Percentiles are **nearest-rank** on the raw samples (the value below which at least p % of the
samples lie, always one of the samples): p50/p90/p99/p99.9 of 1000 samples are samples 500, 900,
990 and 999 of the sorted list.  No interpolation, so a tail percentile is a latency that was
really seen.  Units: latency in microseconds, bandwidth in Gbit/s.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any, Dict, List, Optional, Sequence

PERCENTILES = (50.0, 90.0, 99.0, 99.9)
# The CDF stored with each run: every percent, then finer in the tail (enough to draw p99.9 and the max).
CDF_GRID = tuple([float(p) for p in range(0, 99)] + [99.0 + i / 10.0 for i in range(10)]
                 + [99.9 + i / 100.0 for i in range(10)] + [100.0])
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def pkey(p: float) -> str:
    """The key of a percentile in a stored run: 50.0 -> "p50", 99.9 -> "p99.9"."""
    return "p%s" % ("%g" % p)


def percentile(sorted_samples: Sequence[float], p: float) -> float:
    """Nearest-rank percentile of already sorted samples (0 < p <= 100; p 0 is the minimum)."""
    if not sorted_samples:
        raise ValueError("no samples")
    if not 0 <= p <= 100:
        raise ValueError("percentile %r is outside 0..100" % p)
    if p == 0:
        return sorted_samples[0]
    rank = int(math.ceil(round(p / 100.0 * len(sorted_samples), 9)))
    return sorted_samples[max(rank, 1) - 1]


def summarize(samples: Sequence[float], percentiles: Sequence[float] = PERCENTILES) -> Dict[str, Any]:
    """count, min, max, mean, stdev, the percentiles and the CDF grid of raw samples."""
    values = sorted(float(s) for s in samples)
    if not values:
        raise ValueError("no samples")
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / n
    out: Dict[str, Any] = {"count": n, "min": values[0], "max": values[-1], "mean": round(mean, 6),
                           "stdev": round(math.sqrt(var), 6)}
    out["percentiles"] = dict((pkey(p), percentile(values, p)) for p in percentiles)
    out["cdf"] = [[p, percentile(values, p)] for p in CDF_GRID]
    return out


# ---------------------------------------------------------------------- iperf3 -J
def parse_iperf3(text: str) -> Dict[str, Any]:
    """iperf3 -J: received and sent Gbit/s, retransmits, streams, the per-interval Gbit/s."""
    try:
        data = json.loads(text)
    except ValueError:
        return {"error": "iperf3 printed no JSON: %s" % _tail(text)}
    except RecursionError:
        return {"error": "iperf3 printed JSON nested too deeply to read: %s" % _tail(text)}
    if not isinstance(data, dict):
        return {"error": "iperf3 printed no JSON object"}
    if data.get("error"):
        return {"error": "iperf3: %s" % data["error"]}
    end = data.get("end") or {}
    sent, received = end.get("sum_sent") or {}, end.get("sum_received") or {}
    if "bits_per_second" not in received:
        return {"error": "iperf3 -J has no end.sum_received.bits_per_second"}
    start = (data.get("start") or {}).get("test_start") or {}
    intervals = [round(i["sum"]["bits_per_second"] / 1e9, 6) for i in data.get("intervals") or []
                 if isinstance(i, dict) and "bits_per_second" in (i.get("sum") or {})]
    return {"gbits_received": round(received["bits_per_second"] / 1e9, 6),
            "gbits_sent": round(sent.get("bits_per_second", 0.0) / 1e9, 6),
            "retransmits": sent.get("retransmits"), "seconds": round(received.get("seconds", 0.0), 3),
            "streams": start.get("num_streams"), "intervals_gbits": intervals}


# ---------------------------------------------------------------------- sockperf ping-pong
_SP_PCT = re.compile(r"--->\s+percentile\s+([\d.]+)\s*=\s*([\d.]+)")
_SP_MINMAX = re.compile(r"--->\s+<(MAX|MIN)>\s+observation\s*=\s*([\d.]+)")
_SP_AVG = re.compile(r"avg-latency=([\d.]+)")


def parse_sockperf_summary(text: str) -> Dict[str, Any]:
    """The percentiles sockperf prints itself (usec, half the round trip), keyed like ours (p50, p99.9...)."""
    text = _ANSI.sub("", text)
    pcts = dict((pkey(float(p)), float(v)) for p, v in _SP_PCT.findall(text))
    if not pcts:
        return {"error": "sockperf printed no percentiles: %s" % _tail(text)}
    out: Dict[str, Any] = {"percentiles": pcts}
    for which, value in _SP_MINMAX.findall(text):
        out[which.lower()] = float(value)
    avg = _SP_AVG.search(text)
    if avg:
        out["mean"] = float(avg.group(1))
    return out


def parse_sockperf_full_log(text: str) -> List[float]:
    """The latency column (usec) of every packet of ``sockperf --full-log`` (CSV after its header line)."""
    samples: List[float] = []
    seen_header = False
    for line in text.splitlines():
        if line.startswith("packet,") and "latency" in line:
            seen_header = True
            continue
        if not seen_header:
            continue
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != 4:
            continue
        try:
            samples.append(float(fields[3]))
        except ValueError:
            continue
    return samples


def sockperf_result(stdout: str, full_log: Optional[str]) -> Dict[str, Any]:
    """Percentiles from the raw samples of --full-log when there are any, else sockperf's own."""
    summary = parse_sockperf_summary(stdout)
    samples = parse_sockperf_full_log(full_log) if full_log else []
    if samples:
        out = summarize(samples)
        out["source"] = "raw samples (sockperf --full-log)"
        if "percentiles" in summary:
            out["tool_percentiles"] = summary["percentiles"]
        return out
    if "error" in summary:
        return summary
    summary["source"] = "sockperf summary (no --full-log samples)"
    return summary


# ---------------------------------------------------------------------- perftest
def _numeric_rows(text: str) -> List[List[float]]:
    rows = []
    for line in text.splitlines():
        fields = line.split()
        if not fields or "," in line:
            continue
        try:
            rows.append([float(f) for f in fields])
        except ValueError:
            continue
    return rows


def parse_perftest_bw(text: str) -> Dict[str, Any]:
    """ib_write_bw / ib_send_bw with --report_gbits: bytes, iterations, peak and average Gbit/s, Mpps."""
    if "BW average" not in text:
        return {"error": "%s" % _tail(text) or "no output"}
    header = [line for line in text.splitlines() if "BW average" in line][-1]
    unit = "Gb/sec" if "Gb/sec" in header else ("MB/sec" if "MB/sec" in header else None)
    rows = [r for r in _numeric_rows(text.split(header, 1)[1]) if len(r) >= 5]
    if not rows:
        return {"error": "no result line after the header: %s" % _tail(text)}
    size, iters, peak, avg, mpps = rows[-1][:5]
    scale = 1.0 if unit == "Gb/sec" else (8.0 / 1000.0 if unit == "MB/sec" else None)
    if scale is None:
        return {"error": "unknown bandwidth unit in %r" % header.strip()}
    if peak == 0 and avg == 0 and iters > 0:
        # perftest divides by its CPU clock, get_cpu_mhz(), which is 0 when its timing sample is too noisy
        # ("Correlation coefficient r^2: ... < 0.9", seen on emulated CPUs) - the transfer ran, nothing was measured
        # (linux-rdma/perftest src/get_clock.c, get_cpu_mhz and sample_get_cpu_mhz).
        said = re.search(r"Correlation coefficient r\^2: \S+ < \S+", text)
        return {"error": "%d iterations of %d bytes ran but perftest reported 0 Gbit/s: it could not measure its "
                         "CPU clock (%s), so this run measured nothing" % (
                             int(iters), int(size), said.group(0) if said else "get_cpu_mhz returned 0"),
                "clock": True}
    return {"bytes": int(size), "iterations": int(iters), "gbits_peak": round(peak * scale, 6),
            "gbits_average": round(avg * scale, 6), "mpps": mpps}


def parse_perftest_lat(text: str) -> Dict[str, Any]:
    """ib_send_lat / ib_write_lat with -H: every sample (usec) after ``#, usec`` and the summary line.

    Percentiles come from the raw samples; the summary perftest prints (t_min ... 99.9%) is kept as
    ``tool_summary`` for comparison.
    """
    samples: List[float] = []
    unit = None
    summary: Optional[List[float]] = None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("#,"):
            unit = s[2:].strip()
            continue
        if unit and re.match(r"^\d+,\s*[-+\d.eE]+$", s):
            samples.append(float(s.split(",")[1]))
            continue
        fields = s.split()
        if len(fields) >= 7:
            try:
                summary = [float(f) for f in fields]
            except ValueError:
                pass
    if unit and unit != "usec":
        return {"error": "samples are in %s, not usec (do not pass -C to the latency test)" % unit}
    if not samples:
        return {"error": "no raw samples (-H) in the output: %s" % _tail(text)}
    out = summarize(samples)
    out["source"] = "raw samples (perftest -H)"
    if summary:
        names = ("bytes", "iterations", "t_min", "t_max", "t_typical", "t_avg", "t_stdev", "p99", "p99.9")
        out["tool_summary"] = dict(zip(names, summary))
    return out


def _tail(text: Optional[str], limit: int = 300) -> str:
    text = " ".join(_ANSI.sub("", text or "").split())
    return text[-limit:]


def percent_change(before: Optional[float], after: Optional[float]) -> Optional[float]:
    """(after - before) / before in percent, None when either is missing or before is 0."""
    if before in (None, 0) or after is None:
        return None
    return round((after - before) / before * 100.0, 2)


def ratio(before: Optional[float], after: Optional[float]) -> Optional[float]:
    if before in (None, 0) or after is None:
        return None
    return round(after / before, 3)
