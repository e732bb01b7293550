# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The metrics collector (roles/rdma_metrics/files/hpcnet-rdma-metrics.py) run as its timer runs it, on a
fake /sys + /proc tree, with a published bench run holding a value that is not a number (issue 30).

One broken source must not hide the others: the value is left out, its source says so
(hpcnet_rdma_collector_source_success{source="bench"} 0), every other value is written, and the
.prom file of the previous run is replaced, never left stale.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "roles", "rdma_metrics", "files",
                      "hpcnet-rdma-metrics.py")
STALE = "# a textfile of the run before\nhpcnet_rdma_collector_success 1\n"


def _write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def test_a_non_numeric_bench_value_is_left_out_and_the_rest_is_written(work):
    root = os.path.join(work, "node")
    _write(root, "sys/class/infiniband/rxe0/ports/1/state", "4: ACTIVE\n")
    _write(root, "etc/hpcnet-rdma/profile.json", json.dumps({"name": "mpi", "digest": "sha256:abc"}))
    _write(root, "var/lib/hpcnet-rdma-bench/last.json", json.dumps({
        "schema": "hpcnet.rdma.bench/1", "run_id": "r1", "label": "mpi", "finished_at": "2026-12-04T15:00:00Z",
        "results": {"sockperf": {"n1->n2": {"percentiles": {"p50": "8.5us", "p99": 40.0}}},
                    "iperf3": {"n1->n2": {"gbits_received": 9.41}},
                    "ib_send_lat": {"n1->n2": {"error": "ib_send_lat killed by SIGSEGV (rc -11)", "attempts": 2}}}}))
    out = os.path.join(work, "textfile", "hpcnet_rdma.prom")
    _write(work, out, STALE)
    proc = subprocess.run([sys.executable, SCRIPT, "--root", root, "--output", out,
                           "--profile-file", "/etc/hpcnet-rdma/profile.json",
                           "--bench-file", "/var/lib/hpcnet-rdma-bench/last.json"],
                          capture_output=True, text=True, check=False, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "results.sockperf[n1->n2].percentiles.p50: '8.5us'" in proc.stderr
    with open(out) as f:
        lines = f.read().splitlines()
    for line in ['hpcnet_rdma_collector_source_success{source="bench"} 0', "hpcnet_rdma_collector_success 0",
                 'hpcnet_rdma_collector_source_success{source="ports"} 1',
                 'hpcnet_rdma_bench_latency_seconds{pair="n1->n2",quantile="0.99",test="sockperf"} 4e-05',
                 'hpcnet_rdma_bench_bandwidth_bytes_per_second{pair="n1->n2",test="iperf3"} 1176250000.0',
                 'hpcnet_rdma_bench_error{pair="n1->n2",signal="SIGSEGV",test="ib_send_lat"} 1',
                 'hpcnet_rdma_bench_attempts{pair="n1->n2",test="ib_send_lat"} 2',
                 'hpcnet_rdma_profile_info{digest="sha256:abc",profile="mpi"} 1',
                 'hpcnet_rdma_port_state{device="rxe0",netdev="",port="1",state="ACTIVE"} 4']:
        assert line in lines, line
    assert not [line for line in lines if 'quantile="0.5"' in line]
    assert sorted(os.listdir(os.path.dirname(out))) == ["hpcnet_rdma.prom"]
