# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Table-driven tests for plugins/module_utils/_parse.py against recorded tool output."""
from __future__ import annotations

import json
import os

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils import _parse

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")


def fixture(name: str) -> str:
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


def rings(rx, rx_mini, rx_jumbo, tx):
    return {"rx": rx, "rx_mini": rx_mini, "rx_jumbo": rx_jumbo, "tx": tx}


def channels(rx, tx, other, combined):
    return {"rx": rx, "tx": tx, "other": other, "combined": combined}


# ethtool 6.1 prints these four extra ring lines; a driver that implements none of them
# still reports TX Push as "off" because the kernel always sends that attribute.
EXTRA_61_DEFAULT = {"rx_buf_len": None, "cqe_size": None, "tx_push": "off", "tcp_data_split": None}


# --------------------------------------------------------------------------- ethtool -g

@pytest.mark.parametrize("name, expected", [
    ("ethtool-g.mlx5_core.txt", {
        "max": rings(8192, None, None, 8192),
        "current": rings(1024, None, None, 1024),
        "extra": EXTRA_61_DEFAULT,
    }),
    ("ethtool-g.mlx5_core.ethtool-6.9.txt", {
        "max": rings(8192, None, None, 8192),
        "current": rings(4096, None, None, 4096),
        "extra": {"max_tx_push_buff_len": None, "rx_buf_len": None, "cqe_size": None, "tx_push": "off",
                  "rx_push": "off", "tx_push_buff_len": None, "tcp_data_split": None},
    }),
    ("ethtool-g.ice.txt", {
        "max": rings(8160, None, None, 8160),
        "current": rings(2048, None, None, 2048),
        "extra": EXTRA_61_DEFAULT,
    }),
    ("ethtool-g.ice.ioctl.txt", {
        "max": rings(8160, 0, 0, 8160),
        "current": rings(2048, 0, 0, 2048),
        "extra": {},
    }),
    ("ethtool-g.bnxt_en.txt", {
        "max": rings(2047, None, 8191, 2047),
        "current": rings(511, None, 2044, 511),
        "extra": EXTRA_61_DEFAULT,
    }),
    ("ethtool-g.virtio_net.txt", {
        "max": rings(1024, None, None, 256),
        "current": rings(1024, None, None, 256),
        "extra": {},
    }),
    ("ethtool-g.virtio_net.captured.txt", {
        "max": rings(256, None, None, 256),
        "current": rings(256, None, None, 256),
        "extra": EXTRA_61_DEFAULT,
    }),
])
def test_rings_fixtures(name, expected):
    assert _parse.parse_ethtool_rings(fixture(name)) == expected


RINGS_SYNTHETIC_EXTRAS = (
    "Ring parameters for eth9:\n"
    "Pre-set maximums:\n"
    "RX:\t\t\t4096\n"
    "TX:\t\t\t4096\n"
    "TX push buff len:\t256\n"
    "Some Future Max:\t7\n"
    "Current hardware settings:\n"
    "RX:\t\t\t1024\n"
    "TX:\t\t\t1024\n"
    "RX Buf Len:\t\t4096\n"
    "CQE Size:\t\t64\n"
    "TX Push:\t\ton\n"
    "RX Push:\t\toff\n"
    "TX push buff len:\t128\n"
    "TCP data split:\t\toff\n"
    "HDS thresh:\t\t0\n"
    "a line without any colon at all\n"
)


@pytest.mark.parametrize("path, value", [
    (("max", "rx"), 4096),
    (("max", "rx_mini"), None),      # line absent -> None
    (("max", "rx_jumbo"), None),
    (("current", "tx"), 1024),
    (("extra", "rx_buf_len"), 4096),
    (("extra", "cqe_size"), 64),
    (("extra", "tx_push"), "on"),
    (("extra", "rx_push"), "off"),
    (("extra", "tx_push_buff_len"), 128),
    (("extra", "max_tx_push_buff_len"), 256),
    (("extra", "max_some_future_max"), 7),
    (("extra", "tcp_data_split"), "off"),
    (("extra", "hds_thresh"), 0),
])
def test_rings_extra_lines_are_collected(path, value):
    parsed = _parse.parse_ethtool_rings(RINGS_SYNTHETIC_EXTRAS)
    assert parsed[path[0]][path[1]] == value


