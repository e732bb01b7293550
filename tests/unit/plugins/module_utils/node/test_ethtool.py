# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Table-driven tests for plugins/module_utils/node/_ethtool.py: the parsers against recorded tool
output, and the argv table through the runner."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _ethtool
from ansible_collections.hpcnet.rdma.plugins.module_utils.facts import _fabric
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import ParseError

from ....conftest import fixture, mlx5, veth


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
    assert _ethtool.parse_ethtool_rings(fixture(name)) == expected


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
    parsed = _ethtool.parse_ethtool_rings(RINGS_SYNTHETIC_EXTRAS)
    assert parsed[path[0]][path[1]] == value


def test_rings_order_of_lines_does_not_matter():
    text = "Ring parameters for x:\nPre-set maximums:\nTX:\t\t512\nRX:\t\t1024\nCurrent hardware settings:\nTX:\t256\nRX:\t128\n"
    parsed = _ethtool.parse_ethtool_rings(text)
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
    assert _ethtool.parse_ethtool_channels(fixture(name)) == {"max": expected_max, "current": expected_current}


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
    parsed = _ethtool.parse_ethtool_coalesce(fixture(name))
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
    parsed = _ethtool.parse_ethtool_coalesce(fixture(name))
    assert set(parsed) == CLASSIC_COALESCE_KEYS | {"adaptive_rx", "adaptive_tx"} | extra_keys


def test_coalesce_old_and_new_layout_agree():
    old = _ethtool.parse_ethtool_coalesce(fixture("ethtool-c.ice.ethtool-5.10.txt"))
    new = _ethtool.parse_ethtool_coalesce(fixture("ethtool-c.ice.txt"))
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
    assert _ethtool.parse_ethtool_coalesce(text) == {"adaptive_rx": True, "adaptive_tx": False, "rx_usecs": 3}


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
    assert _ethtool.parse_ethtool_driver(fixture(name)) == expected


