# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The node side of verify: its parsers (limits.conf, NCCL/UCX conf, dpkg status, libibverbs name),
the counter deltas and the choice of data interfaces."""
from __future__ import annotations

import json
import os

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.facts import _findings as N
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _pkgtools
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "fabric_info")


@pytest.mark.parametrize("files,soft,hard", [
    ([{"path": "/etc/security/limits.conf", "text": "@rdma - memlock unlimited\n"}], -1, -1),
    ([{"path": "/etc/security/limits.conf", "text": "*  soft memlock 65536\n* hard memlock 131072 # x\n"}], 65536, 131072),
    ([{"path": "/etc/security/limits.conf", "text": "@rdma soft memlock 1024\n"},
      {"path": "/etc/security/limits.d/90.conf", "text": "* soft memlock 4096\n"}], 1024, None),   # group beats a later *
    ([{"path": "/etc/security/limits.conf", "text": "@other - memlock unlimited\n#@rdma - memlock unlimited\n"}], None, None),
    ([{"path": "/etc/security/limits.conf", "text": "@rdma - memlock 64\n"},
      {"path": "/etc/security/limits.d/90-hpcnet-rdma.conf", "text": "@rdma - memlock infinity\n"}], -1, -1),
])
def test_parse_limits(files, soft, hard):
    out = N.parse_limits(files, "rdma")
    assert (out["soft"] or {}).get("kib") == soft and (out["hard"] or {}).get("kib") == hard


def test_parse_limits_names_the_line():
    out = N.parse_limits([{"path": "/etc/security/limits.d/90-hpcnet-rdma.conf", "text": "# x\n@rdma - memlock unlimited\n"}], "rdma")
    assert out["soft"]["source"] == "/etc/security/limits.d/90-hpcnet-rdma.conf:2"


@pytest.mark.parametrize("text,key,value", [
    ("# managed\nNCCL_IB_TC=106\nNCCL_IB_GID_INDEX=3\n", "NCCL_IB_TC", "106"),
    ("NCCL_IB_TC=106\nNCCL_IB_TC = 41 # later wins\n", "NCCL_IB_TC", "41"),
    ("UCX_NET_DEVICES=rxe0:1\n", "UCX_IB_TRAFFIC_CLASS", None),
    ("#UCX_IB_TRAFFIC_CLASS=106\n", "UCX_IB_TRAFFIC_CLASS", None),
])
def test_parse_conf_value(text, key, value):
    assert N.parse_conf_value(text, key) == value


def test_dpkg_status_and_libibverbs():
    text = ("Package: libibverbs1\nStatus: install ok installed\nVersion: 44.0-2\n\n"
            "Package: rdma-core\nStatus: install ok installed\nVersion: 44.0-2\n\n"
            "Package: perftest\nStatus: deinstall ok config-files\nVersion: 4.5\n")
    assert N.parse_dpkg_status_version(text, "rdma-core") == "44.0-2"
    assert N.parse_dpkg_status_version(text, "perftest") is None
    assert N.libibverbs_version("/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0") == "44.0"
    assert N.libibverbs_version("/usr/lib64/libibverbs.so.1") is None


def test_dpkg_status_version_of_every_package_of_a_real_status_file():
    """The first-stanza path agrees with a parse of the whole file for every package of this machine's own
    /var/lib/dpkg/status (Debian 12, a few thousand stanzas) - and for names that are only a prefix, or absent."""
    real = "/var/lib/dpkg/status"
    if not os.path.exists(real):
        pytest.skip("no dpkg status file on this machine")
    with open(real, encoding="utf-8", errors="replace") as f:
        text = f.read()
    names = [line[9:] for line in text.splitlines() if line.startswith("Package: ")]
    assert len(names) > 100
    for name in names + ["rdma", "no-such-package", names[0][:-1]]:
        whole = None
        for stanza in text.split("\n\n"):
            fields = _pkgtools.stanza_fields(stanza)
            if whole is None and fields.get("Package") == name and "installed" in fields.get("Status", "").split():
                whole = fields.get("Version")
        assert N.parse_dpkg_status_version(text, name) == whole, name


@pytest.mark.parametrize("memlock,kib", [("unlimited", -1), ("infinity", -1), ("-1", -1), ("65536", 65536), ("64k", None)])
def test_memlock_kib(memlock, kib):
    assert N.memlock_kib(memlock) == kib


def test_sample_delta_is_growth():
    with open(os.path.join(FIXTURES, "mlx5_core.json"), encoding="utf-8") as f:
        first = json.load(f)
    second = json.loads(json.dumps(first))
    nd = second["netdevs"]["ens1f0np0"]
    nd["ethtool_counters"]["rx_discards_phy"] += 5
    nd["counters"]["rx_dropped"] = 0
    nd["irqs"]["per_cpu"][0] += 100
    second["host"]["softnet"]["dropped"] = 2
    second["host"]["tcp"]["out_segs"] += 10
    d = N.sample_delta(first, second, 2.0)
    grown = d["netdevs"]["ens1f0np0"]
    assert grown["ethtool_counters"]["rx_discards_phy"] == 5 and grown["ethtool_counters"]["rx_prio3_pause"] == 0
    assert grown["irqs_per_cpu"][0] == 100 and sum(grown["irqs_per_cpu"]) == 100
    assert d["softnet"] == {"dropped": 2, "time_squeeze": 0} and d["tcp"] == {"out_segs": 10, "retrans_segs": 0}
    assert N.counter_delta({"a": 10}, {"a": 3, "b": 1}) == {"a": 0}     # a reset counter is no growth


@pytest.mark.parametrize("fixture,explicit,fallback,expected", [
    ("rxe", [], ["eth9"], ["data0"]),
    ("mlx5_core", [], [], ["ens1f0np0"]),
    ("virtio_net", [], ["data0"], ["data0"]),     # no RDMA device: rdma_interfaces
    ("virtio_net", [], [], []),
    ("rxe", ["data1"], [], ["data1"]),
])
def test_data_interfaces(fixture, explicit, fallback, expected):
    with open(os.path.join(FIXTURES, fixture + ".json"), encoding="utf-8") as f:
        facts = json.load(f)
    assert N.data_interfaces(facts, explicit, fallback) == expected


def test_device_nodes_skip_udev_link_directories(tmp_path):
    """/dev/infiniband's by-ibdev/ and by-path/ (0755 directories of links) are not device nodes:
    only the files are reported, with their group name and mode (a regular file stands in for a
    character device here; node_perms stats either)."""
    ib = tmp_path / "dev" / "infiniband"
    for d in ("by-ibdev", "by-path"):
        (ib / d).mkdir(parents=True)
        (ib / d).chmod(0o755)
    (ib / "uverbs0").write_text("")
    (ib / "uverbs0").chmod(0o660)
    (ib / "rdma_cm").write_text("")
    (ib / "rdma_cm").chmod(0o666)
    gid = os.stat(str(ib / "uverbs0")).st_gid
    out = N.device_nodes(Host(root=str(tmp_path)), {gid: "rdma"})
    assert out == {"uverbs0": {"gid": gid, "mode": "0660", "group": "rdma"},
                   "rdma_cm": {"gid": gid, "mode": "0666", "group": "rdma"}}
