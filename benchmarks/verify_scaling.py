# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""How the controller-side verify comparison scales: plan the probes, evaluate every family and render
the three reports for 2, 50 and 1000 synthetic hosts (the recorded rxe fabric_info output, with one
odd MTU, drift and a failed ping so every family has work), and print the time and the time per host.

    PYTHONPATH=build/collections python3 benchmarks/verify_scaling.py [--repeat 3] [SIZES...]

Linear means the per-host column stays flat as the hosts grow.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "build", "collections"))

from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _findings as F  # noqa: E402
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _findings_catalogue as C  # noqa: E402
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _findings_path as P  # noqa: E402
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _findings_report as R  # noqa: E402

FIXTURE = os.path.join(HERE, "..", "tests", "unit", "fixtures", "fabric_info", "rxe.json")


def synthetic(n: int) -> dict:
    with open(FIXTURE, encoding="utf-8") as f:
        fabric = json.load(f)
    nodes = {}
    for i in range(n):
        fab = copy.deepcopy(fabric)
        if i % 97 == 5:
            fab["netdevs"]["data0"]["mtu"] = 1500
        info = {"fabric": fab, "data_interfaces": ["data0"], "missing_interfaces": [],
                "addresses": {"data0": ["10.%d.%d.%d" % (i >> 16, (i >> 8) & 255, i & 255)]},
                "delta": {"interval": 2.0, "netdevs": {"data0": {"counters": {}, "ethtool_counters": {"rx_queue_0_drops": i % 3}}},
                          "softnet": {"dropped": 0, "time_squeeze": 0}, "tcp": {"out_segs": 100, "retrans_segs": 0}},
                "kernel": "6.1.0-57-amd64", "rdma_core": {"version": "44.0-2", "source": "/var/lib/dpkg/status"},
                "irqs": {"data0": {"local_cpus": "0-1", "online_cpus": "0-1", "irqs": [
                    {"irq": 38, "name": "virtio2-input.0", "affinity": "0", "effective": "0"},
                    {"irq": 39, "name": "virtio2-output.0", "affinity": "1", "effective": "1"}]}},
                "irqbalance": {"installed": True, "service": {"active": True}, "policyscript": True},
                "coalesce": {"data0": None},
                "memlock": {"group": "rdma", "soft": {"kib": -1, "value": "unlimited", "source": "x"}, "hard": None},
                "devnodes": {"uverbs0": {"gid": 106, "group": "rdma", "mode": "0660"}},
                "apps": {"nccl": {"file": "/etc/nccl.conf", "key": "NCCL_IB_TC", "present": True, "value": "106"},
                         "ucx": {"file": "/etc/ucx/ucx.conf", "key": "UCX_IB_TRAFFIC_CLASS", "present": True, "value": "106"}},
                "profile": {"name": "mpi", "digest": "sha256:aa", "nic": {"mtu": 9000}}}
        drift = [{"key": "irq:virtio2-output.0", "applied": "1", "current": "0-1"}] if i % 50 == 7 else []
        nodes["node%04d" % i] = {"info": info, "state": {"drift": drift, "profile": {"name": "mpi"}},
                                 "qos": {"interfaces": {"data0": {"dcb": False}},
                                         "rdma_ports": [{"device": "rxe0", "port": 1, "netdev": "data0", "tos": 106, "mode": "RoCE v2"}]},
                                 "ping": {"rc": 1 if i % 97 in (4, 5) else 0, "stdout": "", "stderr": ""}}
    return nodes


def once(nodes: dict) -> tuple:
    hosts = list(nodes)
    start = time.perf_counter()
    probes = P.plan_probes(nodes, hosts)
    found = F.evaluate(nodes, hosts, C.FAMILIES, probes)
    report = R.build(found, hosts, list(C.FAMILIES), "error", "t")
    R.to_json(report)
    R.to_markdown(report)
    R.to_html(report)
    return time.perf_counter() - start, len(found)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[2, 50, 1000])
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs per size")
    args = parser.parse_args()
    print("%8s %12s %16s %10s" % ("hosts", "seconds", "ms per host", "findings"))
    for n in args.sizes:
        nodes = synthetic(n)
        best, count = min(once(nodes) for _round in range(args.repeat))
        print("%8d %12.4f %16.3f %10d" % (n, best, 1000.0 * best / n, count))
    return 0


if __name__ == "__main__":
    sys.exit(main())