def test_driver_missing_keys_are_absent():
    assert _ethtool.parse_ethtool_driver("driver: foo\nbus-info: 0000:01:00.0\n") == {
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
    parsed = _ethtool.parse_ethtool_stats(fixture(name))
    assert len(parsed) == count
    assert {key: parsed[key] for key in subset} == subset
    assert all(isinstance(value, int) for value in parsed.values())
    assert "NIC statistics" not in "".join(parsed)


def test_stats_names_kept_as_printed():
    # bnxt_en prints per-ring counters as "[0]: rx_ucast_packets: N": the name is kept verbatim
    text = "NIC statistics:\n     [0]: rx_ucast_packets: 5\n     rx_total_discard_pkts: 7\n"
    assert _ethtool.parse_ethtool_stats(text) == {"[0]: rx_ucast_packets": 5, "rx_total_discard_pkts": 7}


def test_stats_header_only_is_empty():
    assert _ethtool.parse_ethtool_stats("NIC statistics:\n") == {}


@pytest.mark.parametrize("name, counters", [
    ("ethtool-S.mlx5_core.txt", {"rx_discards_phy": 317, "rx_out_of_buffer": 1423, "rx_prio3_pause": 2741,
                                 "tx_queue_dropped": 0, "rx_crc_errors_phy": 0}),
    ("ethtool-S.ice.txt", None),
])
def test_trouble_counters_of_ethtool_stats(name, counters):
    picked = _fabric.select_counters(_ethtool.parse_ethtool_stats(fixture(name)))
    assert not any(k.startswith(("rx0_", "tx1_", "ch0_")) for k in picked)     # per-queue left out
    assert "rx_bytes" not in picked and "rx_packets" not in picked
    if counters:
        for k, v in counters.items():
            assert picked[k] == v
    else:
        assert picked and all(any(w in k for w in ("err", "drop", "discard", "pause", "crc", "miss", "timeout",
                                                   "fifo", "over", "buf")) for k in picked)


# --------------------------------------------------------------------------- errors

@pytest.mark.parametrize("func, text, tool, detail", [
    (_ethtool.parse_ethtool_rings, "", "ethtool -g", "empty output"),
    (_ethtool.parse_ethtool_rings, "complete garbage\nnothing to see\n", "ethtool -g", "Pre-set maximums"),
    (_ethtool.parse_ethtool_rings, "Ring parameters for x:\nCurrent hardware settings:\nRX:\t\t256\n",
     "ethtool -g", "Pre-set maximums"),
    (_ethtool.parse_ethtool_rings, "Ring parameters for x:\nPre-set maximums:\nRX:\t\t256\n",
     "ethtool -g", "Current hardware settings"),
    (_ethtool.parse_ethtool_rings, "Pre-set maximums:\nRX:\t\tlots\nCurrent hardware settings:\n",
     "ethtool -g", "RX:\\t\\tlots"),
    # the header-less layout of ethtool >= 6.14 with one block only: no current values
    (_ethtool.parse_ethtool_rings, "Ring parameters for x:\nRX:\t\t256\nTX:\t\t256\n", "ethtool -g", "Current hardware settings"),
    (_ethtool.parse_ethtool_channels, "garbage\n", "ethtool -l", "Pre-set maximums"),
    (_ethtool.parse_ethtool_channels, "   \n\n", "ethtool -l", "empty output"),
    (_ethtool.parse_ethtool_channels, "Pre-set maximums:\nCombined:\tsixty\nCurrent hardware settings:\n",
     "ethtool -l", "Combined:\\tsixty"),
    (_ethtool.parse_ethtool_coalesce, "this is not coalesce output\n", "ethtool -c", "no coalesce parameters"),
    (_ethtool.parse_ethtool_coalesce, "Adaptive RX: maybe  TX: on\n", "ethtool -c", "Adaptive RX: maybe"),
    (_ethtool.parse_ethtool_driver, "garbage\n", "ethtool -i", "driver"),
    (_ethtool.parse_ethtool_driver, "driver: ice\nsupports-test: perhaps\n", "ethtool -i", "supports-test"),
    (_ethtool.parse_ethtool_stats, "NIC statistics:\n     rx_packets: 12\n     garbage line\n",
     "ethtool -S", "garbage line"),
    (_ethtool.parse_ethtool_stats, "NIC statistics:\n     rx_packets: many\n", "ethtool -S", "rx_packets: many"),
    (_ethtool.parse_ethtool_stats, "no stats available\n", "ethtool -S", "no stats available"),
])
def test_parse_errors_name_the_tool(func, text, tool, detail):
    with pytest.raises(ParseError) as excinfo:
        func(text)
    message = str(excinfo.value)
    assert message.startswith(tool + ":")
    assert detail in message


@pytest.mark.parametrize("func", [
    _ethtool.parse_ethtool_rings, _ethtool.parse_ethtool_channels, _ethtool.parse_ethtool_coalesce,
    _ethtool.parse_ethtool_driver, _ethtool.parse_ethtool_stats,
])
def test_non_text_input_raises_parse_error(func):
    with pytest.raises(ParseError):
        func(None)


# --------------------------------------------------------------------------- the tool, through the runner

@pytest.mark.parametrize("action, values, argv", [
    ("rings", {"ifname": "eth0"}, ["ethtool", "-g", "eth0"]),
    ("channels", {"ifname": "eth0"}, ["ethtool", "-l", "eth0"]),
    ("coalesce", {"ifname": "eth0"}, ["ethtool", "-c", "eth0"]),
    ("driver", {"ifname": "eth0"}, ["ethtool", "-i", "eth0"]),
    ("stats", {"ifname": "eth0"}, ["ethtool", "-S", "eth0"]),
    ("set_rings", {"ifname": "eth0", "args": ["rx", "4096"]}, ["ethtool", "-G", "eth0", "rx", "4096"]),
    ("set_channels", {"ifname": "eth0", "args": ["combined", "8"]}, ["ethtool", "-L", "eth0", "combined", "8"]),
    ("set_coalesce", {"ifname": "eth0", "args": ["adaptive-rx", "on"]},
     ["ethtool", "-C", "eth0", "adaptive-rx", "on"]),
])
def test_argv_table(action, values, argv):
    assert _ethtool.ETHTOOL.argv(action, **values) == argv


def test_read_parses_and_returns_none_when_unsupported(node):
    node.add_nic(mlx5())
    node.add_nic(veth())
    host = node.host()
    assert _ethtool.read(host, "rings", "ens1f0np0")["current"]["rx"] == 1024
    assert _ethtool.read(host, "channels", "data0")["max"] == {"rx": 2, "tx": 2, "other": None, "combined": None}
    assert _ethtool.read(host, "rings", "data0") is None          # veth: Operation not supported
    # ethtool 6.1 has no --json for -g: the first read tries it, then reads the text; the host (one call)
    # remembers it, so later reads go to the text at once
    assert node.calls == [["ethtool", "--json", "-g", "ens1f0np0"], ["ethtool", "-g", "ens1f0np0"],
                          ["ethtool", "-l", "data0"], ["ethtool", "-g", "data0"]]


def test_read_takes_json_where_ethtool_prints_it(node):
    """A newer ethtool (--json -g/-c): one run per read, the same values as the text gives."""
    node.add_nic(mlx5())
    node.add_nic(veth())
    text = {"rings": _ethtool.read(node.host(), "rings", "ens1f0np0"),
            "coalesce": _ethtool.read(node.host(), "coalesce", "ens1f0np0")}
    node.ethtool_json = True
    host = node.host()
    del node.calls[:]
    assert _ethtool.read(host, "rings", "ens1f0np0") == dict(text["rings"], extra={})
    got = _ethtool.read(host, "coalesce", "ens1f0np0")
    assert got == dict((k, v) for k, v in text["coalesce"].items() if v is not None or k.startswith("adaptive"))
    assert _ethtool.read(host, "rings", "data0") is None          # veth: the JSON run fails, the text says why
    assert node.calls == [["ethtool", "--json", "-g", "ens1f0np0"], ["ethtool", "--json", "-c", "ens1f0np0"],
                          ["ethtool", "--json", "-g", "data0"], ["ethtool", "-g", "data0"]]


def test_write_runs_the_setter_and_names_argv_on_failure(node):
    nic = node.add_nic(mlx5())
    host = node.host()
    _ethtool.write(host, "rings", "ens1f0np0", ["rx", "4096"])
    assert nic.rings["current"]["rx"] == 4096 and node.calls[-1] == ["ethtool", "-G", "ens1f0np0", "rx", "4096"]
    with pytest.raises(HostError, match=r"^ethtool -G ens1f0np0 rx 9999 failed \(rc=1\): netlink error: requested"):
        _ethtool.write(host, "rings", "ens1f0np0", ["rx", "9999"])
