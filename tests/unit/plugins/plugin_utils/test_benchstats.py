# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Percentiles from raw samples (nearest rank) and the parsers of iperf3, sockperf and perftest output."""
from __future__ import annotations

import os

import pytest

from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchstats as bs

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures")


def fixture(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as f:
        return f.read()


@pytest.mark.parametrize("samples, p, expected", [
    (list(range(1, 1001)), 50, 500),
    (list(range(1, 1001)), 90, 900),
    (list(range(1, 1001)), 99, 990),
    (list(range(1, 1001)), 99.9, 999),
    (list(range(1, 1001)), 100, 1000),
    (list(range(1, 1001)), 0, 1),
    (list(range(1, 11)), 99.9, 10),       # too few samples for the tail: the maximum
    (list(range(1, 11)), 50, 5),
    (list(range(1, 11)), 55, 6),
    ([7.5], 99, 7.5),
    ([1, 2, 3], 33.3333333333, 1),       # float noise does not push the rank up
])
def test_nearest_rank_percentile(samples, p, expected):
    assert bs.percentile(sorted(samples), p) == expected


@pytest.mark.parametrize("samples, p, message", [
    ([], 50, "no samples"),
    ([1.0], 101, "outside 0..100"),
    ([1.0], -1, "outside 0..100"),
])
def test_percentile_refuses(samples, p, message):
    with pytest.raises(ValueError, match=message):
        bs.percentile(samples, p)


@pytest.mark.parametrize("p, key", [(50.0, "p50"), (90.0, "p90"), (99.0, "p99"), (99.9, "p99.9"), (99.99, "p99.99")])
def test_percentile_keys(p, key):
    assert bs.pkey(p) == key


def test_summarize_unsorted_samples():
    out = bs.summarize([5, 1, 4, 2, 3, 10, 9, 8, 7, 6])
    assert (out["count"], out["min"], out["max"], out["mean"]) == (10, 1.0, 10.0, 5.5)
    assert out["percentiles"] == {"p50": 5.0, "p90": 9.0, "p99": 10.0, "p99.9": 10.0}
    assert out["cdf"][0] == [0.0, 1.0] and out["cdf"][-1] == [100.0, 10.0]
    assert [p for p, _v in out["cdf"]] == list(bs.CDF_GRID)
    assert all(a[1] <= b[1] for a, b in zip(out["cdf"], out["cdf"][1:]))


def test_iperf3_captured():
    out = bs.parse_iperf3(fixture("iperf3-J.loopback.captured.json"))
    assert out["gbits_received"] == pytest.approx(15.362135, abs=1e-5)
    assert out["gbits_sent"] == pytest.approx(15.391519, abs=1e-5)
    assert (out["retransmits"], out["streams"], len(out["intervals_gbits"])) == (5, 2, 1)


@pytest.mark.parametrize("text, message", [
    (fixture("iperf3-J.refused.captured.json"), "iperf3: unable to connect to server: Connection refused"),
    ("iperf3: error - unable to connect", "iperf3 printed no JSON: iperf3: error - unable to connect"),
    ("[]", "no JSON object"),
    ('{"end": {}}', "no end.sum_received.bits_per_second"),
    ("[" * 100000, "iperf3 printed JSON nested too deeply to read"),
])
def test_iperf3_errors(text, message):
    assert message in bs.parse_iperf3(text)["error"]


def test_sockperf_summary_captured_with_colour_escapes():
    out = bs.parse_sockperf_summary(fixture("sockperf-ping-pong.captured.txt"))
    assert out["percentiles"]["p50"] == 28.412
    assert out["percentiles"]["p99"] == 168.534
    assert out["percentiles"]["p99.9"] == 741.248
    assert out["percentiles"]["p90"] == 38.952
    assert (out["max"], out["min"], out["mean"]) == (1983.569, 6.724, 34.424)


def test_sockperf_full_log_captured():
    samples = bs.parse_sockperf_full_log(fixture("sockperf-ping-pong.full-log.captured.csv"))
    assert len(samples) == 1099                 # sockperf: "Total 1099 observations"
    assert samples[:3] == [29.524, 28.933, 31.331]
    # the log's column is its own rounding of the same times as the summary's (6.724 / 1983.569)
    assert (min(samples), max(samples)) == (6.725, 1983.569)


def test_sockperf_percentiles_from_raw_samples_agree_with_sockperf():
    out = bs.sockperf_result(fixture("sockperf-ping-pong.captured.txt"),
                             fixture("sockperf-ping-pong.full-log.captured.csv"))
    assert out["source"].startswith("raw samples")
    assert out["count"] == 1099
    # sockperf's own percentiles are over the same observations (its log rounds the times differently)
    for key in ("p50", "p90", "p99", "p99.9"):
        assert out["percentiles"][key] == pytest.approx(out["tool_percentiles"][key], rel=0.01), key
    assert out["percentiles"] == {"p50": 28.412, "p90": 38.967, "p99": 169.436, "p99.9": 741.248}


@pytest.mark.parametrize("stdout, log, expected", [
    (fixture("sockperf-ping-pong.captured.txt"), None, ("sockperf summary (no --full-log samples)", 28.412)),
    (fixture("sockperf-ping-pong.captured.txt"), "packet, txTime(sec), rxTime(sec), latency(usec)\n",
     ("sockperf summary (no --full-log samples)", 28.412)),
    ("sockperf: ERROR: connect failed", None, ("error", None)),
])
def test_sockperf_fallbacks(stdout, log, expected):
    out = bs.sockperf_result(stdout, log)
    if expected[0] == "error":
        assert out["error"].startswith("sockperf printed no percentiles: sockperf: ERROR: connect failed")
    else:
        assert (out["source"], out["percentiles"]["p50"]) == expected


def test_perftest_bw():
    out = bs.parse_perftest_bw(fixture("ib_write_bw.rxe.report_gbits.txt"))
    assert out == {"bytes": 65536, "iterations": 23580, "gbits_peak": 0.0, "gbits_average": 2.47, "mpps": 0.004714}


@pytest.mark.parametrize("text, expected", [
    (" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
     " 65536      1000             1000.00            500.00               0.008\n", 4.0),
])
def test_perftest_bw_megabytes(text, expected):
    assert bs.parse_perftest_bw(text)["gbits_average"] == expected


@pytest.mark.parametrize("text, message", [
    (" Couldn't connect to 10.77.0.2:18502\nUnable to init the socket connection\n",
     "Couldn't connect to 10.77.0.2:18502 Unable to init the socket connection"),
    ("", "no output"),
    (" #bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]\n----\n", "no result line after the header"),
])
def test_perftest_bw_errors(text, message):
    assert bs.parse_perftest_bw(text)["error"].startswith(message)


def test_perftest_bw_without_a_clock_is_an_error_not_a_zero_reading():
    # A real run whose transfer completed while perftest could not measure its CPU clock (QEMU TCG lab VMs).
    out = bs.parse_perftest_bw(fixture("ib_write_bw.rxe.no-clock.server.captured.txt"))
    assert out["clock"] is True and "gbits_average" not in out
    assert out["error"].startswith("200 iterations of 65536 bytes ran but perftest reported 0 Gbit/s")
    said = bs.parse_perftest_bw(fixture("ib_write_bw.rxe.no-clock.server.captured.txt")
                                + "Correlation coefficient r^2: 0.43 < 0.9\n")
    assert "(Correlation coefficient r^2: 0.43 < 0.9)" in said["error"]


def test_perftest_lat_raw_samples():
    out = bs.parse_perftest_lat(fixture("ib_send_lat.rxe.H.txt"))
    assert out["count"] == 1000 and out["source"] == "raw samples (perftest -H)"
    assert out["percentiles"] == {"p50": 21.23, "p90": 24.38, "p99": 24.95, "p99.9": 88.0}
    assert out["max"] == 120.3
    assert out["tool_summary"]["p99.9"] == 88.0 and out["tool_summary"]["iterations"] == 1001


@pytest.mark.parametrize("text, message", [
    ("#, cycles\n1, 2000\n2, 2100\n", "samples are in cycles, not usec"),
    (" #bytes #iterations t_min[usec]\n 2 1000 1.0 2.0 1.5 1.5 0.1 1.9 2.0\n", "no raw samples (-H)"),
    ("Failed to modify QP to RTR\n", "no raw samples (-H) in the output: Failed to modify QP to RTR"),
])
def test_perftest_lat_errors(text, message):
    assert bs.parse_perftest_lat(text)["error"].startswith(message)


@pytest.mark.parametrize("before, after, change, factor", [
    (10.0, 15.0, 50.0, 1.5),
    (20.0, 10.0, -50.0, 0.5),
    (0, 5.0, None, None),
    (None, 5.0, None, None),
    (5.0, None, None, None),
])
def test_change_and_ratio(before, after, change, factor):
    assert (bs.percent_change(before, after), bs.ratio(before, after)) == (change, factor)
