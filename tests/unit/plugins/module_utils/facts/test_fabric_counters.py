# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""fabric_info's ``ethtool_counters`` are device counters, per-queue ones told apart by the driver table
(``_drivers.queue_counter``): bnxt_en's and bnx2x's per-ring ``[0]: rx_discards`` are not device counters
(issue 25).  Needs fabric-counters.patch on _fabric.py (select_counters takes the driver, netdev passes it).
"""
from __future__ import annotations

import os
from typing import List, Tuple

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.facts import _drivers
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _ethtool
from ansible_collections.hpcnet.rdma.plugins.module_utils.facts import _fabric

from ....conftest import FakeNic, FakeNode
from ....fixtures.real.loader import real_capture


# (capture, driver, per-ring trouble counters that must be left out, device trouble counters that must stay)
CASES = [
    ("ethtool-S/bnxt_en.netdev-2024.txt", "bnxt_en", ["[0]: rx_discards", "[0]: rx_errors"], []),
    ("ethtool-S/bnx2x.openeuler-22.03.ens4f1.head.txt", "bnx2x", ["[0]: rx_discards", "[0]: rx_skb_alloc_discard"],
     []),
    ("ethtool-S/bnx2x.openeuler-22.03.ens4f1.grep-err.txt", "bnx2x", ["[7]: rx_csum_offload_errors"],
     ["rx_crc_errors", "rx_phy_ip_err_discards"]),
    ("ethtool-S/ena.aws-5.4.txt", "ena", [], ["bw_in_allowance_exceeded", "pps_allowance_exceeded", "tx_timeout"]),
    ("ethtool-S/mlx5_core.xdp-5.15.txt", "mlx5_core", [], ["rx_discards_phy", "rx_out_of_buffer", "rx_prio0_discards"]),
]


@pytest.mark.parametrize("driver", ["table", None])
@pytest.mark.parametrize("path, table_driver, per_ring, device", CASES)
def test_device_counters_leave_out_every_per_queue_counter(path, table_driver, per_ring, device, driver):
    """With the driver, or without it (the generic shapes), no per-queue counter is a device counter."""
    stats = _ethtool.parse_ethtool_stats(real_capture(path))
    picked = _fabric.select_counters(stats, driver=table_driver if driver == "table" else None)
    assert not [k for k in picked if _drivers.queue_counter(k, table_driver) is not None]
    for name in per_ring:
        assert name in stats and name not in picked
    for name in device:
        assert picked[name] == stats[name]
    # per_queue keeps them all
    assert set(per_ring) <= set(_fabric.select_counters(stats, per_queue=True, driver=table_driver))


class StatsNode(FakeNode):
    """A FakeNode whose NICs also answer ``ethtool -S`` with a capture."""

    stats = {}  # type: dict

    def run(self, argv: List[str]) -> Tuple[int, str, str]:
        if os.path.basename(argv[0]) == "ethtool" and argv[1] == "-S":
            self.calls.append(list(argv))
            return 0, self.stats[argv[2]], ""
        return FakeNode.run(self, argv)


def test_fabric_netdev_reads_bnxt_ring_counters_as_per_queue(tmp_path):
    node = StatsNode(str(tmp_path / "root"))
    os.makedirs(node.root)
    node.add_nic(FakeNic("ens3f0np0", "bnxt_en"))
    node.stats = {"ens3f0np0": ("NIC statistics:\n     [0]: rx_discards: 4\n     [0]: rx_errors: 1\n"
                                "     [1]: rx_discards: 2\n     rx_total_discard_pkts: 9\n")}
    info = _fabric.netdev(node.host(), "ens3f0np0", {}, True)
    assert info["driver"] == "bnxt_en"
    assert info["ethtool_counters"] == {"rx_total_discard_pkts": 9}
