# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The sysfs InfiniBand reader (``_fabric.rdma_device``) on real /sys/class/infiniband trees
(tests/unit/fixtures/real/sysfs-infiniband/*.ttar: Prometheus procfs and node_exporter fixtures, a
soft-RoCE GID table), and fail-small in fabric_info / verify_info: one unreadable device or CA leaves
the others' data intact."""
from __future__ import annotations

import os

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.facts import _fabric
from ansible_collections.hpcnet.rdma.plugins.module_utils.facts import _findings as _findings_node
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host

from ....fixtures.real.loader import real_capture as real

SEP = "# ttar - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -"


def untar(path: str, root: str) -> None:
    """Write a ttar capture's files under ``root`` (the ``fixtures/`` prefix of procfs dropped)."""
    for record in real(path).split(SEP + "\n"):
        lines = record.splitlines()
        if not lines or not lines[0].startswith(("Path: ", "Directory: ")):
            continue
        name = lines[0].split(": ", 1)[1]
        name = name[len("fixtures/"):] if name.startswith("fixtures/") else name
        target = os.path.join(root, name)
        if lines[0].startswith("Directory: "):
            os.makedirs(target, exist_ok=True)
            continue
        count = int(lines[1].split(": ", 1)[1])
        body = "".join(line + "\n" for line in lines[2:2 + count])
        if body.endswith("EOF\n"):   # ttar marks a file without a final newline so
            body = body[:-len("EOF\n")]
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as f:
            f.write(body)


# (capture, device, fw_ver, board_id, hca_type, {port: (state, phys_state, rate, rate_gbps, link_layer)})
TREES = [
    ("sysfs-infiniband/hfi1_0.procfs.ttar", "hfi1_0", "1.27.0",
     "HPE 100Gb 1-port OP101 QSFP28 x16 PCIe Gen3 with Intel Omni-Path Adapter", None,
     {1: ("ACTIVE", "LinkUp", "100 Gb/sec (4X EDR)", 100.0, "InfiniBand")}),
    ("sysfs-infiniband/mlx4_0.procfs.ttar", "mlx4_0", "2.31.5050", "SM_1141000001000", "MT4099",
     {1: ("ACTIVE", "LinkUp", "40 Gb/sec (4X QDR)", 40.0, "InfiniBand"),
      2: ("ACTIVE", "LinkUp", "40 Gb/sec (4X QDR)", 40.0, "InfiniBand")}),
    ("sysfs-infiniband/mlx5_0.procfs.ttar", "mlx5_0", "14.28.2006", "SM_2001000001034", "MT4118",
     {1: ("ACTIVE", "ACTIVE", "25 Gb/sec (1X EDR)", 25.0, "InfiniBand")}),  # phys_state as upstream wrote it
    ("sysfs-infiniband/i40iw0.node_exporter.ttar", "i40iw0", "0.2", "I40IW Board ID", "I40IW",
     {1: ("ACTIVE", "LinkUp", "10 Gb/sec (4X)", 10.0, "InfiniBand")}),
    ("sysfs-infiniband/mlx4_0.node_exporter.ttar", "mlx4_0", "2.31.5050", "SM_1141000001000", "MT4099",
     {1: ("ACTIVE", "LinkUp", "40 Gb/sec (4X QDR)", 40.0, "InfiniBand"),
      2: ("ACTIVE", "LinkUp", "40 Gb/sec (4X QDR)", 40.0, "InfiniBand")}),
]


@pytest.mark.parametrize("path, dev, fw, board, hca, ports", TREES, ids=[t[0] for t in TREES])
def test_sysfs_tree_real(tmp_path, path, dev, fw, board, hca, ports):
    untar(path, str(tmp_path))
    info = _fabric.rdma_device(Host(root=str(tmp_path)), dev)
    assert (info["fw_ver"], info["board_id"], info["hca_type"]) == (fw, board, hca)
    got = dict((n, (p["state"], p["phys_state"], p["rate"], p["rate_gbps"], p["link_layer"]))
               for n, p in info["ports"].items())
    assert got == ports


def test_soft_roce_gid_table_real(tmp_path):
    untar("sysfs-infiniband/rxe0.k8s-61.gids.ttar", str(tmp_path))
    port = _fabric.rdma_device(Host(root=str(tmp_path)), "rxe0")["ports"][1]
    assert port["state"] == "ACTIVE"
    assert [(g["index"], g["gid"]) for g in port["gids"]] == [
        (0, "fe80:0000:0000:0000:0250:56ff:fea7:129f"), (1, "0000:0000:0000:0000:0000:ffff:0a01:103d")]
    # the capture shows no gid_attrs: type and netdev are unknown, not guessed
    assert port["gids"][0]["type"] is None and port["netdevs"] == [] and port["roce_versions"] == []


def test_gid_types_and_netdevs_from_gid_attrs(tmp_path):
    untar("sysfs-infiniband/rxe0.k8s-61.gids.ttar", str(tmp_path))
    base = tmp_path / "sys/class/infiniband/rxe0/ports/1/gid_attrs"
    for sub, values in (("types", ("IB/RoCE v1", "RoCE v2")), ("ndevs", ("ens160", "ens160"))):
        (base / sub).mkdir(parents=True)
        for i, value in enumerate(values):
            (base / sub / str(i)).write_text(value + "\n")
    port = _fabric.rdma_device(Host(root=str(tmp_path)), "rxe0")["ports"][1]
    assert [g["type"] for g in port["gids"]] == ["IB/RoCE v1", "RoCE v2"]
    assert port["netdevs"] == ["ens160"] and port["roce_versions"] == ["IB/RoCE v1", "RoCE v2"]


ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000"


def soft_roce_table(root, size=1024):
    """The real k8s-61 port (entries 0 and 1, verbatim) in a table of ``size`` entries as rxe has: the
    unused ones read as the zero GID (drivers/infiniband/core/sysfs.c show_port_gid prints zeros for an
    entry without a GID; their gid_attrs answer EINVAL, here absent).  The zero entries are ours."""
    untar("sysfs-infiniband/rxe0.k8s-61.gids.ttar", str(root))
    base = root / "sys/class/infiniband/rxe0/ports/1"
    for i in range(2, size):
        (base / "gids" / str(i)).write_text(ZERO_GID + "\n")
    for sub, values in (("types", ("RoCE v2", "RoCE v2")), ("ndevs", ("ens160", "ens160"))):
        (base / "gid_attrs" / sub).mkdir(parents=True, exist_ok=True)
        for i, value in enumerate(values):
            (base / "gid_attrs" / sub / str(i)).write_text(value + "\n")
    return base


class CountingHost(Host):
    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.reads = []

    def read(self, path):
        self.reads.append(path)
        return super().read(path)


@pytest.mark.parametrize("listed, reads", [
    (None, 1024 + 2 * 2),            # every entry, then type and netdev of the two used ones
    ([0, 1], 2 + 2 * 2),             # ibv_devinfo -v listed 0 and 1: those only
    ([1, 0, 1], 2 + 2 * 2),          # order and repeats do not matter
    ([0, 1, 7], 3 + 2 * 2),          # 7 emptied since ibv_devinfo ran: reads as zeros, left out as the scan does
])
def test_a_gid_table_read_whole_or_at_the_listed_indexes_gives_the_same_port(tmp_path, listed, reads):
    base = soft_roce_table(tmp_path)
    whole = _fabric.rdma_port(Host(root=str(tmp_path)), "/sys/class/infiniband/rxe0/ports/1")
    host = CountingHost(root=str(tmp_path))
    port = _fabric.rdma_port(host, "/sys/class/infiniband/rxe0/ports/1", listed)
    assert port == whole and [g["index"] for g in port["gids"]] == [0, 1] and port["netdevs"] == ["ens160"]
    assert len([r for r in host.reads if "/gid" in r]) == reads
    assert len(os.listdir(base / "gids")) == 1024


def _tool_host(root, devinfo):
    """A node at ``root`` whose ibv_devinfo prints ``devinfo`` (None: it fails) and which has no other tool."""
    def runner(argv):
        if argv[0].endswith("ibv_devinfo") and devinfo is not None:
            return 0, devinfo, ""
        return 1, "", "%s: failed" % argv[0]
    return CountingHost(root=str(root), runner=runner,
                        bin_path=lambda name: "/usr/bin/" + name if name == "ibv_devinfo" else None)


def test_gather_reads_the_gid_entries_ibv_devinfo_listed_and_the_whole_table_without_it(tmp_path):
    """The real k8s-62 ``ibv_devinfo -v`` lists GID 0 and 1 of rxe0 port 1 (rdma-core, Ubuntu 24.04 era); with it the
    fabric reader reads those two entries of the 1024, without it (tool failed, not wanted) the whole table -
    and the facts are the same."""
    soft_roce_table(tmp_path)
    (tmp_path / "sys/module/ib_core").mkdir(parents=True)
    devinfo = "".join(line + "\n" for line in real("ibv_devinfo/rxe.k8s-62.verbose.txt").splitlines()
                      if not line.startswith("#"))
    hosts = {"listed": _tool_host(tmp_path, devinfo), "failed": _tool_host(tmp_path, None),
             "not wanted": _tool_host(tmp_path, devinfo)}
    facts = dict((k, _fabric.gather(h, [], [] if k == "not wanted" else ["ibv_devinfo"], False))
                 for k, h in hosts.items())
    gid_reads = dict((k, len([r for r in h.reads if "/gids/" in r])) for k, h in hosts.items())
    assert gid_reads == {"listed": 2, "failed": 1024, "not wanted": 1024}
    ports = dict((k, dict(f["devices"]["rxe0"]["ports"][1], active_mtu=None)) for k, f in facts.items())
    assert ports["listed"] == ports["failed"] == ports["not wanted"]
    assert facts["listed"]["devices"]["rxe0"]["ports"][1]["active_mtu"] == 1024
    assert "error" in facts["failed"]["tools"]["ibv_devinfo"]


# ---------------------------------------------------------------------------- fail small
class BrokenPorts(Host):
    """A node where listing one device's ports fails (EIO from a driver going away)."""

    def __init__(self, root, broken, **kw):
        Host.__init__(self, root=root, **kw)
        self.broken = broken

    def listdir(self, path):
        if path == "/sys/class/infiniband/%s/ports" % self.broken:
            raise HostError("cannot list %s: Input/output error" % path)
        return Host.listdir(self, path)


def all_trees(root: str) -> None:
    for path in ("sysfs-infiniband/hfi1_0.procfs.ttar", "sysfs-infiniband/mlx5_0.procfs.ttar",
                 "sysfs-infiniband/i40iw0.node_exporter.ttar"):
        untar(path, root)
    os.makedirs(os.path.join(root, "proc"), exist_ok=True)


def test_fabric_gather_one_unreadable_device_keeps_the_others(tmp_path):
    all_trees(str(tmp_path))
    facts = _fabric.gather(BrokenPorts(str(tmp_path), "mlx5_0"), [], [], False)
    assert sorted(facts["devices"]) == ["hfi1_0", "i40iw0", "mlx5_0"]
    assert "Input/output error" in facts["devices"]["mlx5_0"]["unreadable"]
    assert facts["devices"]["hfi1_0"]["ports"][1]["rate_gbps"] == 100.0
    assert facts["devices"]["i40iw0"]["fw_ver"] == "0.2"
    assert any(f.startswith("mlx5_0: sysfs unreadable: ") for f in facts["findings"])


IBSTAT_TWO_CAS = real("ibstat/mlx5.cx6dx.l2fwd-nv-6.eth-100.txt")


def ibstat_host(root: str, text: str) -> Host:
    os.makedirs(os.path.join(root, "sys/module/ib_core"), exist_ok=True)
    return Host(root=root, runner=lambda argv: (0, text, "") if argv[0].endswith("ibstat") else (1, "", "no"),
                bin_path=lambda name: "/usr/sbin/" + name)


def test_fabric_info_one_garbled_ca_keeps_the_other_cas(tmp_path):
    all_trees(str(tmp_path))
    garbled = IBSTAT_TWO_CAS.replace("Rate: 100\n", "Rate: lots\n", 1)
    facts = _fabric.gather(ibstat_host(str(tmp_path), garbled), [], ["ibstat"], False)
    cas = facts["tools"]["ibstat"]
    assert "Rate: lots" in cas["mlx5_0"]["unreadable"]
    assert cas["mlx5_1"]["ports"][1]["rate"] == 100 and cas["mlx5_1"]["node_guid"] == "0x0c42a103001dd12b"
    assert any(f.startswith("ibstat: mlx5_0 unreadable: ibstat: expected a rate") for f in facts["findings"])
    # the soft-RoCE rate that used to drop every CA reads now
    fine = _fabric.gather(ibstat_host(str(tmp_path), real("ibstat/rxe.linux-rdma-2022-01.rate-2.5.txt")), [],
                          ["ibstat"], False)
    assert fine["tools"]["ibstat"]["rxe0"]["ports"][1]["rate"] == 2.5


def test_verify_info_one_garbled_ca_keeps_the_other_cas(tmp_path):
    all_trees(str(tmp_path))
    garbled = IBSTAT_TWO_CAS.replace("Rate: 100\n", "Rate: lots\n", 1)
    params = {"interfaces": [], "fallback_interfaces": [], "interval": 0.0, "tools": ["ibstat"], "ethtool": False,
              "profile_file": "/etc/hpcnet-rdma/profile.json", "nccl_conf": "/etc/nccl.conf",
              "ucx_conf": "/etc/ucx/ucx.conf", "memlock_group": "rdma"}
    out = _findings_node.gather(ibstat_host(str(tmp_path), garbled), params, sleep=lambda s: None,
                                globber=lambda pattern: [])
    cas = out["fabric"]["tools"]["ibstat"]
    assert "unreadable" in cas["mlx5_0"] and cas["mlx5_1"]["firmware_version"] == "22.32.2004"
    assert out["fabric"]["devices"]["hfi1_0"]["ports"][1]["state"] == "ACTIVE"


def test_a_tool_that_fails_or_prints_nothing_readable_is_one_finding(tmp_path):
    all_trees(str(tmp_path))
    facts = _fabric.gather(ibstat_host(str(tmp_path), "ibpanic: [1] main: stat of IB device 'mlx5_8' failed\n"), [],
                           ["ibstat", "rdma"], False)
    assert facts["tools"]["ibstat"] == {"error": "ibstat: no \"CA '...'\" line in output"}
    assert facts["tools"]["rdma"] == {"error": "no"} and facts["tools"]["rdma_dev"] == {"error": "no"}
    assert "ibstat output unreadable: ibstat: no \"CA '...'\" line in output" in facts["findings"]
    assert facts["devices"]["hfi1_0"]["fw_ver"] == "1.27.0"


def test_rdma_dev_fills_what_sysfs_lacks(tmp_path):
    all_trees(str(tmp_path))
    dev_json = real("rdma/dev-json.mlx5.reconstructed.json").replace("rdmap6s0f0", "mlx5_0", 1).replace(
        '"ifname":"mlx5_0","node_type":"ca","fw":"16.29.0550","node_guid":"0000', '"ifname":"other","node_type":"ca",'
        '"fw":"16.29.0550","node_guid":"0000')
    os.makedirs(os.path.join(str(tmp_path), "sys/module/ib_core"), exist_ok=True)

    def runner(argv):
        if argv[1:] == ["-j", "dev", "show"]:
            return 0, dev_json, ""
        return 0, real("rdma/link-json.mlx5.reconstructed.json"), ""

    host = Host(root=str(tmp_path), runner=runner, bin_path=lambda name: "/usr/sbin/" + name)
    facts = _fabric.gather(host, [], ["rdma"], False)
    mlx5 = facts["devices"]["mlx5_0"]
    assert mlx5["node_type"] == "ca" and mlx5["fw_ver"] == "14.28.2006"   # sysfs wins where it has a value
    assert "MEM_MGT_EXTENSIONS" in mlx5["caps"]
    assert [x["netdev"] for x in facts["tools"]["rdma"]] == ["p1p1", "p1p2"]
    assert sorted(facts["tools"]["rdma_dev"]) == ["mlx5_0", "other"]
