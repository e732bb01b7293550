# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``nvidia-smi topo -m`` read right on real captures (tests/unit/fixtures/real/nvidia-smi/): the
GPU/NIC matrix, CPU and NUMA affinity, the NIC legend, tab- and space-separated alike."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _nvidia_smi
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import ParseError

from ....fixtures.real.loader import real_capture as real


H100 = "nvidia-smi/topo-m.h100.driver-570.sglang-30401.spaces.txt"
A100 = "nvidia-smi/topo-m.a100-nv12.no-gpu-numa-id.mpi-gpu-compress.tabs.txt"

# (capture, GPUs, NICs, GPU0-GPU1 link, GPU0 -> its closest NIC device, GPU4 cpu affinity, GPU4 NUMA,
#  GPU NUMA ID of GPU0, NIC legend size)
CASES = [
    (H100, 8, 8, "NV18", {"mlx5_0": "PIX"}, "48-95,144-191", "1", "N/A", 8),
    (A100, 8, 10, "NV12", {"mlx5_0": "PXB", "mlx5_1": "PXB"}, "112-127,240-255", "7", None, 10),
]


@pytest.mark.parametrize("path, gpus, nics, nvlink, closest, cpus, numa, numa_id, legend", CASES,
                         ids=[c[0] for c in CASES])
def test_topo_real(path, gpus, nics, nvlink, closest, cpus, numa, numa_id, legend):
    topo = _nvidia_smi.parse_nvidia_smi_topo(real(path))
    assert len([d for d in topo["devices"] if d.startswith("GPU")]) == gpus
    assert len([d for d in topo["devices"] if d.startswith("NIC")]) == nics
    assert topo["matrix"]["GPU0"]["GPU1"] == nvlink and topo["matrix"]["GPU3"]["GPU3"] == "X"
    near = dict((nic, rel) for nic, rel in topo["gpu_nics"]["GPU0"].items() if rel in ("PIX", "PXB"))
    assert near == closest
    assert (topo["cpu_affinity"]["GPU4"], topo["numa_affinity"]["GPU4"]) == (cpus, numa)
    assert topo["gpu_numa_id"].get("GPU0") == numa_id
    assert len(topo["nics"]) == legend and topo["nics"]["NIC0"] == "mlx5_0"
    assert topo["unreadable_rows"] == []
    # NIC rows carry no affinity and are read as matrix rows
    assert "NIC0" not in topo["cpu_affinity"] and topo["matrix"]["NIC0"]["NIC0"] == "X"


def test_the_same_matrix_with_tabs_or_spaces_reads_the_same():
    tabs = _nvidia_smi.parse_nvidia_smi_topo(real(A100))
    spaced = _nvidia_smi.parse_nvidia_smi_topo(real(A100).replace("\t", "    "))
    assert spaced == tabs


def test_a_garbled_row_is_reported_and_the_others_kept():
    text = real(H100).replace("GPU5    NV18", "GPU5?   NV18", 1)
    topo = _nvidia_smi.parse_nvidia_smi_topo(text)
    assert "GPU5" not in topo["matrix"] and topo["matrix"]["GPU6"]["NIC6"] == "PIX"
    assert len(topo["unreadable_rows"]) == 1 and "'GPU5?'" in topo["unreadable_rows"][0]


@pytest.mark.parametrize("text, message", [
    ("", "empty output"),
    ("No devices were found\n", "names no GPU column"),
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n", "names no GPU column"),
])
def test_failures_name_the_tool(text, message):
    with pytest.raises(ParseError, match="nvidia-smi topo -m: .*" + message):
        _nvidia_smi.parse_nvidia_smi_topo(text)
