# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Is a before/after change more than noise?  95 % confidence intervals of the difference (after - before),
pure Python, from what a stored run keeps (controller only).

Two methods, named in every row of the report:

* ``welch-t`` - the difference of two **means**: Welch's t-interval from each run's mean, standard deviation and
  sample count (latency samples; iperf3's one-second interval throughputs).  iperf3's intervals are not
  independent (one TCP flow), so its interval is narrower than the truth: read it as a lower bound on the noise.
* ``order-statistics`` - the difference of two **percentiles** (p50 ... p99.9): a distribution-free interval of
  each run's percentile from its order statistics (the ranks n*p -/+ z*sqrt(n*p*(1-p)), binomial normal
  approximation), read off the run's stored CDF grid rounding outwards, each at 97.5 % so that the difference
  interval [lo_after - hi_before, hi_after - lo_before] holds with at least 95 % (Bonferroni).  Conservative by
  construction: the tail percentiles of a short run get wide intervals, as they should.

A figure a run measured once (ib_write_bw's average, iperf3's retransmit count) has no spread: no interval, and
the report says "not tested" instead of calling its change better or worse.
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

CONFIDENCE = 0.95
# two-sided z for 95 % and for the 97.5 % each side of a Bonferroni pair
Z_95 = 1.959964
Z_975 = 2.241403
# t quantile 0.975 for df 1..30 (above: the Cornish-Fisher expansion around Z_95, within 0.002 of the table)
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)
METHODS = {
    "welch-t": "Welch t-interval of the difference of means",
    "order-statistics": "distribution-free interval of the difference of percentiles (order statistics, >= 95 %)",
}


def t975(df: float) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (df >= 1)."""
    if df < 1:
        raise ValueError("degrees of freedom %r < 1" % df)
    if df <= 30 and float(df).is_integer():
        return _T975[int(df) - 1]
    if df < 30:
        lo, hi = int(math.floor(df)), int(math.ceil(df))
        return _T975[lo - 1] + (_T975[hi - 1] - _T975[lo - 1]) * (df - lo)
    z = Z_95
    return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)


def mean_sd(values: Sequence[float]) -> Tuple[float, float, int]:
    """Mean, sample standard deviation (n - 1) and count."""
    n = len(values)
    if n == 0:
        raise ValueError("no samples")
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return mean, sd, n


def welch(before: Tuple[float, float, int], after: Tuple[float, float, int]) -> Optional[Dict[str, Any]]:
    """95 % Welch interval of mean_after - mean_before from (mean, sample sd, n) of each; None with n < 2."""
    (m1, s1, n1), (m2, s2, n2) = before, after
    if n1 < 2 or n2 < 2:
        return None
    v1, v2 = s1 * s1 / n1, s2 * s2 / n2
    diff = m2 - m1
    if v1 + v2 == 0:
        return {"difference": diff, "low": diff, "high": diff, "method": "welch-t", "df": float(n1 + n2 - 2)}
    df = (v1 + v2) ** 2 / ((v1 * v1 / (n1 - 1) if v1 else 0.0) + (v2 * v2 / (n2 - 1) if v2 else 0.0))
    half = t975(df) * math.sqrt(v1 + v2)
    return {"difference": diff, "low": diff - half, "high": diff + half, "method": "welch-t", "df": round(df, 1)}


def _grid_value(cdf: Sequence[Sequence[float]], level: float, outwards: str) -> float:
    """The CDF grid's value at ``level`` percent, rounding to the grid point below ("down") or above ("up")."""
    points = sorted((float(p), float(v)) for p, v in cdf)
    if outwards == "down":
        below = [v for p, v in points if p <= level + 1e-9]
        return below[-1] if below else points[0][1]
    above = [v for p, v in points if p >= level - 1e-9]
    return above[0] if above else points[-1][1]


def percentile_interval(cdf: Sequence[Sequence[float]], n: int, p: float, z: float = Z_975) -> Optional[Tuple[float, float]]:
    """Distribution-free interval of the ``p`` percentile of a run of ``n`` samples, from its stored CDF grid."""
    if not cdf or not isinstance(n, int) or n < 2:
        return None
    q = p / 100.0
    half = z * math.sqrt(n * q * (1 - q))
    lo_rank = max(1, int(math.floor(n * q - half)))
    hi_rank = min(n, int(math.ceil(n * q + half)) + 1)
    return _grid_value(cdf, 100.0 * lo_rank / n, "down"), _grid_value(cdf, 100.0 * hi_rank / n, "up")


