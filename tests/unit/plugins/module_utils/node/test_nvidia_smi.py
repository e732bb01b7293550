# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/node/_nvidia_smi.py: the ``nvidia-smi topo -m`` parser against a recorded
output (tests/unit/fixtures/README.md), and its argv table."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _nvidia_smi
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import ParseError

from ....conftest import fixture


def test_nvidia_smi_topo():
    topo = _nvidia_smi.parse_nvidia_smi_topo(fixture("nvidia-smi-topo-m.2gpu.txt"))
    assert topo["devices"] == ["GPU0", "GPU1", "NIC0", "NIC1"]
    assert topo["matrix"]["GPU0"]["NIC0"] == "PXB" and topo["matrix"]["GPU0"]["NIC1"] == "SYS"
    assert topo["matrix"]["GPU1"]["GPU0"] == "NV12" and topo["matrix"]["NIC1"]["NIC1"] == "X"
    assert topo["cpu_affinity"] == {"GPU0": "0-31,64-95", "GPU1": "32-63,96-127"}
    assert topo["numa_affinity"] == {"GPU0": "0", "GPU1": "1"}
    assert topo["nics"] == {"NIC0": "mlx5_0", "NIC1": "mlx5_1"}
    assert topo["gpu_numa_id"] == {"GPU0": "N/A", "GPU1": "N/A"}
    assert topo["gpu_nics"]["GPU0"] == {"mlx5_0": "PXB", "mlx5_1": "SYS"}
    with pytest.raises(ParseError, match="no matrix rows"):
        _nvidia_smi.parse_nvidia_smi_topo("GPU0 GPU1\n")


def test_argv_table():
    assert _nvidia_smi.NVIDIA_SMI.argv("topo") == ["nvidia-smi", "topo", "-m"]
    assert _nvidia_smi.NVIDIA_SMI.parsers["topo"] is _nvidia_smi.parse_nvidia_smi_topo
