#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: bench_report
short_description: Compare stored benchmark runs - before/after Markdown and HTML tables and PNG plots, on the controller
version_added: 0.2.0
author:
  - hpcnet.rdma contributors (@hpcnet)
description:
  - An action plugin; it runs on the controller only and touches no node.
  - Reads two or more runs that M(hpcnet.rdma.bench_run) stored (the role C(hpcnet.rdma.rdma_bench)); the first is
    the baseline. Writes C(bench-report.md) and C(bench-report.html) into O(output_dir) - per test, pair and metric
    (throughput, retransmits, bandwidth, mean, p50/p90/p99/p99.9) the value of every run with its sample count and
    spread, and each later run's change against the baseline with a 95% confidence interval of the difference
    (Welch t-interval for means and iperf3 throughput, a distribution-free order-statistics interval for
    percentiles). A change is called better or worse only when its interval excludes zero, "no significant
    change" when it crosses zero, and "not tested" for a figure measured once per run. With O(plots), one PNG per
    test - C(bench-TEST.png), latency by percentile on a "nines" axis (p50, p90, p99, p99.9 evenly spaced, the
    tail readable), or bandwidth bars per pair, one bar per run.
  - The C(mpi) test measures several figures per pair - ping-pong and Allreduce at each message size - so its rows
    and plot series are per pair, operation and size (C(vm1->vm2 pingpong 8 B)), each compared like a latency test.
  - A file that is not a stored run fails the task naming the file and what it lacks. With C(jsonschema) on the
    controller (requirements.txt), a run is also validated against the collection's C(schemas/bench-run.schema.json);
    without it only the fields the report reads are checked.
  - The same report from a shell on the controller - C(python3 -m
    ansible_collections.hpcnet.rdma.plugins.plugin_utils._benchreport BEFORE.json AFTER.json -o DIR).
requirements:
  - matplotlib on the controller for the plots (requirements.txt pins it); the tables need nothing but Jinja2, which
    ansible-core brings. Without matplotlib the report is the tables alone, with one warning saying so.
options:
  runs:
    description: Paths of the stored runs on the controller, the baseline first (two or more).
    type: list
    elements: path
    required: true
  output_dir:
    description: The directory the report is written to (created when missing).
    type: path
    default: rdma-bench-report
  plots:
    description:
      - Draw the PNG plots (needs matplotlib on the controller).
      - Where matplotlib cannot be imported (an execution environment without it), the report is written with
        its tables and no plots, and the task warns once, naming what to install.
    type: bool
    default: true
attributes:
  check_mode:
    details: Reads the runs and returns the table; writes no file.
seealso:
  - module: hpcnet.rdma.bench_run
extends_documentation_fragment:
  - hpcnet.rdma.attributes.controller
"""

EXAMPLES = r"""
- name: Untuned vs the mpi profile
  hpcnet.rdma.bench_report:
    runs:
      - rdma-bench-results/20261204T150000Z-untuned.json
      - rdma-bench-results/20261204T153000Z-mpi.json
    output_dir: rdma-bench-report
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
table:
  description: Run names, ids, profiles and one row per test, pair and metric with the values, their sample counts
    and spread, the changes, their 95% intervals (null without one) and verdicts (better, worse, no significant
    change, not tested; null where a value is missing). C(series) names the C(mpi) test's operation and message
    size of the row (C(pingpong 8 B)); it is empty for the other tests.
  returned: always
  type: dict
  sample: {"runs": ["untuned", "mpi"], "tests": ["iperf3"], "rows": [{"test": "iperf3", "pair": "vm1->vm2",
           "series": "", "metric": "throughput", "unit": "Gbit/s", "values": [9.1, 14.2], "spread": [["n=10 s", "sd 0.4"],
           ["n=10 s", "sd 0.5"]], "changes": [56.04], "intervals": [{"difference": 5.1, "low": 4.67, "high": 5.53,
           "method": "welch-t", "df": 17.1}], "verdicts": ["better"], "better": [true]}]}
files:
  description: The Markdown and HTML reports written (empty in check mode).
  returned: always
  type: dict
  sample: {"markdown": "rdma-bench-report/bench-report.md", "html": "rdma-bench-report/bench-report.html"}
plots:
  description: The PNG plot of each test (empty in check mode or without O(plots)).
  returned: always
  type: dict
  sample: {"sockperf": "rdma-bench-report/bench-sockperf.png"}
"""

ARGUMENT_SPEC = dict(
    runs=dict(type="list", elements="path", required=True),
    output_dir=dict(type="path", default="rdma-bench-report"),
    plots=dict(type="bool", default=True),
)