def test_rings_order_of_lines_does_not_matter():
    text = "Ring parameters for x:\nPre-set maximums:\nTX:\t\t512\nRX:\t\t1024\nCurrent hardware settings:\nTX:\t256\nRX:\t128\n"
    parsed = _parse.parse_ethtool_rings(text)
    assert parsed["max"] == rings(1024, None, None, 512)
    assert parsed["current"] == rings(128, None, None, 256)


# --------------------------------------------------------------------------- ethtool -l

@pytest.mark.parametrize("name, expected_max, expected_current", [
    ("ethtool-l.mlx5_core.txt", channels(None, None, None, 63), channels(None, None, None, 63)),
    ("ethtool-l.mlx5_core.ioctl.txt", channels(0, 0, 0, 63), channels(0, 0, 0, 63)),
    ("ethtool-l.ice.txt", channels(64, 64, 1, 64), channels(0, 0, 1, 32)),
    ("ethtool-l.bnxt_en.txt", channels(74, 74, None, 74), channels(0, 0, None, 8)),
    ("ethtool-l.virtio_net.txt", channels(None, None, None, 4), channels(None, None, None, 4)),
    ("ethtool-l.virtio_net.captured.txt", channels(None, None, None, 1), channels(None, None, None, 1)),
    ("ethtool-l.veth.txt", channels(64, 64, None, None), channels(1, 1, None, None)),
    ("ethtool-l.veth.captured.txt", channels(2, 2, None, None), channels(1, 1, None, None)),
])
def test_channels_fixtures(name, expected_max, expected_current):
    assert _parse.parse_ethtool_channels(fixture(name)) == {"max": expected_max, "current": expected_current}


# --------------------------------------------------------------------------- ethtool -c

@pytest.mark.parametrize("name, subset", [
    ("ethtool-c.mlx5_core.txt", {
        "adaptive_rx": True, "adaptive_tx": True, "rx_usecs": 8, "rx_frames": 128, "tx_usecs": 8,
        "tx_frames": 128, "rx_usecs_irq": None, "stats_block_usecs": None, "cqe_mode_rx": True,
        "cqe_mode_tx": False,
    }),
    ("ethtool-c.mlx5_core.ethtool-6.9.txt", {
        "adaptive_rx": True, "adaptive_tx": True, "rx_usecs": 8, "rx_frames": 128, "pkt_rate_low": None,
        "cqe_mode_rx": True, "cqe_mode_tx": False, "tx_aggr_max_bytes": None, "tx_aggr_max_frames": None,
        "tx_aggr_time_usecs": None,
    }),
    ("ethtool-c.ice.txt", {
        "adaptive_rx": True, "adaptive_tx": True, "rx_usecs": 50, "tx_usecs": 50, "rx_frames": None,
        "rx_usecs_high": 0, "cqe_mode_rx": None, "cqe_mode_tx": None,
    }),
    ("ethtool-c.bnxt_en.txt", {
        "adaptive_rx": True, "adaptive_tx": None, "rx_usecs": 10, "rx_frames": 15, "rx_usecs_irq": 1,
        "rx_frames_irq": 1, "tx_usecs": 28, "tx_frames": 30, "stats_block_usecs": 1000000,
        "cqe_mode_rx": False, "cqe_mode_tx": False,
    }),
    ("ethtool-c.virtio_net.captured.txt", {
        "adaptive_rx": False, "adaptive_tx": None, "rx_usecs": 0, "rx_frames": 1, "tx_frames": 1,
        "rx_usecs_irq": None, "tx_frame_high": None, "cqe_mode_rx": None,
    }),
    ("ethtool-c.virtio_net.ethtool-5.10.txt", {
        "adaptive_rx": None, "adaptive_tx": None, "rx_usecs": None, "rx_frames": 1, "tx_frames": 1,
    }),
])
def test_coalesce_fixtures(name, subset):
    parsed = _parse.parse_ethtool_coalesce(fixture(name))
    assert {key: parsed[key] for key in subset} == subset


