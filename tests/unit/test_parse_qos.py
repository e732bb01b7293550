# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The DCB / RoCE parsers against recorded outputs (tests/unit/fixtures/README.md says which are
captured and which reconstructed from the tools' documented formats)."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils import _parse

from .conftest import fixture


# --------------------------------------------------------------------------- ibv_devinfo
def test_ibv_devinfo_rxe():
    parsed = _parse.parse_ibv_devinfo(fixture("ibv_devinfo.rxe.txt"))
    assert parsed["rxe0"]["ports"] == {1: {"state": "PORT_ACTIVE", "max_mtu": 4096, "active_mtu": 1024,
                                           "link_layer": "Ethernet"}}
    assert parsed["rxe0"]["transport"] == "InfiniBand (0)"


def test_ibv_devinfo_two_devices():
    parsed = _parse.parse_ibv_devinfo(fixture("ibv_devinfo.mlx5_core.txt"))
    assert sorted(parsed) == ["mlx5_0", "mlx5_1"]
    assert parsed["mlx5_0"]["ports"][1]["active_mtu"] == 4096
    assert parsed["mlx5_1"]["ports"][1] == {"state": "PORT_DOWN", "max_mtu": 4096, "active_mtu": 1024,
                                            "link_layer": "Ethernet"}
    assert parsed["mlx5_0"]["fw_ver"] == "22.39.1002"


@pytest.mark.parametrize("text, detail", [
    ("No IB devices found\n", "no 'hca_id:' line"),
    ("hca_id:\tx\n\t\tport:\t1\n\t\t\tactive_mtu:\t\t4096 (3)\n", "must read like '4096 \\(5\\)'"),
    ("hca_id:\tx\n\t\tport:\tone\n", "bad port number"),
])
def test_ibv_devinfo_errors(text, detail):
    with pytest.raises(_parse.ParseError, match="ibv_devinfo: .*" + detail):
        _parse.parse_ibv_devinfo(text)


def test_ib_mtu_enum():
    assert _parse.IB_MTU_BYTES == {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}
