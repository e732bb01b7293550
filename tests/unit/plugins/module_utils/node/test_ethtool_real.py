# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""ethtool readers on real captures (tests/unit/fixtures/real/ethtool-*/): the values a person
reads off each capture, and the per-device / per-queue split of ``ethtool -S`` (_drivers)."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.facts import _drivers
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _ethtool
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _parsing

from ....fixtures.real.loader import real_capture, real_files, real_header

PARSERS = {"ethtool-g": _ethtool.parse_ethtool_rings, "ethtool-l": _ethtool.parse_ethtool_channels, "ethtool-c": _ethtool.parse_ethtool_coalesce,
           "ethtool-i": _ethtool.parse_ethtool_driver, "ethtool-S": _ethtool.parse_ethtool_stats}


@pytest.mark.parametrize("path", [p for tool in sorted(PARSERS) for p in real_files(tool)])
def test_every_capture_parses_and_names_its_source(path):
    assert real_header(path)["source"]
    assert PARSERS[path.split("/")[0]](real_capture(path))


RINGS = [  # (file, max rx, max tx, current rx, current tx)
    ("ethtool-g/mlx4_en.2xe2690.eth6.txt", 8192, 8192, 8192, 8192),
    ("ethtool-g/i40e.e3-1271.eth0.txt", 4096, 4096, 2048, 512),
    ("ethtool-g/ixgbe.2xe5-2640.eth2.txt", 4096, 4096, 4096, 512),
    ("ethtool-g/igb.2xe5-2640.eth0.txt", 4096, 4096, 256, 256),
    ("ethtool-g/e1000e.e3-1271.eth2.txt", 4096, 4096, 256, 256),
    ("ethtool-g/tg3.2xe2690.eth0.txt", 2047, 511, 2047, 511),
    ("ethtool-g/virtio_net.vscale-vm.eth0.txt", 256, 256, 256, 256),
    ("ethtool-g/bnx2x.openeuler-22.03.ens4f1.txt", 4078, 4078, 453, 4078),
    ("ethtool-g/gve.siderolabs-pkgs-802.eth0.txt", 1024, 1024, 1024, 1024),
    # a recent ethtool (>= 6.14) printing no section headers: first block maxima, second current
    ("ethtool-g/atlantic.systemd-41289.eth0.no-headers.txt", 8184, 8184, 2048, 4096),
    ("ethtool-g/atlantic.systemd-41289.eth0.no-headers.after-G.txt", 8184, 8184, 8184, 8184),
]


@pytest.mark.parametrize("path,max_rx,max_tx,rx,tx", RINGS)
def test_ring_maxima_and_current(path, max_rx, max_tx, rx, tx):
    r = _ethtool.parse_ethtool_rings(real_capture(path))
    assert (r["max"]["rx"], r["max"]["tx"], r["current"]["rx"], r["current"]["tx"]) == (max_rx, max_tx, rx, tx)


def test_ioctl_era_rings_print_zero_and_netlink_prints_na():
    old = _ethtool.parse_ethtool_rings(real_capture("ethtool-g/mlx4_en.2xe2690.eth6.txt"))
    new = _ethtool.parse_ethtool_rings(real_capture("ethtool-g/bnx2x.openeuler-22.03.ens4f1.txt"))
    assert old["max"]["rx_mini"] == 0 and old["extra"] == {}
    assert new["max"]["rx_mini"] is None and new["extra"] == {"rx_buf_len": None, "tx_push": None}


def test_headerless_rings_keep_the_extras_of_each_block_apart():
    r = _ethtool.parse_ethtool_rings(real_capture("ethtool-g/atlantic.systemd-41289.eth0.no-headers.txt"))
    assert r["extra"]["max_hds_thresh"] is None and r["extra"]["max_tx_push_buff_len"] is None
    assert r["extra"]["tx_push"] == "off" and r["extra"]["tcp_data_split"] is None


CHANNELS = [  # (file, max (rx, tx, other, combined), current (rx, tx, other, combined))
    ("ethtool-l/ena.amzn-drivers-123.eth0.txt", (0, 0, 0, 2), (0, 0, 0, 2)),
    ("ethtool-l/ena.amzn-drivers-123.eth0.after-L1.txt", (0, 0, 0, 2), (0, 0, 0, 1)),
    ("ethtool-l/i40e.intel-wired-lan-2021-04.ens801f0.txt", (0, 0, 1, 64), (0, 0, 1, 64)),
    ("ethtool-l/unknown.firedancer-1427.eno1.txt", (4, 4, None, None), (4, 1, None, None)),
    ("ethtool-l/unknown.firedancer-1427.ens3f0.txt", (None, None, 1, 64), (None, None, 1, 1)),
]


