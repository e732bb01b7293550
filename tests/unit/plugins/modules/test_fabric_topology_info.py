# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""fabric_topology_info on a fake host (a sysfs tree under tmp_path, a runner answering with real
captures): what it reads, what it reports when a tool is missing or fails, and that it runs nothing
it was not asked to and writes nothing."""
from __future__ import annotations

import json
import os

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.modules import fabric_topology_info

from ...conftest import Failed, FakeModule
from ...fixtures.real.loader import real_capture

LLDP = json.dumps({"lldp": json.loads(real_capture("lldpcli/sonic-lldp-syncd.lldpd-0.9.many.json"))["lldp"]})
IBNET = real_capture("ibnetdiscover/full.rdma-core-man.voltaire.txt")


def node(tmp_path, ib=False, tools=("lldpcli", "ibnetdiscover"), answers=None):
    root = str(tmp_path / "root")
    os.makedirs(root + "/proc/sys/kernel")
    with open(root + "/proc/sys/kernel/hostname", "w") as f:
        f.write("n1\n")
    if ib:
        port = root + "/sys/class/infiniband/mlx4_0/ports/1"
        os.makedirs(port)
        with open(port + "/link_layer", "w") as f:
            f.write("InfiniBand\n")
        with open(root + "/sys/class/infiniband/mlx4_0/node_guid", "w") as f:
            f.write("0008:f104:0396:0558\n")
    ran = []
    answers = dict({"lldpcli": (0, LLDP, ""), "ibnetdiscover": (0, IBNET, "")}, **(answers or {}))

    def runner(argv):
        ran.append(argv)
        return answers[os.path.basename(argv[0])]

    host = Host(root=root, runner=runner, bin_path=lambda name: "/usr/sbin/" + name if name in tools else None)
    return host, ran


def call(host, check_mode=False, **params):
    module = FakeModule(fabric_topology_info.ARGUMENT_SPEC, params, check_mode=check_mode)
    return fabric_topology_info.run(module, host)


@pytest.mark.parametrize("check_mode", [False, True])
def test_reads_lldp_and_the_ib_fabric(tmp_path, check_mode):
    host, ran = node(tmp_path, ib=True)
    before = sorted(os.walk(host.root))
    res = call(host, check_mode=check_mode)
    assert res["changed"] is False and res["hostname"] == "n1" and res["findings"] == []
    assert len(res["lldp"]["interfaces"]) == 33 and res["lldp"]["interfaces"]["eth0"][0]["chassis_name"] == "switch218ad08"
    assert res["infiniband"]["source"] == "ibnetdiscover"
    assert res["infiniband"]["local"] == {"mlx4_0": {"node_guid": "0008f10403960558", "ports": ["1"]}}
    assert sorted(res["infiniband"]["switches"]) == ["0008f10400410015", "005442ba00003080"]
    assert ran == [["/usr/sbin/lldpcli", "-f", "json", "show", "neighbors", "details"], ["/usr/sbin/ibnetdiscover"]]
    assert sorted(os.walk(host.root)) == before


def test_interface_patterns_filter_the_lldp_part(tmp_path):
    host, _ran = node(tmp_path)
    res = call(host, interfaces=["Ethernet1*"])
    assert sorted(res["lldp"]["interfaces"]) == ["Ethernet100", "Ethernet104", "Ethernet108", "Ethernet112",
                                                 "Ethernet116", "Ethernet12", "Ethernet120", "Ethernet124", "Ethernet16"]


def test_no_ib_port_runs_no_ibnetdiscover(tmp_path):
    host, ran = node(tmp_path, ib=False)
    res = call(host)
    assert res["infiniband"]["source"] is None and res["infiniband"]["switches"] == {}
    assert [a[0] for a in ran] == ["/usr/sbin/lldpcli"]


def test_missing_tools_are_findings_not_failures(tmp_path):
    host, ran = node(tmp_path, ib=True, tools=())
    res = call(host)
    assert res["lldp"] == {"installed": False, "error": None, "interfaces": {}}
    assert res["infiniband"]["error"].startswith("the node has an InfiniBand port but no ibnetdiscover")
    assert res["findings"] == ["lldpcli is not installed (package lldpd): no LLDP neighbours read",
                               "InfiniBand topology unreadable: " + res["infiniband"]["error"]]
    assert ran == []


def test_a_failing_or_garbled_tool_is_reported_with_the_rest_kept(tmp_path):
    host, _ran = node(tmp_path, ib=True, answers={
        "lldpcli": (1, "", "[WARN/lldpctl] unable to connect to socket /run/lldpd/lldpd.socket: No such file or directory"),
        "ibnetdiscover": (0, "garbage\n", "")})
    res = call(host)
    assert "unable to connect to socket" in res["lldp"]["error"] and res["lldp"]["interfaces"] == {}
    assert res["infiniband"]["error"] == "ibnetdiscover: no Switch, Ca or Rt record in 1 lines"
    assert res["infiniband"]["local"]["mlx4_0"]["node_guid"] == "0008f10403960558"
    assert len(res["findings"]) == 2


def test_ibnetdiscover_file_is_read_instead_of_running_the_tool(tmp_path):
    host, ran = node(tmp_path, ib=False)
    saved = real_capture("ibnetdiscover/ports.infiniband-exporter.test.txt")
    os.makedirs(host.root + "/var/lib/hpcnet-rdma")
    with open(host.root + "/var/lib/hpcnet-rdma/ib.txt", "w") as f:
        f.write(saved)
    res = call(host, lldp=False, ibnetdiscover_file="/var/lib/hpcnet-rdma/ib.txt")
    assert res["lldp"] is None and res["infiniband"]["source"] == "/var/lib/hpcnet-rdma/ib.txt"
    assert len(res["infiniband"]["switches"]) == 4 and ran == []


@pytest.mark.parametrize("params, message", [
    (dict(ibnetdiscover_file="/nonexistent/ib.txt"), "ibnetdiscover_file: '/nonexistent/ib.txt' does not exist"),
    (dict(lldp="maybe"), "lldp"),
    (dict(interfaces="eth0", unknown=1), "unknown"),
])
def test_bad_input_names_the_field_and_changes_nothing(tmp_path, params, message):
    host, _ran = node(tmp_path)
    before = sorted(os.walk(host.root))
    with pytest.raises(Failed, match=message):
        call(host, **params)
    assert sorted(os.walk(host.root)) == before
