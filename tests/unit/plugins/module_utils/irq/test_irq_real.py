# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""/proc/interrupts readers on real captures (tests/unit/fixtures/real/interrupts/): which IRQs are
queue IRQs of which NIC, with their queue index, and which are the NIC's other vectors."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _domain as _irq
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import ParseError

from ....fixtures.real.loader import real_capture, real_files


def nic(path, driver, ifname, irq_range, header=None):
    """{irq: (role, queue)} for the IRQs in irq_range as the driver's reader sees them."""
    text = real_capture(path)
    if header:
        text = header + text
    ints = _irq.parse_interrupts(text)
    return dict((n, _irq.irq_role(ints[n]["name"], driver, ifname)) for n in irq_range if n in ints)


def q(*indexes):
    return [("queue", i) for i in indexes]


OTHER = ("other", None)

CASES = [
    # ENA on EC2 (BPF Performance Tools): one mgmnt vector, Tx-Rx per queue pair
    ("interrupts/ena.bpf-performance-tools.txt", "ena", "eth0", range(28, 31), None, [OTHER] + q(0, 1)),
    # MLNX_OFED 2.2 mlx4_en eth2-N (queue per ring) and mlx4-async; bnx2 eth0-N, eth1-N
    ("interrupts/2xx5650.txt", "mlx4_en", "eth2", range(60, 72), None, q(0, 1, 2) + [OTHER] + q(0, 1, 2, 3, 4, 5, 6, 7)),
    ("interrupts/2xx5650.txt", "bnx2", "eth0", range(77, 85), None, q(0, 1, 2, 3, 4, 5, 6, 7)),
    ("interrupts/2xe2690.txt", "mlx4_en", "eth6", range(109, 121), None, q(0, 1, 2) + [OTHER] + q(0, 1, 2, 3, 4, 5, 6, 7)),
    # tg3 5719: eth0-tx-0 then eth0-rx-1..4
    ("interrupts/2xe2690.txt", "tg3", "eth0", range(161, 166), None, q(0, 1, 2, 3, 4)),
    # CentOS 5 ethX-N (driver not named): generic rules with the interface name
    ("interrupts/centos5.eth1-msix.serverfault.txt", None, "eth1", (98, 106, 114, 122, 130, 138, 146, 154), None, q(0, 1, 2, 3, 4, 5, 6, 7)),
    # i40e: TxRx queues, the misc vector and the flow-director sideband vector are not queues
    ("interrupts/e3-1271.txt", "i40e", "eth0", range(32, 38), None, [OTHER] + q(0, 1, 2, 3) + [OTHER]),
    # mlx5 (recent kernel, grep output without header): async0 is not a queue; comp0..11 are
    ("interrupts/mlx5_core.grep-mlx.blog.txt", "mlx5_core", "enp1s0f0np0", (98, 99, 109, 119),
     "".join("CPU%d " % i for i in range(12)) + "\n", [OTHER] + q(0, 1, 11)),
    # mlx5 (2016 kernel): mlx5_pages_eq, mlx5_cmd_eq, mlx5_async_eq, then comp0..3
    ("interrupts/rss-ladder.mlx5.q6700.txt", "mlx5_core", "eth1", range(27, 34), None, [OTHER, OTHER, OTHER] + q(0, 1, 2, 3)),
    # igb split rx/tx vectors share the queue index; the bare eth0 vector is link/other
    ("interrupts/rss-ladder.igb.e5606.txt", "igb", "eth0", range(57, 66), None, [OTHER] + q(0, 1, 2, 3, 0, 1, 2, 3)),
    ("interrupts/rss-ladder.ixgbe.e5645.txt", "ixgbe", "eth0", range(66, 68), None, q(0, 1)),
    # virtio_net: input/output queues, config is not
    ("interrupts/virtio_net.procfs.txt", "virtio_net", "eth0", range(35, 38), None, [OTHER] + q(0, 0)),
    ("interrupts/vscale-vm.txt", "virtio_net", "eth0", range(26, 29), None, [OTHER] + q(0, 0)),
    # ice (E810): the control VSI's ctrl-TxRx-0 and the misc vector are not queues; lan1's TxRx-0..2 are
    ("interrupts/ice.metal-images-136.grep.txt", "ice", "lan1", range(66, 81),
     "".join("CPU%d " % i for i in range(16)) + "\n", [OTHER, OTHER] + q(0, 1, 2)),
]


@pytest.mark.parametrize("path,driver,ifname,irqs,header,expected", CASES, ids=["%s-%s" % (c[0], c[1]) for c in CASES])
def test_queue_irqs_of_real_nics(path, driver, ifname, irqs, header, expected):
    got = nic(path, driver, ifname, irqs, header)
    assert [got[n] for n in sorted(got)] == expected


def test_ena_and_old_names_are_recognised_without_the_driver():
    """The generic rules alone (driver unknown) still find these NICs' queues."""
    assert _irq.irq_role("ens5-Tx-Rx-0", None, "ens5") == ("queue", 0)
    assert _irq.irq_role("ena-mgmnt@pci:0000:00:05.0", None, "ens5") == OTHER
    assert _irq.irq_role("eth2-7", None, "eth2") == ("queue", 7)
    assert _irq.irq_role("gve-ntfy-blk3@pci:0000:00:04.0") == ("queue", 3)
    assert _irq.irq_role("ice-0000:5e:00.0:misc") == OTHER
    assert _irq.irq_role("mlx5_pages_eq@pci:0000:01:00.0") == OTHER
    assert _irq.driver_profile("ena") == "ena" and _irq.driver_profile("sfc") == "generic"


@pytest.mark.parametrize("driver", ["ice", None])
def test_ice_vector_names_of_the_in_tree_and_out_of_tree_drivers(driver):
    """In-tree ice: one vector per queue (TxRx-<N>); out-of-tree ice 1.16: one vector per two queues
    (TxRx-<first>-<last>), read as the first queue's index; read with the ice rules and the generic ones."""
    names = [n for n in real_capture("irq-names/ice.ethernet-linux-ice-16.ens2f1.txt").splitlines() if n != "..."]
    got = [_irq.irq_role(n, driver, "ens2f1") for n in names]
    assert got == q(0, 1, 2, 3, 60, 61, 62, 63, 0, 2)
    assert _irq.irq_role("ice-0000:65:00.0:ctrl-TxRx-0", driver, "lan1") == OTHER


@pytest.mark.parametrize("path", real_files("interrupts"))
def test_every_capture_parses(path):
    text = real_capture(path)
    if not text.lstrip().startswith("CPU"):
        text = "".join("CPU%d " % i for i in range(12)) + "\n" + text
    ints = _irq.parse_interrupts(text)
    assert ints and all(isinstance(v["counts"], list) and v["counts"] for v in ints.values())


def test_counts_and_names_of_a_capture():
    ints = _irq.parse_interrupts(real_capture("interrupts/ena.bpf-performance-tools.txt"))
    assert ints == {28: {"name": "ena-mgmnt@pci:0000:00:05.0", "counts": [1775400, 80]},
                    29: {"name": "eth0-Tx-Rx-0", "counts": [533, 5501189]},
                    30: {"name": "eth0-Tx-Rx-1", "counts": [4526113, 278]}}


@pytest.mark.parametrize("text", ["", "garbage\n", " 5: x y\n", "CPU0\n 5: abc def\n"])
def test_unreadable_interrupts_are_parse_errors(text):
    with pytest.raises(ParseError, match="/proc/interrupts"):
        _irq.parse_interrupts(text)