# the 20 numeric fields every ethtool -c since the ioctl days prints
CLASSIC_COALESCE_KEYS = {
    "stats_block_usecs", "sample_interval", "pkt_rate_low", "pkt_rate_high",
    "rx_usecs", "rx_frames", "rx_usecs_irq", "rx_frames_irq",
    "tx_usecs", "tx_frames", "tx_usecs_irq", "tx_frames_irq",
    "rx_usecs_low", "rx_frame_low", "tx_usecs_low", "tx_frame_low",
    "rx_usecs_high", "rx_frame_high", "tx_usecs_high", "tx_frame_high",
}


@pytest.mark.parametrize("name, extra_keys", [
    ("ethtool-c.ice.ethtool-5.10.txt", set()),
    ("ethtool-c.ice.txt", {"cqe_mode_rx", "cqe_mode_tx"}),
    ("ethtool-c.mlx5_core.ethtool-6.9.txt",
     {"cqe_mode_rx", "cqe_mode_tx", "tx_aggr_max_bytes", "tx_aggr_max_frames", "tx_aggr_time_usecs"}),
])
def test_coalesce_key_set_per_ethtool_version(name, extra_keys):
    parsed = _parse.parse_ethtool_coalesce(fixture(name))
    assert set(parsed) == CLASSIC_COALESCE_KEYS | {"adaptive_rx", "adaptive_tx"} | extra_keys


def test_coalesce_old_and_new_layout_agree():
    old = _parse.parse_ethtool_coalesce(fixture("ethtool-c.ice.ethtool-5.10.txt"))
    new = _parse.parse_ethtool_coalesce(fixture("ethtool-c.ice.txt"))
    assert {k: v for k, v in new.items() if not k.startswith("cqe_mode")} == old


def test_coalesce_ignores_unknown_lines():
    text = (
        "Coalesce parameters for eth0:\n"
        "Adaptive RX: on  TX: off\n"
        "rx-usecs: 3\n"
        "rx-profile:\n"
        "{.usec =   1, .pkts = 256, .comps = n/a,},\n"
        "something-new: fancy\n"
    )
    assert _parse.parse_ethtool_coalesce(text) == {"adaptive_rx": True, "adaptive_tx": False, "rx_usecs": 3}


# --------------------------------------------------------------------------- ethtool -i

@pytest.mark.parametrize("name, expected", [
    ("ethtool-i.mlx5_core.txt", {
        "driver": "mlx5_core", "version": "6.1.0-18-amd64", "firmware_version": "20.39.1002 (MT_0000000224)",
        "expansion_rom_version": "", "bus_info": "0000:3b:00.0", "supports_statistics": True,
        "supports_test": True, "supports_eeprom_access": False, "supports_register_dump": False,
        "supports_priv_flags": True,
    }),
    ("ethtool-i.ice.txt", {
        "driver": "ice", "version": "6.1.0-18-amd64", "firmware_version": "4.20 0x80017785 1.3346.0",
        "expansion_rom_version": "", "bus_info": "0000:af:00.0", "supports_statistics": True,
        "supports_test": True, "supports_eeprom_access": True, "supports_register_dump": True,
        "supports_priv_flags": True,
    }),
    ("ethtool-i.veth.captured.txt", {
        "driver": "veth", "version": "1.0", "firmware_version": "", "expansion_rom_version": "",
        "bus_info": "", "supports_statistics": True, "supports_test": False, "supports_eeprom_access": False,
        "supports_register_dump": False, "supports_priv_flags": False,
    }),
    ("ethtool-i.virtio_net.captured.txt", {
        "driver": "virtio_net", "version": "1.0.0", "firmware_version": "", "expansion_rom_version": "",
        "bus_info": "0000:00:03.0", "supports_statistics": True, "supports_test": False,
        "supports_eeprom_access": False, "supports_register_dump": False, "supports_priv_flags": False,
    }),
])
def test_driver_fixtures(name, expected):
    assert _parse.parse_ethtool_driver(fixture(name)) == expected


