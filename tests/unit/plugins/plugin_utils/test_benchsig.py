# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Confidence intervals of before/after differences: known values, and by simulation - two runs drawn from the
same distribution are "no significant change" at least 95 % of the time, a real shift is found."""
from __future__ import annotations

import random

import pytest

from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchsig as sig
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchstats as bs


@pytest.mark.parametrize("df, t", [(1, 12.706), (2, 4.303), (10, 2.228), (30, 2.042), (40, 2.021), (60, 2.000),
                                   (120, 1.980), (1e6, 1.960), (10.5, 2.2145)])
def test_t975_against_the_table(df, t):
    assert sig.t975(df) == pytest.approx(t, abs=0.002)


def test_welch_known_example():
    # before 10 +- 2 (n 10), after 12 +- 3 (n 12): df from Welch-Satterthwaite 19.3, t 2.092
    out = sig.welch((10.0, 2.0, 10), (12.0, 3.0, 12))
    assert out["difference"] == 2.0 and out["df"] == pytest.approx(19.2, abs=0.2)
    half = 2.092 * ((4.0 / 10 + 9.0 / 12) ** 0.5)
    assert (out["low"], out["high"]) == (pytest.approx(2.0 - half, abs=0.01), pytest.approx(2.0 + half, abs=0.01))
    assert sig.welch((10.0, 2.0, 1), (12.0, 3.0, 12)) is None


@pytest.mark.parametrize("interval, higher, verdict", [
    ({"low": -1.0, "high": 2.0}, True, "no significant change"),
    ({"low": 0.5, "high": 2.0}, True, "better"),
    ({"low": 0.5, "high": 2.0}, False, "worse"),
    ({"low": -3.0, "high": -0.1}, False, "better"),
    (None, True, "not tested"),
])
def test_verdict(interval, higher, verdict):
    assert sig.verdict(interval, higher) == verdict


def runs(rng, n, shift=0.0):
    """Latency-like samples: a lognormal body with a heavy tail."""
    return [rng.lognormvariate(2.0, 0.4) + shift + (rng.expovariate(0.02) if rng.random() < 0.02 else 0.0)
            for _i in range(n)]


@pytest.mark.parametrize("key", ["mean", "p50", "p90", "p99"])
def test_same_distribution_is_no_significant_change_at_least_95_percent(key):
    rng = random.Random(29)
    trials, calls = 150, 0
    for _trial in range(trials):
        a, b = bs.summarize(runs(rng, 800)), bs.summarize(runs(rng, 800))
        calls += sig.compare_figure(a, b, key, False)["verdict"] != "no significant change"
    assert calls / float(trials) <= 0.05, (key, calls)


@pytest.mark.parametrize("key", ["mean", "p50", "p90"])
def test_a_real_shift_is_found(key):
    rng = random.Random(7)
    a, b = bs.summarize(runs(rng, 2000)), bs.summarize(runs(rng, 2000, shift=-2.5))
    out = sig.compare_figure(a, b, key, False)
    assert out["verdict"] == "better" and out["interval"]["high"] < 0


def test_percentile_interval_of_a_short_run_is_wide_and_of_a_long_one_narrow():
    short = bs.summarize(list(range(1, 101)))
    long_ = bs.summarize(list(range(1, 100001)))
    lo, hi = sig.percentile_interval(short["cdf"], short["count"], 99.0)
    assert (lo, hi) == (96, 100)
    lo, hi = sig.percentile_interval(long_["cdf"], long_["count"], 50.0)
    assert 49000 <= lo < 50000 < hi <= 51000


def test_a_figure_measured_once_is_not_tested():
    out = sig.compare_figure({"gbits_average": 2.0}, {"gbits_average": 3.0}, "gbits_average", True)
    assert out == {"interval": None, "verdict": "not tested"}
    assert sig.spread_text({"gbits_average": 2.0}, "gbits_average") == ["n=1"]
