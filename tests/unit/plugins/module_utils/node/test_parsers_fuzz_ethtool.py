# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fail small: the ethtool and /proc/interrupts readers fed empty, truncated, garbled or unknown
output raise only ParseError (naming the tool), never another exception (property-based)."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from ansible_collections.hpcnet.rdma.plugins.module_utils.facts import _drivers
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _ethtool
from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _domain as _irq
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import ParseError

from ....fixtures.real.loader import real_capture, real_files

PARSERS = [("ethtool -g", _ethtool.parse_ethtool_rings), ("ethtool -l", _ethtool.parse_ethtool_channels),
           ("ethtool -c", _ethtool.parse_ethtool_coalesce), ("ethtool -i", _ethtool.parse_ethtool_driver),
           ("ethtool -S", _ethtool.parse_ethtool_stats), ("/proc/interrupts", _irq.parse_interrupts),
           ("ethtool --json -g", _ethtool.parse_ethtool_rings_json), ("ethtool --json -c", _ethtool.parse_ethtool_coalesce_json)]
CAPTURES = [real_capture(p) for tool in ("ethtool-g", "ethtool-c", "ethtool-i", "ethtool-S", "interrupts", "ethtool-json")
            for p in real_files(tool)]


def only_parse_error(tool, parse, text):
    try:
        parse(text)
    except ParseError as e:
        assert str(e).startswith(tool), (tool, str(e))


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_any_text(text):
    for tool, parse in PARSERS:
        only_parse_error(tool, parse, text)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(CAPTURES), st.integers(min_value=0, max_value=4000))
def test_truncated_captures(text, cut):
    for tool, parse in PARSERS:
        only_parse_error(tool, parse, text[:cut])


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(CAPTURES), st.integers(min_value=0, max_value=4000), st.text(min_size=1, max_size=20))
def test_garbled_captures(text, at, junk):
    garbled = text[:at] + junk + text[at + len(junk):]
    for tool, parse in PARSERS:
        only_parse_error(tool, parse, garbled)


@settings(max_examples=100, deadline=None)
@given(st.one_of(st.none(), st.integers(), st.binary(), st.lists(st.text())))
def test_not_text(value):
    for tool, parse in PARSERS:
        only_parse_error(tool, parse, value)


@settings(max_examples=200, deadline=None)
@given(st.text(), st.sampled_from([None, "mlx5_core", "ena", "bnxt_en", "sfc"]), st.one_of(st.none(), st.text(max_size=15)))
def test_classifiers_never_raise(name, driver, ifname):
    role, index = _irq.irq_role(name, driver, ifname)
    assert role in ("queue", "other", None) and (index is None or index >= 0)
    q = _drivers.queue_counter(name, driver)
    assert q is None or q[0] >= 0