def test_driver_missing_keys_are_absent():
    assert _parse.parse_ethtool_driver("driver: foo\nbus-info: 0000:01:00.0\n") == {
        "driver": "foo", "bus_info": "0000:01:00.0"}


# --------------------------------------------------------------------------- ethtool -S

@pytest.mark.parametrize("name, count, subset", [
    ("ethtool-S.mlx5_core.txt", 58, {
        "rx_packets": 184467302, "tx_packets": 93710247, "rx_out_of_buffer": 1423, "rx_discards_phy": 317,
        "rx_pause_ctrl_phy": 0, "rx_prio3_pause": 2741, "rx0_packets": 96112840, "tx1_packets": 46600223,
        "ch1_events": 1988304,
    }),
    ("ethtool-S.ice.txt", 57, {
        "rx_unicast": 72316091, "rx_dropped": 41, "link_xoff_rx.nic": 6, "rx_queue_0_packets": 36158212,
        "tx_queue_1_bytes": 2080026132, "rx_dropped.nic": 0, "rx_bytes.nic": 108729512780,
    }),
    ("ethtool-S.veth.captured.txt", 10, {"peer_ifindex": 2, "rx_queue_0_drops": 0, "tx_queue_0_xdp_xmit": 0}),
    ("ethtool-S.virtio_net.captured.txt", 20, {"rx_drops": 0, "rx0_xdp_packets": 0, "tx0_tx_timeouts": 0}),
])
def test_stats_fixtures(name, count, subset):
    parsed = _parse.parse_ethtool_stats(fixture(name))
    assert len(parsed) == count
    assert {key: parsed[key] for key in subset} == subset
    assert all(isinstance(value, int) for value in parsed.values())
    assert "NIC statistics" not in "".join(parsed)


def test_stats_names_kept_as_printed():
    # bnxt_en prints per-ring counters as "[0]: rx_ucast_packets: N": the name is kept verbatim
    text = "NIC statistics:\n     [0]: rx_ucast_packets: 5\n     rx_total_discard_pkts: 7\n"
    assert _parse.parse_ethtool_stats(text) == {"[0]: rx_ucast_packets": 5, "rx_total_discard_pkts": 7}


def test_stats_header_only_is_empty():
    assert _parse.parse_ethtool_stats("NIC statistics:\n") == {}


# --------------------------------------------------------------------------- ip -j -d link

LINK_KEYS = {"ifname", "ifindex", "mtu", "min_mtu", "max_mtu", "operstate", "address", "permaddr", "link_type",
             "flags", "master", "kind", "parentbus", "parentdev", "numtxqueues", "numrxqueues"}


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
])
def test_ip_link_fixtures(name, ifname, subset):
    links = {link["ifname"]: link for link in _parse.parse_ip_link_json(fixture(name))}
    assert set(links[ifname]) == LINK_KEYS
    assert {key: links[ifname][key] for key in subset} == subset


@pytest.mark.parametrize("name, ifnames", [
    ("ip-link.multi.json", ["lo", "ens1f0np0", "ens1f1np1", "bond0", "veth0", "enp1s0"]),
    ("ip-link.veth.captured.json", ["lo", "v1", "v0"]),
])
def test_ip_link_order_preserved(name, ifnames):
    assert [link["ifname"] for link in _parse.parse_ip_link_json(fixture(name))] == ifnames


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
    assert _parse.parse_ip_addr_json(fixture(name))[ifname] == expected


def test_ip_addr_every_interface_is_a_key():
    assert sorted(_parse.parse_ip_addr_json(fixture("ip-addr.multi.json"))) == [
        "bond0", "enp1s0", "ens1f0np0", "ens1f1np1", "lo", "veth0"]