@pytest.mark.parametrize("path,maxima,current", CHANNELS)
def test_channels(path, maxima, current):
    c = _ethtool.parse_ethtool_channels(real_capture(path))
    keys = ("rx", "tx", "other", "combined")
    assert tuple(c["max"][k] for k in keys) == maxima and tuple(c["current"][k] for k in keys) == current


COALESCE = [  # (file, adaptive rx, adaptive tx, rx-usecs, tx-usecs)
    ("ethtool-c/mlx4_en.2xe2690.eth6.txt", True, False, 16, 16),
    ("ethtool-c/i40e.e3-1271.eth0.txt", True, True, 25, 25),
    ("ethtool-c/tg3.2xe2690.eth0.txt", False, False, 20, 72),
    ("ethtool-c/igb.2xe5-2640.eth0.txt", False, False, 3, 0),
]


@pytest.mark.parametrize("path,arx,atx,rx_usecs,tx_usecs", COALESCE)
def test_coalesce(path, arx, atx, rx_usecs, tx_usecs):
    c = _ethtool.parse_ethtool_coalesce(real_capture(path))
    assert (c["adaptive_rx"], c["adaptive_tx"], c["rx_usecs"], c["tx_usecs"]) == (arx, atx, rx_usecs, tx_usecs)


DRIVER_INFO = [  # (file, driver, version, firmware, bus-info)
    ("ethtool-i/tg3.2xe2690.eth0.txt", "tg3", "3.137", "5719-v1.46 NCSI v1.3.16.0", "0000:03:00.0"),
    ("ethtool-i/i40e.e3-1271.eth0.txt", "i40e", "1.5.10-k", "5.04 0x80002530 0.0.0", "0000:01:00.0"),
    ("ethtool-i/mlx4_en.2xe2690.eth6.txt", "mlx4_en", "2.2-1 (Feb 2014)", "2.36.5000", None),
    ("ethtool-i/bnx2x.openeuler-22.03.ens4f1.txt", "bnx2x", "5.10.0-153.12.0.92.oe2203sp2.x8", "mbi 7.15.42 bc 7.15.23", "0000:86:00.1"),
    ("ethtool-i/e1000e.node_exporter.eth0.txt", "e1000e", "5.11.0-22-generic", "0.5-4", "0000:00:1f.6"),
    ("ethtool-i/virtio_net.vscale-vm.eth0.txt", "virtio_net", "1.0.0", "", None),
    ("ethtool-i/ice.ethernet-linux-ice-45.eth0.txt", "ice", "6.6.58-0-lts", "2.50 0x800077a8 1.2960.0", "0000:e1:00.0"),
    ("ethtool-i/ice.ethq-27.enp59s0f0.txt", "ice", "5.19.4-100.fc35.x86_64", "4.22 0x80010446 1.3197.0", "0000:3b:00.0"),
    ("ethtool-i/iavf.ethq-27.enp59s0f0v0.txt", "iavf", "5.19.4-100.fc35.x86_64", "N/A", "0000:3b:01.0"),
    ("ethtool-i/gve.siderolabs-pkgs-802.eth0.txt", "gve", "1.0.0", "", "0000:00:04.0"),
    ("ethtool-i/mlx5_core.ethq-8.ubuntu16.p3p1.txt", "mlx5_core", "3.0-1 (January 2015)", "14.23.1020", "0000:af:00.0"),
    ("ethtool-i/mlx5_core.ethq-8.ubuntu18.txt", "mlx5_core", "5.0-0", "14.23.1020 (MT_2420110034)", "0000:af:00.0"),
    ("ethtool-i/bnxt_en.showmax-exporter.rhel8.txt", "bnxt_en", "4.18.0-408.el8.x86_64", "220.0.57.0/pkg 22.00.07.60", "0000:ca:00.1"),
]


