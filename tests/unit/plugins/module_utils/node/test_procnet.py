# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/node/_procnet.py: /proc/net/softnet_stat, /proc/net/snmp and /proc/net/tcp,
tcp6 against captured files (tests/unit/fixtures/README.md)."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _procnet
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import ParseError

from ....conftest import fixture


def test_softnet_stat_captured_6x_layout():
    rows = _procnet.parse_softnet_stat(fixture("softnet_stat.2cpu.captured.txt"))
    assert [r["cpu"] for r in rows] == [0, 1]
    assert rows[0]["processed"] == 0x6c6 and rows[1]["processed"] == 0x8252
    assert all(r["dropped"] == 0 and r["time_squeeze"] == 0 for r in rows)


def test_softnet_stat_old_layout_uses_row_numbers():
    text = "0000a000 00000002 00000011 0 0 0 0 0 0 00000005 00000001\n0000b000 00000000 00000003 0 0 0 0 0 0 0 0\n"
    rows = _procnet.parse_softnet_stat(text)
    assert rows[0] == {"cpu": 0, "processed": 0xa000, "dropped": 2, "time_squeeze": 0x11, "received_rps": 5,
                       "flow_limit_count": 1}
    assert rows[1]["cpu"] == 1
    with pytest.raises(ParseError, match="non-hex"):
        _procnet.parse_softnet_stat("zz 0 0\n")


def test_proc_net_snmp_captured():
    snmp = _procnet.parse_proc_net_snmp(fixture("proc-net-snmp.captured.txt"))
    assert snmp["Tcp"]["RtoMin"] == 200 and snmp["Tcp"]["MaxConn"] == -1
    assert "RetransSegs" in snmp["Tcp"] and "InDatagrams" in snmp["Udp"]
    with pytest.raises(ParseError, match="do not pair up"):
        _procnet.parse_proc_net_snmp("Tcp: A B\nTcp: 1\n")


@pytest.mark.parametrize("name, conn", [
    ("proc-net-tcp.captured.txt", {"local": "127.0.0.1", "local_port": 2222, "remote": "127.0.0.1",
                                   "remote_port": 56060, "state": 1, "inode": 418952}),
    ("proc-net-tcp6.captured.txt", {"local": "::1", "local_port": 2222, "remote": "::1",
                                    "remote_port": 34674, "state": 1, "inode": 418955}),
])
def test_proc_net_tcp_captured(name, conn):
    socks = _procnet.parse_proc_net_tcp(fixture(name), "little")
    assert len(socks) == 3
    assert socks[0]["state"] == 10 and socks[0]["local_port"] == 2222 and socks[0]["remote_port"] == 0  # LISTEN
    assert [s for s in socks if s["inode"] == conn["inode"]] == [conn]


def test_proc_net_tcp_big_endian_words():
    text = "  sl  local_address rem_address   st\n   0: 0A000002:0016 0A000001:C350 01 0:0 0:0 0 0 0 77\n"
    assert _procnet.parse_proc_net_tcp(text, "big") == [
        {"local": "10.0.0.2", "local_port": 22, "remote": "10.0.0.1", "remote_port": 50000, "state": 1, "inode": 77}]


@pytest.mark.parametrize("text", [
    "  sl  local_address\n   0: 0100007F 00000000:0000 0A\n",
    "  sl  local_address\n   0: 0100007F:08AE 0000:0000 0A 0 0 0 0 0 0 1\n",
    "  sl  local_address\n   0: 0100007F:08AE 00000000:0000 0A 0:0 0:0 0 0 0 x\n",
    "",
])
def test_proc_net_tcp_errors(text):
    with pytest.raises(ParseError, match="/proc/net/tcp"):
        _procnet.parse_proc_net_tcp(text, "little")