def test_ip_addr_skips_entries_without_local():
    text = json.dumps([{"ifname": "eth0", "addr_info": [{}, {"family": "inet", "local": "10.0.0.1", "prefixlen": 24}]}])
    assert _parse.parse_ip_addr_json(text) == {"eth0": [{"family": "inet", "local": "10.0.0.1", "prefixlen": 24}]}


# --------------------------------------------------------------------------- errors

@pytest.mark.parametrize("func, text, tool, detail", [
    (_parse.parse_ethtool_rings, "", "ethtool -g", "empty output"),
    (_parse.parse_ethtool_rings, "complete garbage\nnothing to see\n", "ethtool -g", "Pre-set maximums"),
    (_parse.parse_ethtool_rings, "Ring parameters for x:\nCurrent hardware settings:\nRX:\t\t256\n",
     "ethtool -g", "Pre-set maximums"),
    (_parse.parse_ethtool_rings, "Ring parameters for x:\nPre-set maximums:\nRX:\t\t256\n",
     "ethtool -g", "Current hardware settings"),
    (_parse.parse_ethtool_rings, "Pre-set maximums:\nRX:\t\tlots\nCurrent hardware settings:\n",
     "ethtool -g", "RX:\\t\\tlots"),
    (_parse.parse_ethtool_channels, "garbage\n", "ethtool -l", "Pre-set maximums"),
    (_parse.parse_ethtool_channels, "   \n\n", "ethtool -l", "empty output"),
    (_parse.parse_ethtool_channels, "Pre-set maximums:\nCombined:\tsixty\nCurrent hardware settings:\n",
     "ethtool -l", "Combined:\\tsixty"),
    (_parse.parse_ethtool_coalesce, "this is not coalesce output\n", "ethtool -c", "no coalesce parameters"),
    (_parse.parse_ethtool_coalesce, "Adaptive RX: maybe  TX: on\n", "ethtool -c", "Adaptive RX: maybe"),
    (_parse.parse_ethtool_driver, "garbage\n", "ethtool -i", "driver"),
    (_parse.parse_ethtool_driver, "driver: ice\nsupports-test: perhaps\n", "ethtool -i", "supports-test"),
    (_parse.parse_ethtool_stats, "NIC statistics:\n     rx_packets: 12\n     garbage line\n",
     "ethtool -S", "garbage line"),
    (_parse.parse_ethtool_stats, "NIC statistics:\n     rx_packets: many\n", "ethtool -S", "rx_packets: many"),
    (_parse.parse_ethtool_stats, "no stats available\n", "ethtool -S", "no stats available"),
    (_parse.parse_ip_link_json, "{not json", "ip -j link", "malformed JSON"),
    (_parse.parse_ip_link_json, '{"ifname": "lo"}', "ip -j link", "expected a JSON list"),
    (_parse.parse_ip_link_json, '["lo"]', "ip -j link", "not an object"),
    (_parse.parse_ip_link_json, '[{"ifindex": 1}]', "ip -j link", "ifname"),
    (_parse.parse_ip_addr_json, "", "ip -j addr", "malformed JSON"),
    (_parse.parse_ip_addr_json, '"lo"', "ip -j addr", "expected a JSON list"),
    (_parse.parse_ip_addr_json, '[{"ifname": "lo", "addr_info": "x"}]', "ip -j addr", "addr_info"),
])
def test_parse_errors_name_the_tool(func, text, tool, detail):
    with pytest.raises(_parse.ParseError) as excinfo:
        func(text)
    message = str(excinfo.value)
    assert message.startswith(tool + ":")
    assert detail in message


def test_parse_error_is_a_value_error():
    assert issubclass(_parse.ParseError, ValueError)
    with pytest.raises(ValueError):
        _parse.parse_ip_link_json("[")


@pytest.mark.parametrize("func", [
    _parse.parse_ethtool_rings, _parse.parse_ethtool_channels, _parse.parse_ethtool_coalesce,
    _parse.parse_ethtool_driver, _parse.parse_ethtool_stats, _parse.parse_ip_link_json, _parse.parse_ip_addr_json,
])
def test_non_text_input_raises_parse_error(func):
    with pytest.raises(_parse.ParseError):
        func(None)
