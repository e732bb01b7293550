# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Table-driven tests for plugins/module_utils/node/_iproute.py: the ``ip -j`` parsers against recorded
output, the argv table, and the interface helpers on a fake node."""
from __future__ import annotations

import json
import os

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _iproute
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import ParseError

from ....conftest import fixture, mlx5, veth


# --------------------------------------------------------------------------- ip -j -d link

LINK_KEYS = {"ifname", "ifindex", "mtu", "min_mtu", "max_mtu", "operstate", "address", "permaddr", "link_type",
             "flags", "master", "kind", "slave_kind", "link", "link_index", "link_netnsid", "parentbus", "parentdev",
             "numtxqueues", "numrxqueues"}


@pytest.mark.parametrize("name, ifname, subset", [
    ("ip-link.multi.json", "lo", {
        "ifindex": 1, "mtu": 65536, "min_mtu": 0, "max_mtu": 0, "link_type": "loopback", "kind": None,
        "operstate": "UNKNOWN", "parentbus": None, "flags": ["LOOPBACK", "UP", "LOWER_UP"]}),
    ("ip-link.multi.json", "ens1f0np0", {
        "ifindex": 2, "mtu": 9000, "min_mtu": 68, "max_mtu": 9978, "parentbus": "pci",
        "parentdev": "0000:3b:00.0", "numtxqueues": 512, "numrxqueues": 63, "kind": None, "master": None,
        "permaddr": None, "address": "b8:ce:f6:1a:2b:3c"}),
    ("ip-link.multi.json", "ens1f1np1", {
        "master": "bond0", "permaddr": "b8:ce:f6:1a:2b:3d", "address": "02:00:0a:14:00:11", "kind": None,
        "flags": ["BROADCAST", "MULTICAST", "SLAVE", "UP", "LOWER_UP"]}),
    ("ip-link.multi.json", "bond0", {"kind": "bond", "mtu": 9000, "parentbus": None, "numtxqueues": 16}),
    ("ip-link.multi.json", "veth0", {
        "kind": "veth", "mtu": 1500, "max_mtu": 65535, "parentbus": None, "parentdev": None, "numrxqueues": 64}),
    ("ip-link.multi.json", "enp1s0", {
        "parentbus": "virtio", "parentdev": "virtio0", "numtxqueues": 4, "address": "52:54:00:8a:1f:e2"}),
    ("ip-link.nodetail.json", "ens1f0np0", {
        "mtu": 9000, "min_mtu": None, "max_mtu": None, "parentbus": None, "numtxqueues": None,
        "numrxqueues": None, "kind": None}),
    ("ip-link.nodetail.json", "ens1f1np1", {"master": "bond0", "permaddr": "b8:ce:f6:1a:2b:3d"}),
    ("ip-link.veth.captured.json", "v0", {
        "ifindex": 3, "kind": "veth", "mtu": 1500, "min_mtu": 68, "max_mtu": 65535, "operstate": "UP",
        "numtxqueues": 2, "numrxqueues": 2, "parentbus": None}),
    # how the devices stack: a bridge port (master, slave_kind), a veth's peer in the same netns
    # (link), a macvlan on it (link), a veth whose peer is in another netns (link_index only)
    ("ip-link.bridge-macvlan.captured.json", "v1", {
        "master": "br0", "slave_kind": "bridge", "kind": "veth", "link": "v0", "link_index": None}),
    ("ip-link.bridge-macvlan.captured.json", "v0", {
        "master": None, "slave_kind": None, "kind": "veth", "link": "v1", "mtu": 9000}),
    ("ip-link.bridge-macvlan.captured.json", "br0", {"kind": "bridge", "link": None, "master": None}),
    ("ip-link.bridge-macvlan.captured.json", "mv0", {"kind": "macvlan", "link": "v0", "mtu": 1500}),
    ("ip-link.veth-peer-netns.captured.json", "p0", {
        "kind": "veth", "link": None, "link_index": 2, "link_netnsid": 0}),
    ("ip-link.multi.json", "veth0", {"link": None, "link_index": 2, "link_netnsid": 0}),
    ("ip-link.vlan.json", "ens1f0np0.100", {"kind": "vlan", "link": "ens1f0np0", "mtu": 9000, "min_mtu": 0}),
    ("ip-link.vlan.json", "bond0.200", {"kind": "vlan", "link": "bond0", "master": None}),
    ("ip-link.vlan.json", "ens1f1np1", {"master": "bond0", "slave_kind": "bond", "link": None}),
])
def test_ip_link_fixtures(name, ifname, subset):
    links = {link["ifname"]: link for link in _iproute.parse_ip_link_json(fixture(name))}
    assert set(links[ifname]) == LINK_KEYS
    assert {key: links[ifname][key] for key in subset} == subset


@pytest.mark.parametrize("name, ifnames", [
    ("ip-link.multi.json", ["lo", "ens1f0np0", "ens1f1np1", "bond0", "veth0", "enp1s0"]),
    ("ip-link.veth.captured.json", ["lo", "v1", "v0"]),
])
def test_ip_link_order_preserved(name, ifnames):
    assert [link["ifname"] for link in _iproute.parse_ip_link_json(fixture(name))] == ifnames


# --------------------------------------------------------------------------- ip -j addr

@pytest.mark.parametrize("name, ifname, expected", [
    ("ip-addr.multi.json", "lo", [
        {"family": "inet", "local": "127.0.0.1", "prefixlen": 8},
        {"family": "inet6", "local": "::1", "prefixlen": 128}]),
    ("ip-addr.multi.json", "ens1f0np0", [
        {"family": "inet", "local": "10.10.1.17", "prefixlen": 24},
        {"family": "inet6", "local": "fe80::bace:f6ff:fe1a:2b3c", "prefixlen": 64}]),
    ("ip-addr.multi.json", "ens1f1np1", []),
    ("ip-addr.multi.json", "bond0", [
        {"family": "inet", "local": "10.20.0.17", "prefixlen": 16},
        {"family": "inet6", "local": "fd00:20::17", "prefixlen": 64},
        {"family": "inet6", "local": "fe80::aff:fe14:11", "prefixlen": 64}]),
    ("ip-addr.multi.json", "enp1s0", [
        {"family": "inet", "local": "192.168.122.17", "prefixlen": 24},
        {"family": "inet6", "local": "fe80::5054:ff:fe8a:1fe2", "prefixlen": 64}]),
    ("ip-addr.veth.captured.json", "v0", [
        {"family": "inet", "local": "10.99.0.1", "prefixlen": 30},
        {"family": "inet6", "local": "fe80::8026:f0ff:fefb:427d", "prefixlen": 64}]),
])
def test_ip_addr_fixtures(name, ifname, expected):
    assert _iproute.parse_ip_addr_json(fixture(name))[ifname] == expected


def test_ip_addr_every_interface_is_a_key():
    assert sorted(_iproute.parse_ip_addr_json(fixture("ip-addr.multi.json"))) == [
        "bond0", "enp1s0", "ens1f0np0", "ens1f1np1", "lo", "veth0"]


def test_ip_addr_skips_entries_without_local():
    text = json.dumps([{"ifname": "eth0", "addr_info": [{}, {"family": "inet", "local": "10.0.0.1", "prefixlen": 24}]}])
    assert _iproute.parse_ip_addr_json(text) == {"eth0": [{"family": "inet", "local": "10.0.0.1", "prefixlen": 24}]}


# --------------------------------------------------------------------------- ip -j route get

ROUTE_KEYS = {"dst", "dev", "type", "gateway", "prefsrc"}


@pytest.mark.parametrize("name, expected", [
    ("ip-route-get.local.captured.json",
     {"dst": "10.9.0.1", "dev": "lo", "type": "local", "gateway": None, "prefsrc": "10.9.0.1"}),
    ("ip-route-get.br0.captured.json",
     {"dst": "10.9.0.5", "dev": "br0", "type": None, "gateway": None, "prefsrc": "10.9.0.1"}),
    ("ip-route-get.gateway.captured.json",
     {"dst": "198.51.100.1", "dev": "br0", "type": None, "gateway": "10.9.0.254", "prefsrc": "10.9.0.1"}),
    ("ip-route-get.fe80-oif.captured.json",
     {"dst": "fe80::1", "dev": "mv0", "type": None, "gateway": None, "prefsrc": "fe80::aa"}),
])
def test_ip_route_get_fixtures(name, expected):
    route = _iproute.parse_ip_route_get_json(fixture(name))
    assert set(route) == ROUTE_KEYS
    assert route == expected


@pytest.mark.parametrize("stdout, rc, stderr, oif, expected, reason, argv", [
    (fixture("ip-route-get.br0.captured.json"), 0, "", None, "br0", "",
     ["ip", "-j", "route", "get", "10.9.0.5"]),
    (fixture("ip-route-get.fe80-oif.captured.json"), 0, "", "mv0", "mv0", "",
     ["ip", "-j", "route", "get", "fe80::1", "oif", "mv0"]),
    ("", 2, fixture("ip-route-get.unreachable.captured.stderr.txt"), None, None,
     "RTNETLINK answers: Network is unreachable", ["ip", "-j", "route", "get", "198.51.100.1"]),
    ("[]", 0, "", None, None, "ip -j route get: no route printed", None),
    ("[{\"dst\": \"10.0.0.1\"}]", 0, "", None, None, "ip -j route get: the route has no 'dev' field", None),
])
def test_route_get_never_raises(stdout, rc, stderr, oif, expected, reason, argv):
    calls = []

    def runner(cmd):
        calls.append([os.path.basename(cmd[0])] + cmd[1:])
        return rc, stdout, stderr

    address = {"mv0": "fe80::1"}.get(oif or "", "198.51.100.1" if rc else "10.9.0.5")
    host = Host(root="/nonexistent", runner=runner, bin_path=lambda name: "/usr/sbin/" + name, environ={})
    route, why = _iproute.route_get(host, address, oif)
    assert (route["dev"] if route else None, why) == (expected, reason)
    if argv:
        assert calls == [argv]


def test_route_get_without_ip_is_an_answer():
    host = Host(root="/nonexistent", runner=lambda argv: (0, "", ""), bin_path=lambda name: None, environ={})
    route, why = _iproute.route_get(host, "10.0.0.1")
    assert route is None and "required command 'ip' not found" in why


# --------------------------------------------------------------------------- errors

@pytest.mark.parametrize("func, text, tool, detail", [
    (_iproute.parse_ip_link_json, "{not json", "ip -j link", "malformed JSON"),
    (_iproute.parse_ip_link_json, '{"ifname": "lo"}', "ip -j link", "expected a JSON list"),
    (_iproute.parse_ip_link_json, '["lo"]', "ip -j link", "not an object"),
    (_iproute.parse_ip_link_json, '[{"ifindex": 1}]', "ip -j link", "ifname"),
    (_iproute.parse_ip_addr_json, "", "ip -j addr", "malformed JSON"),
    (_iproute.parse_ip_addr_json, '"lo"', "ip -j addr", "expected a JSON list"),
    (_iproute.parse_ip_addr_json, '[{"ifname": "lo", "addr_info": "x"}]', "ip -j addr", "addr_info"),
    (_iproute.parse_ip_route_get_json, "{", "ip -j route get", "malformed JSON"),
    (_iproute.parse_ip_route_get_json, '{"dev": "lo"}', "ip -j route get", "expected a JSON list"),
])
def test_parse_errors_name_the_tool(func, text, tool, detail):
    with pytest.raises(ParseError) as excinfo:
        func(text)
    message = str(excinfo.value)
    assert message.startswith(tool + ":")
    assert detail in message


def test_parse_error_is_a_value_error():
    assert issubclass(ParseError, ValueError)
    with pytest.raises(ValueError):
        _iproute.parse_ip_link_json("[")


@pytest.mark.parametrize("func", [
    _iproute.parse_ip_link_json, _iproute.parse_ip_addr_json, _iproute.parse_ip_route_get_json,
])
def test_non_text_input_raises_parse_error(func):
    with pytest.raises(ParseError):
        func(None)


# --------------------------------------------------------------------------- the tool, through the runner

@pytest.mark.parametrize("action, values, argv", [
    ("links", {}, ["ip", "-j", "-d", "link", "show"]),
    ("addrs", {}, ["ip", "-j", "addr", "show"]),
    ("set_mtu", {"ifname": "data0", "mtu": 9000}, ["ip", "link", "set", "dev", "data0", "mtu", "9000"]),
    ("route_get", {"address": "10.0.0.1"}, ["ip", "-j", "route", "get", "10.0.0.1"]),
    ("route_get_oif", {"address": "fe80::1", "ifname": "mgmt0"},
     ["ip", "-j", "route", "get", "fe80::1", "oif", "mgmt0"]),
])
def test_argv_table(action, values, argv):
    assert _iproute.IP.argv(action, **values) == argv


def test_links_addrs_interfaces_and_drivers(node):
    node.add_nic(mlx5(addresses=[("10.0.0.1", 24)]))
    node.add_nic(veth())
    host = node.host()
    assert [link["ifname"] for link in _iproute.links(host)] == ["ens1f0np0", "data0"]
    assert _iproute.addrs(host) == {"ens1f0np0": [{"family": "inet", "local": "10.0.0.1", "prefixlen": 24}],
                                    "data0": []}
    assert _iproute.interfaces(host) == ["data0", "ens1f0np0"]
    assert _iproute.iface_driver(host, "ens1f0np0") == "mlx5_core"     # sysfs driver link, no command
    assert ["ip", "-j", "-d", "link", "show"] not in node.calls[2:]
    assert _iproute.iface_driver(host, "data0") == "veth"              # no device: the link kind
    assert _iproute.iface_driver(host, "nosuch0") is None


def test_set_mtu_and_its_error(node):
    nic = node.add_nic(mlx5())
    host = node.host()
    _iproute.set_mtu(host, "ens1f0np0", 9000)
    assert nic.mtu == 9000 and node.calls[-1] == ["ip", "link", "set", "dev", "ens1f0np0", "mtu", "9000"]
    with pytest.raises(HostError) as excinfo:
        _iproute.set_mtu(host, "ens1f0np0", 10000)
    assert str(excinfo.value) == ("ip link set dev ens1f0np0 mtu 10000 failed (rc=2): "
                                  "Error: mtu greater than device maximum.")