@pytest.mark.parametrize("path,driver,version,firmware,bus", DRIVER_INFO)
def test_driver_info(path, driver, version, firmware, bus):
    d = _ethtool.parse_ethtool_driver(real_capture(path))
    assert (d["driver"], d["version"], d["firmware_version"]) == (driver, version, firmware)
    if bus is not None:
        assert d["bus_info"] == bus


STATS = [  # (file, driver, device counters (name: value) that must be there, {queue: {name: value}} that must be there)
    ("ethtool-S/bnxt_en.netdev-2024.txt", "bnxt_en", {}, {0: {"rx_discards": 0, "rx_ucast_packets": 1418, "tx_ucast_packets": 1734}}),
    ("ethtool-S/bnx2x.openeuler-22.03.ens4f1.grep-err.txt", "bnx2x", {"rx_crc_errors": 0, "rx_phy_ip_err_discards": 0},
     {7: {"rx_csum_offload_errors": 0}}),
    ("ethtool-S/ena.aws-5.4.txt", "ena", {"bw_in_allowance_exceeded": 0, "interface_up": 2, "ena_admin_q_submitted_cmd": 174},
     {0: {"tx_cnt": 33539, "rx_cnt": 183700}, 1: {"tx_cnt": 32452, "rx_bytes": 24196718}}),
    ("ethtool-S/mlx5_core.xdp-5.15.txt", "mlx5_core", {"rx_discards_phy": 58591428329, "rx_prio0_discards": 58591314012,
                                                       "rx_out_of_buffer": 990473555, "tx_pause_ctrl_phy": 5745055},
     {0: {"rx_packets": 70812690, "ch_poll": 146981606, "rx_xdp_drop": 3753342954}}),
    ("ethtool-S/ice.ethq-27.enp59s0f0.head.txt", "ice", {"rx_unicast": 0, "tx_multicast": 18, "rx_bytes": 13320, "tx_restart": 0},
     {2: {"tx_packets": 1, "tx_bytes": 62}, 5: {"tx_packets": 0}}),
    # gve: rx_bytes is a device counter and rx_bytes[0] the same name per queue; adminq_* are device
    ("ethtool-S/gve.netdev-2020-09.1q.txt", "gve", {"rx_bytes": 822071, "tx_bytes": 4100, "adminq_prod_cnt": 34, "interface_up_cnt": 1},
     {0: {"rx_bytes": 215094, "rx_posted_desc": 1365, "tx_bytes": 420, "tx_event_counter": 6}}),
    ("ethtool-S/bnxt_en.showmax-exporter.rhel8.txt", "bnxt_en", {"rx_total_discard_pkts": 0, "rx_bytes": 215351646640,
                                                                 "rx_pfc_ena_frames_pri3": 0, "link_down_events": 4},
     {0: {"rx_ucast_packets": 19121609, "rx_l4_csum_errors": 190}, 7: {"tpa_aborts": 18107446, "missed_irqs": 0}}),
]


@pytest.mark.parametrize("path,driver,device,queues", STATS)
def test_per_device_and_per_queue_counters(path, driver, device, queues):
    split = _drivers.split_counters(_ethtool.parse_ethtool_stats(real_capture(path)), driver)
    assert split["driver_profile"] == driver
    for name, value in device.items():
        assert split["device"][name] == value
    for index, counters in queues.items():
        for name, value in counters.items():
            assert split["queues"][index][name] == value
    assert not any(k.startswith("[") or k.startswith("queue_") or k.startswith("rx0_") for k in split["device"])


def test_queue_counts_of_ice_gve_and_bnxt():
    def split(path, driver):
        return _drivers.split_counters(_ethtool.parse_ethtool_stats(real_capture(path)), driver)
    ice = split("ethtool-S/ice.ethq-27.enp59s0f0.head.txt", "ice")
    assert sorted(ice["queues"]) == [0, 1, 2, 3, 4, 5] and len(ice["device"]) == 16
    gve = split("ethtool-S/gve.netdev-2020-09.1q.txt", "gve")
    assert sorted(gve["queues"]) == [0] and len(gve["queues"][0]) == 12 and len(gve["device"]) == 28
    assert not any(k.endswith("]") for k in gve["device"])
    bnxt = split("ethtool-S/bnxt_en.showmax-exporter.rhel8.txt", "bnxt_en")
    assert sorted(bnxt["queues"]) == list(range(8)) and all(len(v) == 24 for v in bnxt["queues"].values())


