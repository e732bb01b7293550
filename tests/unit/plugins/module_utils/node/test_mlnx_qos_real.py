# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``mlnx_qos -i IF`` reader on real captures (tests/unit/fixtures/real/mlnx_qos/) of MLNX_OFED 4.x,
5.x and 23.10+: what a person reads off each one."""
from __future__ import annotations

import os

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _mlnx_qos

REAL = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "real", "mlnx_qos")
DEFAULT_MAP = dict((d, d >> 3) for d in range(64))
IDENTITY = dict((p, p) for p in range(8))
SWAP01 = dict(IDENTITY)
SWAP01.update({0: 1, 1: 0})   # mlx5 default: priority 0 in TC 1, priority 1 in TC 0


def capture(name):
    """The verbatim body: the file without its leading ``# `` header lines."""
    with open(os.path.join(REAL, name)) as f:
        lines = f.read().splitlines(True)
    i = 0
    while i < len(lines) and lines[i].startswith("#"):
        i += 1
    return "".join(lines[i:])


def test_every_capture_names_its_source():
    for name in sorted(os.listdir(REAL)):
        with open(os.path.join(REAL, name)) as f:
            head = " ".join(line for line in f if line.startswith("# "))
        assert "source:" in head and "tool:" in head and "driver:" in head, name


CASES = [
    # name, trust, dscp2prio, pfc, prio_tc, {tc: (tsa, bw)}, buffer sizes, buffer total, cable len, pfc buffer
    ("mlnx-tools-b8c08c5.mlnx_ofed-23.10.pcp.txt", "pcp", {}, [], SWAP01,
     dict((tc, ("vendor", None)) for tc in range(8)), [0, 187200, 0, 0, 0, 0, 0, 0],
     {"name": "max_buffer_size", "bytes": 2044224}, 7, [1] * 8),
    ("mlnx-tools-d477a17.mlnx_ofed-5.x.dscp.txt", "dscp", DEFAULT_MAP, [1, 2, 3, 4, 5], SWAP01,
     dict((tc, ("vendor", None)) for tc in range(8)), [32768, 229120, 0, 0, 0, 0, 0, 0], None, 7,
     [0, 1, 1, 1, 1, 1, 0, 0]),
    ("att-netarbiter.mlnx_ofed-4.x.trust-dscp.txt", "dscp", DEFAULT_MAP, [3], SWAP01,
     dict((tc, ("vendor", None)) for tc in range(8)), None, None, 7, None),
    ("att-netarbiter.mlnx_ofed-4.x.pfc-3.txt", "dscp", DEFAULT_MAP, [3], SWAP01,
     dict((tc, ("vendor", None)) for tc in range(8)), None, None, 7, None),
    ("mellanox-community-doc-2792.mlnx_ofed-4.2.ets.txt", "dscp", DEFAULT_MAP, [0, 2, 6, 7],
     SWAP01,
     dict([(tc, ("ets", 10)) for tc in range(6)] + [(6, ("strict", None)), (7, ("ets", 40))]), None, None, 10, None),
]


@pytest.mark.parametrize("name, trust, dscp, pfc, prio_tc, tcs, sizes, total, cable, pfc_buffer", CASES)
def test_mlnx_qos_real(name, trust, dscp, pfc, prio_tc, tcs, sizes, total, cable, pfc_buffer):
    parsed = _mlnx_qos.parse_mlnx_qos(capture(name))
    assert parsed["dcbx_mode"] == "os"
    assert parsed["trust"] == trust
    assert parsed["dscp2prio"] == dscp
    assert parsed["pfc"] == pfc
    assert parsed["prio_tc"] == prio_tc
    assert dict((tc, (v["tsa"], v["bw"])) for tc, v in parsed["tc"].items()) == tcs
    assert all(v["ratelimit"] == "unlimited" for v in parsed["tc"].values())
    assert parsed["receive_buffer_size"] == sizes
    assert parsed["buffer_total"] == total
    assert parsed["cable_len"] == cable
    assert parsed["pfc_buffer"] == pfc_buffer


def test_ets_share_is_not_part_of_the_tsa_name():
    # the bug of issue 25: "tsa: ets, bw: 10%" was kept whole as the TSA
    parsed = _mlnx_qos.parse_mlnx_qos(capture("mellanox-community-doc-2792.mlnx_ofed-4.2.ets.txt"))
    assert set(v["tsa"] for v in parsed["tc"].values()) == {"ets", "strict"}
    assert sum(v["bw"] or 0 for v in parsed["tc"].values()) == 100
