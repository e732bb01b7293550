# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""iproute2 ``dcb`` readers on real captures (tests/unit/fixtures/real/dcb/): what a person reads off
each one.  ``*.reconstructed.*`` files are written from iproute2's print code where no public
``dcb -j`` capture exists; their headers say so."""
from __future__ import annotations

import os

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _dcb_parse

REAL = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "real", "dcb")


def capture(name):
    """The verbatim body: the file without its leading ``# `` header lines."""
    with open(os.path.join(REAL, name)) as f:
        lines = f.read().splitlines(True)
    i = 0
    while i < len(lines) and lines[i].startswith("#"):
        i += 1
    return "".join(lines[i:])


def header(name):
    with open(os.path.join(REAL, name)) as f:
        return [line[2:].strip() for line in f if line.startswith("# ")]


def test_every_capture_names_its_source():
    for name in sorted(os.listdir(REAL)):
        head = " ".join(header(name))
        assert "source:" in head or "reconstructed:" in head, name
        assert capture(name).strip(), name
        if "reconstructed" in name:
            assert head.startswith("reconstructed:"), name


@pytest.mark.parametrize("name, enabled, cap", [
    ("hns3.pfc.before-set.txt", [], 4),
    ("hns3.pfc.after-set-buggy-driver.txt", [0, 1, 2, 3, 4, 5, 6, 7], 4),
    ("dcb-pfc.hns3.reconstructed.json", [], 4),
])
def test_pfc(name, enabled, cap):
    parsed = _dcb_parse.parse_dcb_pfc_json(capture(name))
    assert parsed == {"pfc_cap": cap, "macsec_bypass": False, "delay": 0, "enabled": enabled}


@pytest.mark.parametrize("name, default, dscp", [
    ("felix.app.default-prio-0.txt", [0], {}),
    ("felix.app.dscp-names.txt", [3], {16: [2], 24: [5]}),          # CS2 = DSCP 16, CS3 = DSCP 24
    ("sparx5.app.dscp-prio.txt", [], {63: [2]}),
    ("dcb-app.iproute2-5.11.pairs.reconstructed.json", [3], {16: [2], 24: [5]}),
    ("dcb-app.iproute2-6.5.triple.reconstructed.json", [3], {16: [2], 24: [5]}),   # [16, 2, " "]
])
def test_app(name, default, dscp):
    parsed = _dcb_parse.parse_dcb_app_json(capture(name))
    assert parsed["default_prio"] == default
    assert parsed["dscp_prio"] == dscp
    assert parsed["ethtype_prio"] == {} and parsed["pcp_prio"] == {}


def test_app_text_and_json_of_one_table_agree():
    assert _dcb_parse.parse_dcb_app_json(capture("felix.app.dscp-names.txt")) == \
        _dcb_parse.parse_dcb_app_json(capture("dcb-app.iproute2-6.5.triple.reconstructed.json"))


@pytest.mark.parametrize("name", ["eni1np1.ets.iproute2-next-v5.txt", "dcb-ets.eni1np1.reconstructed.json"])
def test_ets(name):
    parsed = _dcb_parse.parse_dcb_ets(capture(name))
    assert parsed["willing"] is True and parsed["ets_cap"] == 8 and parsed["cbs"] is False
    assert parsed["prio_tc"] == [1, 3, 5, 0, 0, 0, 0, 0]
    assert parsed["tc_tsa"] == ["strict"] * 4 + ["ets"] + ["strict"] * 3
    assert parsed["tc_bw"] == [0, 0, 0, 0, 100, 0, 0, 0]
    assert parsed["reco_prio_tc"] == [0] * 8


@pytest.mark.parametrize("name", ["eni1np1.buffer.iproute2-next.txt", "dcb-buffer.eni1np1.reconstructed.json"])
def test_buffer(name):
    assert _dcb_parse.parse_dcb_buffer(capture(name)) == {
        "prio_buffer": [0, 0, 0, 3, 0, 0, 6, 0], "buffer_size": [10000, 0, 0, 70000, 0, 0, 10000, 0],
        "total_size": 221072}


def test_buffer_released_print_size_form():
    # the form iproute2 5.11+ prints (print_size): 10Kb = 10240 bytes
    text = "prio-buffer 0:0 1:1 2:2 3:3 4:4 5:5 6:6 7:7\nbuffer-size 0:10Kb 1:10Kb 2:10Kb 3:10Kb 4:10Kb 5:10Kb 6:1Mb 7:10Kb\n" \
           "total-size 1222Kb\n"
    parsed = _dcb_parse.parse_dcb_buffer(text)
    assert parsed["buffer_size"][6] == 1024 * 1024 and parsed["buffer_size"][0] == 10240
    assert parsed["total_size"] == 1222 * 1024


def test_maxrate():
    parsed = _dcb_parse.parse_dcb_maxrate(capture("eni1np1.maxrate.iproute2-next.txt"))
    assert parsed["tc_maxrate"] == [25 * 10 ** 9] * 6 + [100 * 10 ** 9, 25 * 10 ** 9]


@pytest.mark.parametrize("name", ["sparx5.apptrust.iproute2-next-v3.txt", "dcb-apptrust.sparx5.reconstructed.json"])
def test_apptrust(name):
    assert _dcb_parse.parse_dcb_apptrust_json(capture(name)) == ["ethtype", "stream-port", "pcp"]