def test_ena_has_two_queues_and_no_queue_counter_among_device_ones():
    split = _drivers.split_counters(_ethtool.parse_ethtool_stats(real_capture("ethtool-S/ena.aws-5.4.txt")), "ena")
    assert sorted(split["queues"]) == [0, 1] and len(split["queues"][0]) == 37 and len(split["device"]) == 17


@pytest.mark.parametrize("name,expected", [
    ("rx_queue_0_packets", (0, "rx_packets")), ("tx_queue_12_bytes", (12, "tx_bytes")),   # ice, igb, ixgbe, virtio_net
    ("tx-3.tx_packets", (3, "tx_packets")), ("rx-0.bytes", (0, "rx_bytes")),                 # i40e
    ("rx_posted_desc[1]", (1, "rx_posted_desc")),                                              # gve
    ("tx_q-2_packets", (2, "tx_packets")),                                                     # idpf/iavf
    ("rx_prio3_pause", None), ("rx_vport_rdma_unicast_packets", None), ("port.rx_dropped", None),
])
def test_generic_counter_shapes(name, expected):
    assert _drivers.queue_counter(name) == expected


def test_driver_table():
    assert _drivers.entry("mlx5_core")["dcb"] == ["mlnx_qos", "dcb"]
    assert _drivers.entry("ice")["dcb"] == ["dcb"] and "LLDP" in _drivers.entry("ice")["notes"]
    assert _drivers.entry("bnxt_en")["dcb"] == ["dcb", "bnxtqos"]
    assert _drivers.entry("tg3")["dcb"] == ["none"]
    generic = _drivers.entry("sfc")
    assert generic["driver"] == "generic" and _drivers.profile("sfc") == "generic" and generic["irq_queue"]
    for name, row in _drivers.DRIVERS.items():
        assert row["irq_queue"], name   # every driver in the table says how its queue IRQs are named


# ---------------------------------------------------------------------------- ethtool --json (6.14)
JSON_PAIRS = ["ethtool-json/virtio_net.ethtool-6.14.eth0"]


@pytest.mark.parametrize("stem", JSON_PAIRS)
def test_rings_json_reads_what_the_same_devices_text_says(stem):
    """The JSON and the text of one device, taken in the same run, read the same."""
    from_json = _ethtool.parse_ethtool_rings_json(real_capture(stem + ".g.json"))
    from_text = _ethtool.parse_ethtool_rings(real_capture(stem + ".g.txt"))
    assert from_json["max"] == from_text["max"] == {"rx": 256, "rx_mini": None, "rx_jumbo": None, "tx": 256}
    assert from_json["current"] == from_text["current"]
    assert from_json["extra"] == {"tx_push": "off", "rx_push": "off"}
    assert dict((k, v) for k, v in from_text["extra"].items() if v is not None) == from_json["extra"]


@pytest.mark.parametrize("stem", JSON_PAIRS)
def test_coalesce_json_reads_what_the_same_devices_text_says(stem):
    from_json = _ethtool.parse_ethtool_coalesce_json(real_capture(stem + ".c.json"))
    from_text = _ethtool.parse_ethtool_coalesce(real_capture(stem + ".c.txt"))
    assert from_json == {"adaptive_rx": False, "adaptive_tx": None, "rx_usecs": 0, "rx_frames": 1, "tx_usecs": 0,
                         "tx_frames": 1}
    assert from_json == dict((k, v) for k, v in from_text.items() if v is not None or k.startswith("adaptive"))


@pytest.mark.parametrize("text, message", [
    ("", "ethtool --json -g: malformed JSON"),
    ("[ ]", "ethtool --json -g: expected a list of one object, got a list of 0 item(s)"),
    ('{"ifname": "eth0"}', "ethtool --json -g: expected a list of one object, got dict"),
    ('[{"ifname": "eth0", "rx-max": "lots"}]', "ethtool --json -g: 'rx-max' is 'lots', not a ring size"),
    ('[{"ifname": "eth0", "rx": [1]}]', "ethtool --json -g: 'rx' is [1], not a number, a boolean or a word"),
])
def test_rings_json_fails_small(text, message):
    with pytest.raises(_parsing.ParseError) as err:
        _ethtool.parse_ethtool_rings_json(text)
    assert str(err.value).startswith(message)