def percentile_difference(before: Dict[str, Any], after: Dict[str, Any], p: float) -> Optional[Dict[str, Any]]:
    """>= 95 % interval of percentile_after - percentile_before from the stored results (cdf, count)."""
    a = percentile_interval(before.get("cdf") or [], before.get("count"), p)
    b = percentile_interval(after.get("cdf") or [], after.get("count"), p)
    if a is None or b is None:
        return None
    key = "p%s" % ("%g" % p)
    diff = (after.get("percentiles") or {}).get(key, 0.0) - (before.get("percentiles") or {}).get(key, 0.0)
    return {"difference": diff, "low": b[0] - a[1], "high": b[1] - a[0], "method": "order-statistics"}


def verdict(interval: Optional[Dict[str, Any]], higher_is_better: bool) -> str:
    """better / worse only when the interval excludes zero; "no significant change" when it crosses it;
    "not tested" without an interval (one measurement per run)."""
    if interval is None:
        return "not tested"
    if interval["low"] <= 0 <= interval["high"]:
        return "no significant change"
    return "better" if (interval["low"] > 0) == higher_is_better else "worse"


def iqr(res: Dict[str, Any]) -> Optional[Tuple[float, float]]:
    """p25 and p75 of a stored latency result (its CDF grid), the spread shown beside a percentile."""
    cdf = res.get("cdf")
    if not cdf:
        return None
    return _grid_value(cdf, 25.0, "down"), _grid_value(cdf, 75.0, "up")


def sample_stats(res: Dict[str, Any], key: str) -> Optional[Tuple[float, float, int]]:
    """(mean, sample sd, n) behind a stored figure, when the run kept its samples: latency (count, mean, stdev
    over n - rescaled to n - 1) or iperf3's intervals_gbits; None for a figure measured once."""
    if key == "gbits_received" and isinstance(res.get("intervals_gbits"), list) and len(res["intervals_gbits"]) >= 2:
        return mean_sd([float(v) for v in res["intervals_gbits"]])
    if key.startswith("p") or key == "mean":
        n, mean, sd = res.get("count"), res.get("mean"), res.get("stdev")
        if isinstance(n, int) and n >= 2 and isinstance(mean, (int, float)) and isinstance(sd, (int, float)):
            return float(mean), float(sd) * math.sqrt(n / (n - 1.0)), n
    return None


def compare_figure(before: Dict[str, Any], after: Dict[str, Any], key: str, higher_is_better: bool) -> Dict[str, Any]:
    """The interval and verdict of one figure's change: percentiles by order statistics, means and bandwidth
    by Welch, a figure measured once: no interval."""
    interval = None
    if key.startswith("p") and key[1:2].isdigit():
        interval = percentile_difference(before, after, float(key[1:]))
    else:
        a, b = sample_stats(before, key), sample_stats(after, key)
        if a and b:
            interval = welch(a, b)
    return {"interval": interval, "verdict": verdict(interval, higher_is_better)}


def spread_text(res: Dict[str, Any], key: str) -> List[str]:
    """What the report shows beside a figure: its sample count and its spread."""
    if not res or "error" in res:
        return []
    if key.startswith("p") and key[1:2].isdigit() or key == "mean":
        out = ["n=%s" % res["count"]] if isinstance(res.get("count"), int) else ["n=?"]
        if key == "mean" and isinstance(res.get("stdev"), (int, float)):
            out.append("sd %s" % _short(res["stdev"]))
        elif iqr(res):
            lo, hi = iqr(res)
            out.append("IQR %s-%s" % (_short(lo), _short(hi)))
        return out
    stats = sample_stats(res, key)
    if stats:
        return ["n=%d s" % stats[2], "sd %s" % _short(stats[1])]
    return ["n=1"]


def _short(v: float) -> str:
    return "%.3g" % v if abs(v) < 1000 else "%.0f" % v
