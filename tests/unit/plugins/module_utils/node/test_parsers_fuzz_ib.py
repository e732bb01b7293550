# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Property-based: every InfiniBand/RDMA, ip and nvidia-smi parser, fed empty, truncated, garbled or
unknown-version output, returns data or raises ParseError naming its tool (and the line, when a
line is to blame) - never another exception.  No example database (``database=None``): nothing is
written into the checkout, which the collection build would otherwise pick up."""
from __future__ import annotations

import json
import os
import re
import tempfile

import pytest

hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is not installed in this venv")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402
from hypothesis.configuration import set_hypothesis_home_dir  # noqa: E402

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _ibtools
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _iproute
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _nvidia_smi  # noqa: E402
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import ParseError  # noqa: E402

from ....fixtures.real.loader import real_capture as real  # noqa: E402

REAL = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "real")
# hypothesis keeps caches in ./.hypothesis even without an example database: keep them out of the checkout
set_hypothesis_home_dir(os.path.join(tempfile.gettempdir(), "hpcnet-rdma-hypothesis"))


def captures(directory: str, pattern: str = "") -> list:
    return [real(os.path.join(directory, n)) for n in sorted(os.listdir(os.path.join(REAL, directory)))
            if pattern in n]


# parser, the tool names its errors start with, seeds (real captures of that tool)
PARSERS = [
    (_ibtools.parse_ibstat, ("ibstat",), captures("ibstat")),
    (_ibtools.parse_ibv_devinfo, ("ibv_devinfo",), captures("ibv_devinfo")),
    (_ibtools.parse_ibv_devinfo_verbose, ("ibv_devinfo -v",), captures("ibv_devinfo")),
    (_ibtools.parse_rdma_link, ("rdma -j link", "rdma link"), captures("rdma", "link")),
    (_ibtools.parse_rdma_dev, ("rdma -j dev", "rdma dev"), captures("rdma", "dev")),
    (_nvidia_smi.parse_nvidia_smi_topo, ("nvidia-smi topo -m",), captures("nvidia-smi")),
    (_iproute.parse_ip_link_json, ("ip -j link",), captures("ip")),
    (_iproute.parse_ip_addr_json, ("ip -j addr",), captures("ip")),
    (_iproute.parse_ip_route_get_json, ("ip -j route get",), captures("ip")),
]
IDS = [p[0].__name__ for p in PARSERS]
# reasons about the output as a whole (no single line to blame)
WHOLE = re.compile(r"empty output|no .* in output|no device in output|no matrix rows|malformed JSON|"
                   r"expected (a JSON|text|JSON)|entry \d+ |no route printed|the route has no|'addr_info' of|"
                   r"names no GPU column")


def check(parser, tools, text):
    try:
        result = parser(text)
    except ParseError as e:
        msg = str(e)
        assert msg.startswith(tools), msg
        assert WHOLE.search(msg) or "line" in msg, msg
        return None
    assert isinstance(result, (dict, list))
    return result


@st.composite
def mangled(draw, seeds):
    """A real capture, then truncated, garbled (characters replaced), lines dropped/duplicated, or
    unknown lines inserted (a newer tool version)."""
    text = draw(st.sampled_from(seeds))
    how = draw(st.sampled_from(["truncate", "garble", "lines", "insert", "as_is"]))
    if how == "truncate":
        return text[:draw(st.integers(0, len(text)))]
    if how == "garble":
        chars = list(text)
        for _step in range(draw(st.integers(1, 8))):
            if chars:
                chars[draw(st.integers(0, len(chars) - 1))] = draw(st.characters(blacklist_categories=("Cs",)))
        return "".join(chars)
    lines = text.splitlines(True)
    if how == "lines" and lines:
        picks = draw(st.lists(st.integers(0, len(lines) - 1), max_size=len(lines)))
        return "".join(lines[i] for i in picks)
    if how == "insert":
        at = draw(st.integers(0, len(lines)))
        extra = draw(st.sampled_from(["\tnew_field:\t\t0x42 (7)\n", "Port 9:\n", "CA 'x'\n", "hca_id:\n",
                                      "link a/b c\n", "7: \n", "\tport:\t²\n", "\t\tRate: ٣\n", "{}\n", "[1]\n",
                                      "GPU0\tX\n", "NIC0: \n", "\t\tState: \n", "port:\t-1\n"]))
        return "".join(lines[:at]) + extra + "".join(lines[at:])
    return text


@pytest.mark.parametrize("parser, tools, seeds", PARSERS, ids=IDS)
@settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mangled_real_output_raises_only_parse_error(parser, tools, seeds, data):
    check(parser, tools, data.draw(mangled(seeds)))


@pytest.mark.parametrize("parser, tools, seeds", PARSERS, ids=IDS)
@settings(max_examples=100, deadline=None, database=None)
@given(text=st.text(max_size=300))
def test_any_text_raises_only_parse_error(parser, tools, seeds, text):
    check(parser, tools, text)


JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
                               st.sampled_from(["ifname", "port", "state", "netdev", "addr_info", "local", "family",
                                                "flags", "linkinfo", "dev", "ifindex", "caps", "fw", "x"]),
                               inner, max_size=6), max_leaves=20)


@pytest.mark.parametrize("parser, tools, seeds", [p for p in PARSERS if "json" in p[0].__name__ or "rdma" in
                                                  p[0].__name__], ids=lambda p: getattr(p, "__name__", ""))
@settings(max_examples=150, deadline=None, database=None)
@given(value=JSON_VALUES)
def test_unknown_json_shapes_raise_only_parse_error(parser, tools, seeds, value):
    check(parser, tools, json.dumps(value))


@pytest.mark.parametrize("parser, tools, seeds", PARSERS, ids=IDS)
def test_not_text_is_a_parse_error(parser, tools, seeds):
    for value in (None, b"CA 'x'\n", 42):
        with pytest.raises(ParseError):
            parser(value)
