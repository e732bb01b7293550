# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/_procnet.py: /proc/net/softnet_stat and /proc/net/snmp against captured
files (tests/unit/fixtures/README.md)."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils import _procnet
from ansible_collections.hpcnet.rdma.plugins.module_utils._parsing import ParseError

from .conftest import fixture


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
