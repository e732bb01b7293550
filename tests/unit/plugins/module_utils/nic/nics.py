# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Interfaces the nic tests plan against: three observed NICs, and whole networks read from recorded
``ip -j`` outputs (not a test module)."""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _domain as _nic
from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _guard
from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _plan as _planner
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host

from ....conftest import fixture

J = "/var/lib/hpcnet-rdma"


def NO_ROUTE(address, oif):
    return None, "no route (test)"


MLX = {"name": "ens1f0np0", "driver": "mlx5_core", "mtu": 1500, "min_mtu": 68, "max_mtu": 9978,
       "address": "b8:ce:f6:00:00:01", "permaddr": None,
       "addresses": [{"family": "inet", "local": "10.10.1.5", "prefixlen": 16}],
       "rings": {"max": {"rx": 8192, "rx_mini": None, "rx_jumbo": None, "tx": 8192},
                 "current": {"rx": 1024, "rx_mini": None, "rx_jumbo": None, "tx": 1024}},
       "channels": {"max": {"rx": None, "tx": None, "other": None, "combined": 63},
                    "current": {"rx": None, "tx": None, "other": None, "combined": 63}},
       "coalesce": {"adaptive_rx": True, "adaptive_tx": True, "rx_usecs": 8, "tx_usecs": 16,
                    "rx_frames": 128, "tx_frames": 32}}
VETH = {"name": "data0", "driver": "veth", "mtu": 1500, "min_mtu": 68, "max_mtu": 65535,
        "address": "02:00:00:00:00:02", "permaddr": None,
        "addresses": [{"family": "inet", "local": "10.77.0.1", "prefixlen": 24}],
        "rings": None, "channels": {"max": {"rx": 2, "tx": 2, "other": None, "combined": None},
                                    "current": {"rx": 1, "tx": 1, "other": None, "combined": None}},
        "coalesce": None}
MGMT = {"name": "eth0", "driver": "virtio_net", "mtu": 1500, "min_mtu": 68, "max_mtu": 65535,
        "address": "52:54:00:00:00:01", "permaddr": None,
        "addresses": [{"family": "inet", "local": "192.168.122.10", "prefixlen": 24}],
        "rings": None, "channels": None, "coalesce": None}
LINKS = {"ens1f0np0": MLX, "data0": VETH, "eth0": MGMT}


def network(link_fixture, addr_fixture=None):
    """``read_network`` of a node whose ip prints the given recorded outputs."""
    def runner(argv):
        if "link" in argv:
            return 0, fixture(link_fixture), ""
        if "addr" in argv:
            return 0, fixture(addr_fixture) if addr_fixture else "[]", ""
        return 1, "", "unexpected %r" % argv
    return _nic.read_network(Host(root="/nonexistent", runner=runner, bin_path=lambda n: "/sbin/" + n, environ={}))


BRIDGED = network("ip-link.bridge-macvlan.captured.json", "ip-addr.bridge-macvlan.captured.json")


def plan_one(settings, obs, cap=False, mode="runtime", mgmt=(), allow=False, **kw):
    """The planner on one interface: ``settings`` for ``obs``, ``mgmt`` the connection's interfaces."""
    if not isinstance(mgmt, _guard.ManagementPath):
        mgmt = list(mgmt)
    return _planner.plan({obs["name"]: settings}, {obs["name"]: obs}, mode, cap, mgmt, allow, {}, J, **kw)
