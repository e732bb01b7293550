# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""benchmarks/node_scale.py's fake node at its smallest size: the tune call it times converges, then
finds nothing to do, and pins every queue IRQ (no timing asserted here: the benchmark prints it)."""
from __future__ import annotations

import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("node_scale", os.path.join(ROOT, "benchmarks", "node_scale.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_smallest_size_converges_then_changes_nothing(bench, tmp_path):
    node = bench.build_node(str(tmp_path / "root"), nics=1, queues=8, cpus=256)
    first = bench.call(node, 1)
    assert first["changed"] is True
    assert [r["name"] for r in first["results"]] == ["sysctl", "nic", "irq", "record"]
    assert [node.read("/proc/irq/%d/smp_affinity_list" % irq) for irq in range(201, 209)] == [str(c) for c in range(8)]
    assert node.nics[bench.nic_name(0)].mtu == 9000
    assert bench.call(node, 1)["changed"] is False


def test_report_names_the_target(bench):
    rows = [{"nics": 8, "queues": 64, "irqs": 512, "converge": (0.5, 0.6), "rerun": (0.2, 0.3)}]
    assert "at 512 IRQs: 0.500 CPU-s per call at most (target < 1.5 s): OK" in bench.report(rows, 256)
