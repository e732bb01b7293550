# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Benchmark statistics and the parsers of the benchmark tools' output (pure, no Ansible).

Parsers of iperf3 -J, sockperf, perftest and of the mpi test's program (roles/rdma_bench/files/
hpcnet-rdma-mpi-bench.py under mpirun: one JSON line of raw samples per op and message size, or mpirun's
failure named).
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
import signal
from typing import Any, Dict, List, Optional, Sequence, Tuple

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


# ---------------------------------------------------------------------- mpi (hpcnet-rdma-mpi-bench under mpirun)
MPI_SCHEMA = "hpcnet.rdma.mpi-bench/1"
MPI_OPS = ("pingpong", "allreduce")
_MPI_RANK_SIGNAL = re.compile(r"process rank (\d+) with PID \d+ on node (\S+) exited on signal (\d+)")
# UCX's own fatal or error line (on stdout or stderr): "... ud_ep.c:276  Fatal: UD endpoint ...: unhandled timeout
# error", "... select.c:549  UCX  ERROR   no auxiliary transport to ...: Unsupported operation"
_MPI_UCX = re.compile(r"\s(\w+\.c:\d+)\s+(?:Fatal:|UCX\s+ERROR)\s+(.+?)\s*$", re.M)
# mpirun's and ssh's own words for the failures the mpi test names (Open MPI 4.1, OpenSSH; captured in
# tests/unit/fixtures/mpirun.*.captured.stderr.txt), first match wins
_MPI_FAILURES = (
    (re.compile(r"^(ssh: .*|.*Permission denied \(.*|Host key verification failed.*)$", re.M),
     "mpirun could not start the remote rank over ssh (the pair's nodes must reach each other as this user, "
     "without a password): %s"),
    (re.compile(r"^.*ORTE was unable to reliably start one or more daemons.*$", re.M),
     "mpirun could not start the remote rank (ORTE daemon): %s"),
    (re.compile(r"^.*(PML ucx cannot be selected|No components were able to be opened in the pml framework).*$", re.M),
     "UCX cannot be used for MPI here (pml ucx found no usable device or transport; see /etc/ucx/ucx.conf, "
     "UCX_NET_DEVICES, ucx_info -d): %s"),
    (re.compile(r"^.*time limit for job execution has been reached.*$", re.M),
     "mpirun stopped the job at its time limit (rdma_bench_mpi_timeout): %s"),
    (re.compile(r"^.*No module named 'mpi4py'.*$", re.M),
     "mpi4py is not installed on a node of the pair (python3-mpi4py): %s"),
)


def mpi_rank_signal(text: str) -> Optional[Dict[str, Any]]:
    """The rank mpirun says a signal killed (``... process rank 1 with PID 0 on node vm2 exited on signal 11``):
    rank, node and the signal's name; None when none was."""
    m = _MPI_RANK_SIGNAL.search(text or "")
    if not m:
        return None
    try:
        name = signal.Signals(int(m.group(3))).name
    except ValueError:
        name = "signal %s" % m.group(3)
    return {"rank": int(m.group(1)), "node": m.group(2), "signal": name}


def mpi_failure(text: str, rc: Any) -> Dict[str, Any]:
    """A failed mpirun as one named error: a rank killed by a signal (``signal`` set, so the run retries it once;
    with UCX's own fatal line when it printed one), UCX's error, ssh, the ORTE daemon, pml ucx not selectable, the
    time limit, mpi4py missing; else its exit code and the tail of what it said."""
    killed = mpi_rank_signal(text)
    ucx = _MPI_UCX.search(text or "")
    said = "%s (%s)" % (" ".join(ucx.group(2).split()), ucx.group(1)) if ucx else None
    if killed:
        return {"error": "MPI rank %d on %s killed by %s (mpirun rc %s)%s"
                         % (killed["rank"], killed["node"], killed["signal"], rc, "; UCX said: " + said if said else ""),
                "signal": killed["signal"]}
    if said and not re.search(r"cannot be selected|No components were able", text or ""):
        return {"error": "UCX could not connect the ranks (see UCX_TLS, UCX_NET_DEVICES, ucx_info -d): " + said}
    for pattern, message in _MPI_FAILURES:
        m = pattern.search(text or "")
        if m:
            return {"error": message % " ".join(m.group(0).split())}
    return {"error": "mpirun rc %s: %s" % (rc, _tail(text) or "no output")}


