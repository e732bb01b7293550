# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 27, item 2: the GID indexes the apps use (NCCL and UCX) exist and are of the RoCE version the profile
sets; the NIC's IOMMU group and the ACS of the switch ports above it (lspci, with GPUs).  The judges as tables,
then the whole check on a fake node with a PCI tree (sysfs links as the kernel makes them)."""
from __future__ import annotations

import json
import os
import shutil

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.health import _check as _health
from ansible_collections.hpcnet.rdma.plugins.module_utils.health import _judges
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._lspci import parse_lspci_vvv

from ....fixtures.real.loader import real_capture
from .test_health import OPTS, codes, lab

ACS = real_capture("lspci/amd_matisse.downstream_port.0000_03_02.0.txt")
DENIED = real_capture("lspci/amd_matisse.access_denied.0000_03_05.0.txt")
PORT = {"gids": [{"index": 0, "type": "RoCE v2"}, {"index": 1, "type": "IB/RoCE v1"}, {"index": 3, "type": "RoCE v2"}]}


def app(key, index):
    return {"key": key, "file": "/etc/ucx/ucx.conf" if key.startswith("UCX") else "/etc/nccl.conf", "index": index}


@pytest.mark.parametrize("gids, mode, expected", [
    ([app("NCCL_IB_GID_INDEX", 3), app("UCX_IB_GID_INDEX", 3)], "v2", []),
    ([app("NCCL_IB_GID_INDEX", 3), app("UCX_IB_GID_INDEX", 1)], "v2", [("gid.version", "drain")]),   # UCX on RoCE v1
    ([app("UCX_IB_GID_INDEX", 1)], "v1", []),                                                        # the profile wants v1
    ([app("NCCL_IB_GID_INDEX", 3)], "v1", [("gid.version", "drain")]),
    ([app("NCCL_IB_GID_INDEX", 5)], "v2", [("gid.missing", "drain")]),
    ([], "v2", []),                                                                                  # no app told an index
])
def test_judge_gids(gids, mode, expected):
    found = _judges.judge_gids("mlx5_0", 1, PORT, gids, {"mode": mode, "source": "the profile's qos.roce_mode"})
    assert codes(found) == expected
    if expected and expected[0][0] == "gid.version":
        assert "the apps need %s" % _judges.GID_TYPES[mode] in found[0]["evidence"]


def pci(iommu_type=None, upstream=("0000:00:01.1", "0000:02:00.0", "0000:03:02.0")):
    link = {"bdf": "0000:06:00.0", "upstream": list(upstream), "path": "/sys/class/infiniband/mlx5_0/device"}
    if iommu_type:
        link["iommu"] = {"group": "17", "type": iommu_type, "devices": ["0000:06:00.0"]}
    return {"mlx5_0": link}


@pytest.mark.parametrize("pcie, expected", [
    (pci("DMA-FQ"), [("iommu.translation", "warn")]),
    (pci("DMA"), [("iommu.translation", "warn")]),
    (pci("identity"), []),            # iommu=pt
    (pci(None), []),                  # no IOMMU: no group
])
def test_judge_iommu(pcie, expected):
    assert codes(_judges.judge_iommu(pcie)) == expected


ROOT_PORT = dict(parse_lspci_vvv(ACS), port_type="Root Port")    # the same bits on a root port: not judged


@pytest.mark.parametrize("acs, gpus, expected", [
    ({"0000:03:02.0": parse_lspci_vvv(ACS)}, 8, [("pcie.acs", "warn")]),
    ({"0000:03:02.0": parse_lspci_vvv(ACS)}, 0, []),                   # no GPU: no peer-to-peer to protect
    ({"0000:03:02.0": parse_lspci_vvv(DENIED)}, 8, []),                # lspci not root: unreadable, not judged
    ({"0000:03:02.0": {"unreadable": "lspci: not found"}}, 8, []),
    ({"0000:00:01.1": ROOT_PORT}, 8, []),
    (None, 8, []),
])
def test_judge_acs(acs, gpus, expected):
    found = _judges.judge_acs(pci(), acs, gpus)
    assert codes(found) == expected
    if found:
        assert "below 0000:03:02.0, a PCIe Downstream Port whose ACSCtl has ReqRedir+ CmpltRedir+" in found[0]["evidence"]


# ---------------------------------------------------------------------- the whole check on a fake PCI tree
DEV = "/sys/devices/pci0000:00/0000:00:01.1/0000:02:00.0/0000:03:02.0/0000:06:00.0"


def pci_node(tmp_path, iommu="DMA-FQ", gpus=1):
    n = lab(tmp_path)
    for name, value in (("max_link_width", "16"), ("current_link_width", "16"), ("max_link_speed", "16.0 GT/s PCIe"),
                        ("current_link_speed", "16.0 GT/s PCIe")):
        n.write("%s/%s" % (DEV, name), value + "\n")
    n.write("/sys/kernel/iommu_groups/17/type", iommu + "\n")
    os.makedirs(n.path("/sys/kernel/iommu_groups/17/devices"))
    os.symlink("../../../../devices/pci0000:00/0000:00:01.1/0000:02:00.0/0000:03:02.0/0000:06:00.0",
               n.path("/sys/kernel/iommu_groups/17/devices/0000:06:00.0"))
    os.symlink("../../../../../../kernel/iommu_groups/17", n.path(DEV + "/iommu_group"))
    os.makedirs(n.path("/sys/bus/pci/devices"))
    os.symlink("../../../devices/pci0000:00/0000:00:01.1/0000:02:00.0/0000:03:02.0/0000:06:00.0",
               n.path("/sys/bus/pci/devices/0000:06:00.0"))
    device = n.path("/sys/class/infiniband/rxe0/device")
    if os.path.isdir(device) and not os.path.islink(device):
        shutil.rmtree(device)
    os.symlink(n.path(DEV), device)     # the kernel's link is relative; this one must resolve inside the fake tree
    for i in range(gpus):
        os.makedirs(n.path("/proc/driver/nvidia/gpus/0000:4%d:00.0" % i))
    n.write("/sys/module/nvidia_peermem/refcnt", "0\n")
    answers = {"0000:03:02.0": ACS}
    plain = n.run

    def run(argv):
        if os.path.basename(argv[0]) == "lspci":
            n.calls.append(["lspci"] + list(argv[1:]))
            return 0, answers.get(argv[-1], ""), ""      # lspci -s of a slot it does not know prints nothing
        return plain(argv)
    n.run = run
    return n


def test_iommu_translation_and_acs_on_the_nics_switch_port_are_found(tmp_path):
    n = pci_node(tmp_path)
    out = _health.run(n.host(), dict(OPTS), None, None)
    pcie = out["facts"]["pcie"]["rxe0"]
    assert pcie["bdf"] == "0000:06:00.0" and pcie["upstream"] == ["0000:00:01.1", "0000:02:00.0", "0000:03:02.0"]
    assert pcie["iommu"] == {"group": "17", "type": "DMA-FQ", "devices": ["0000:06:00.0"]}
    assert sorted(out["facts"]["acs"]) == ["0000:00:01.1", "0000:02:00.0", "0000:03:02.0"]
    assert "unreadable" in out["facts"]["acs"]["0000:00:01.1"]
    found = dict((f["code"], f) for f in out["findings"])
    assert found["iommu.translation"]["severity"] == "warn" and "IOMMU group 17 of type DMA-FQ" in found["iommu.translation"]["evidence"]
    assert found["pcie.acs"]["bridge"] == "0000:03:02.0"
    assert out["verdict"]["rc"] == 0                                      # warnings: the node is not drained


def test_no_gpu_runs_no_lspci_and_passthrough_is_fine(tmp_path):
    n = pci_node(tmp_path, iommu="identity", gpus=0)
    out = _health.run(n.host(), dict(OPTS), None, None)
    assert "acs" not in out["facts"] and not [c for c in n.calls if c[0] == "lspci"]
    assert not [f for f in out["findings"] if f["code"] in ("iommu.translation", "pcie.acs")]


def test_the_apps_gid_indexes_are_judged_against_the_recorded_roce_mode(tmp_path):
    n = lab(tmp_path)                       # rxe0: GIDs 0 and 1, both RoCE v2
    n.write("/etc/nccl.conf", "NCCL_IB_GID_INDEX=1\n")
    n.write("/etc/ucx/ucx.conf", "[global]\nUCX_IB_GID_INDEX=4\n")
    out = _health.run(n.host(), dict(OPTS), None, None)
    assert out["facts"]["gids"] == [{"key": "NCCL_IB_GID_INDEX", "file": "/etc/nccl.conf", "index": 1},
                                    {"key": "UCX_IB_GID_INDEX", "file": "/etc/ucx/ucx.conf", "index": 4}]
    assert [(f["code"], f["key"]) for f in out["findings"] if f["code"].startswith("gid.")] == [("gid.missing", "UCX_IB_GID_INDEX")]
    n.write("/etc/ucx/ucx.conf", "UCX_IB_GID_INDEX=1\n")
    n.write("/etc/hpcnet-rdma/profile.json", json.dumps({"name": "mpi", "qos": {"roce_mode": "v1"}}))
    out = _health.run(n.host(), dict(OPTS), None, None)
    assert out["facts"]["roce_mode"]["mode"] == "v1"
    assert sorted((f["code"], f["key"]) for f in out["findings"] if f["code"].startswith("gid.")) == [
        ("gid.version", "NCCL_IB_GID_INDEX"), ("gid.version", "UCX_IB_GID_INDEX")]
