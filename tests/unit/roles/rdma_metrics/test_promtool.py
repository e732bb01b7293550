# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Prometheus's own linter on what we ship: `promtool check metrics` on the collector's output for a realistic
node (mlx5 RoCE port with hw_counters, ethtool counters, IRQs, a profile, a stored bench run), `promtool check
rules` and `promtool test rules` on the alert rules.  promtool is required, never skipped: Debian's
`prometheus` package provides it (scripts/ospkgs.sh lists it in the base group, which the unit tier needs)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from .test_collector import TREE, collector, make_tree

HERE = os.path.dirname(os.path.abspath(__file__))
RULES = os.path.join(HERE, "..", "..", "..", "..", "roles", "rdma_metrics", "files", "hpcnet-rdma-alerts.yml")


def promtool(*args, stdin=None):
    exe = shutil.which("promtool") or ("/usr/bin/promtool" if os.path.exists("/usr/bin/promtool") else None)
    if exe is None:
        pytest.fail("promtool is not installed: install Debian's 'prometheus' package (apt-get install prometheus; "
                    "scripts/ospkgs.sh ensure base does it)")
    return subprocess.run([exe] + list(args), input=stdin, capture_output=True, text=True, timeout=120, check=False)


# A ConnectX-class RoCE node: two ports (one DOWN), the mlx5 hw_counters, driver counters, 4 queue IRQs.
NODE = dict(TREE)
NODE.update({
    "sys/class/infiniband/mlx5_0/ports/1/state": "4: ACTIVE\n",
    "sys/class/infiniband/mlx5_0/ports/1/phys_state": "5: LinkUp\n",
    "sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0": "ens1f0np0\n",
    "sys/class/infiniband/mlx5_1/ports/1/state": "1: DOWN\n",
    "sys/class/infiniband/mlx5_1/ports/1/phys_state": "3: Disabled\n",
    "sys/class/infiniband/mlx5_1/ports/1/gid_attrs/ndevs/0": "ens1f1np1\n",
})
for dev in ("mlx5_0", "mlx5_1"):
    for i, name in enumerate(("duplicate_request", "implied_nak_seq_err", "lifespan", "local_ack_timeout_err",
                              "np_cnp_sent", "np_ecn_marked_roce_packets", "out_of_buffer", "out_of_sequence",
                              "packet_seq_err", "rnr_nak_retry_err", "rp_cnp_handled", "rp_cnp_ignored",
                              "rx_atomic_requests", "rx_read_requests", "rx_write_requests")):
        NODE["sys/class/infiniband/%s/ports/1/hw_counters/%s" % (dev, name)] = "%d\n" % (i * 7)
NODE["var/lib/hpcnet-rdma-bench/last.json"] = json.dumps({
    "schema": "hpcnet.rdma.bench/1", "run_id": "r1", "label": "mpi", "finished_at": "2026-12-04T15:00:00Z",
    "results": {"ib_send_lat": {"n1->n2": {"count": 1000, "mean": 2.1, "stdev": 0.3,
                                           "percentiles": {"p50": 2.0, "p90": 2.4, "p99": 3.9, "p99.9": 11.2}}},
                "sockperf": {"n1->n2": {"percentiles": {"p50": 8.5, "p99": 40.0}}},
                "ib_write_bw": {"n1->n2": {"gbits_average": 97.3}},
                "iperf3": {"n1->n2": {"gbits_received": 38.2}, "n2->n1": {"error": "killed by SIGSEGV", "attempts": 2}}}})


def ethtool(ifname):
    return {"rx_discards_phy": 12, "tx_discards_phy": 0, "rx_pause_ctrl_phy": 5, "rx_prio3_pause": 44,
            "rx_out_of_buffer": 3, "rx_crc_errors_phy": 0, "rx_bytes": 1 << 40} if ifname.startswith("ens") else {}


@pytest.fixture
def text(tmp_path):
    return collector.collect(make_tree(tmp_path, NODE), [], ethtool=ethtool)


def test_promtool_check_metrics_is_clean(text):
    assert 'hpcnet_rdma_port_state{device="mlx5_1",netdev="ens1f1np1",port="1",state="DOWN"} 1' in text
    assert "hpcnet_rdma_bench_latency_seconds_count" in text and "hpcnet_rdma_netdev_ethtool_total" in text
    proc = promtool("check", "metrics", stdin=text)
    assert (proc.returncode, proc.stdout + proc.stderr) == (0, ""), text


def test_promtool_sees_the_problems_it_is_meant_to_catch():
    """The check can fail: the old output's names are what promtool rejects."""
    bad = ("# HELP hpcnet_rdma_bench_latency_microseconds x\n# TYPE hpcnet_rdma_bench_latency_microseconds gauge\n"
           'hpcnet_rdma_bench_latency_microseconds{quantile="0.5"} 8.5\n')
    proc = promtool("check", "metrics", stdin=bad)
    assert proc.returncode != 0 and 'should not have "quantile" label' in proc.stdout + proc.stderr


def test_alert_rules_pass_promtool_check_and_their_unit_tests():
    check = promtool("check", "rules", RULES)
    assert check.returncode == 0, check.stdout + check.stderr
    # promtool test rules resolves rule_files relative to the test file
    tested = promtool("test", "rules", os.path.join(HERE, "alerts_test.yml"))
    assert tested.returncode == 0 and "SUCCESS" in tested.stdout, tested.stdout + tested.stderr