def _mpi_series_problem(i: int, s: Any) -> Optional[str]:
    if not isinstance(s, dict):
        return "series[%d] is not an object" % i
    if s.get("op") not in MPI_OPS:
        return "series[%d].op %r is not one of %s" % (i, s.get("op"), ", ".join(MPI_OPS))
    size = s.get("bytes")
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        return "series[%d].bytes %r is not a positive integer" % (i, size)
    samples = s.get("samples")
    if not isinstance(samples, list) or not samples:
        return "series[%d] (%s %s B) has no samples" % (i, s["op"], size)
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
               for v in samples):
        return "series[%d] (%s %s B): a sample is not a non-negative number" % (i, s["op"], size)
    return None


def parse_mpi(text: str) -> Dict[str, Any]:
    """hpcnet-rdma-mpi-bench's JSON line (rank 0's stdout; whatever else mpirun prints is skipped): per op and
    message size the raw samples (usec) and their statistics (:func:`summarize`), in ``series``."""
    doc = None
    for line in (text or "").splitlines():
        s = line.strip()
        if s.startswith("{") and MPI_SCHEMA in s:
            try:
                doc = json.loads(s)
            except (ValueError, RecursionError):
                return {"error": "hpcnet-rdma-mpi-bench printed a line that is not JSON: %s" % _tail(s, 120)}
    if not isinstance(doc, dict) or doc.get("schema") != MPI_SCHEMA:
        return {"error": "no %s result in the output: %s" % (MPI_SCHEMA, _tail(text) or "no output")}
    if doc.get("unit") != "usec":
        return {"error": "samples are in %r, not usec" % (doc.get("unit"),)}
    series = doc.get("series")
    if not isinstance(series, list) or not series:
        return {"error": "the %s result has no series" % MPI_SCHEMA}
    out_series = []
    for i, s in enumerate(series):
        problem = _mpi_series_problem(i, s)
        if problem:
            return {"error": "the %s result: %s" % (MPI_SCHEMA, problem)}
        entry: Dict[str, Any] = {"op": s["op"], "bytes": s["bytes"]}
        entry.update(summarize(s["samples"]))
        entry["samples"] = [float(v) for v in s["samples"]]
        out_series.append(entry)
    mpi = doc.get("mpi") if isinstance(doc.get("mpi"), dict) else {}
    return {"source": "raw samples (hpcnet-rdma-mpi-bench: mpi4py ping-pong one-way latency, Allreduce)",
            "mpi": dict((k, str(mpi[k])) for k in ("library", "standard", "mpi4py") if k in mpi),
            "hosts": [str(h) for h in doc.get("hosts") or []] if isinstance(doc.get("hosts"), list) else [],
            "iterations": doc.get("iterations"), "warmup": doc.get("warmup"), "series": out_series}


def mpi_result(stdout: str, stderr: str, rc: Any) -> Dict[str, Any]:
    """mpirun's registered result: the parsed samples when it exited 0, else its failure named."""
    if rc == 0:
        return parse_mpi(stdout)
    return mpi_failure((stdout or "") + "\n" + (stderr or ""), rc)


def series_of(res: Dict[str, Any]) -> List[Tuple[str, Dict[str, Any]]]:
    """The figures of one pair's result as (name, result): ``[("", res)]`` for a test with one figure per pair, and
    for the mpi test one per op and message size (``("pingpong 8 B", its statistics)``), in the run's order."""
    series = res.get("series") if isinstance(res, dict) else None
    if not isinstance(series, list):
        return [("", res)]
    return [("%s %s B" % (s.get("op"), s.get("bytes")), s) for s in series if isinstance(s, dict)]


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
