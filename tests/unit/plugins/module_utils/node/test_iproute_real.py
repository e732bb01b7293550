# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``ip -j addr`` / ``ip -j -d link`` read right on real captures (tests/unit/fixtures/real/ip/)."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _iproute

from ....fixtures.real.loader import real_capture as real


# (capture, ifname, mtu, operstate, link_type, flags include UP, link (peer), IPv4 addresses, IPv6 count)
CASES = [
    ("ip/addr.iwlwifi.laptop.json", "wlp2s0", 1500, "UP", "ether", True, None, ["192.168.15.4/24"], 2),
    ("ip/addr.iwlwifi.laptop.json", "lo", 65536, "UNKNOWN", "loopback", True, None, ["127.0.0.1/8"], 1),
    ("ip/addr.veth.netns.json", "veth0", 1500, "UP", "ether", True, "veth0-peer", ["192.168.35.2/24"], 1),
    ("ip/addr.veth.netns.json", "veth0-peer", 1500, "UP", "ether", True, "veth0", [], 1),
    ("ip/addr.veth.netns.json", "lo", 65536, "DOWN", "loopback", False, None, [], 0),
]


@pytest.mark.parametrize("path, ifname, mtu, operstate, link_type, up, peer, v4, v6", CASES,
                         ids=["%s:%s" % (c[0], c[1]) for c in CASES])
def test_ip_addr_and_link_real(path, ifname, mtu, operstate, link_type, up, peer, v4, v6):
    text = real(path)
    link = dict((x["ifname"], x) for x in _iproute.parse_ip_link_json(text))[ifname]
    assert (link["mtu"], link["operstate"], link["link_type"], "UP" in link["flags"], link["link"]) == (
        mtu, operstate, link_type, up, peer)
    addrs = _iproute.parse_ip_addr_json(text)[ifname]
    assert ["%s/%d" % (a["local"], a["prefixlen"]) for a in addrs if a["family"] == "inet"] == v4
    assert len([a for a in addrs if a["family"] == "inet6"]) == v6


def test_ip_d_link_real_veth_in_another_namespace():
    link = _iproute.parse_ip_link_json(real("ip/link-d.veth.netns.json"))[0]
    assert (link["ifname"], link["kind"], link["min_mtu"], link["max_mtu"]) == ("aoh000000000001", "veth", 68, 65535)
    assert (link["link"], link["link_index"], link["link_netnsid"]) == (None, 17, 0)
    assert (link["numtxqueues"], link["numrxqueues"], link["operstate"]) == (1, 1, "UP")
