# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The LLDP and ibnetdiscover parsers on real captures (tests/unit/fixtures/real/lldpcli/ and
ibnetdiscover/, each with its source), table-driven; then fail small on anything else (hypothesis):
only ParseError naming the tool, never another exception."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import ParseError
from ansible_collections.hpcnet.rdma.plugins.module_utils.topology import _ibnet, _lldp

from ....fixtures.real.loader import real_capture, real_files


def lldp_of(path):
    """The capture's ``lldp`` member alone (sonic-dbsyncd stores lldpctl's output beside the local chassis)."""
    return json.dumps({"lldp": json.loads(real_capture(path))["lldp"]})


# capture, interfaces, (interface, chassis_name, chassis_id, port_id, port_descr, bridge, router, mgmt_ip, ttl) of one neighbour
LLDP = [
    ("lldpcli/pica8-tor.lldpd-0.9.one.json", 1,
     ("eth0", "B2-Tor", "cc:37:ab:60:cd:c1", "ge-1/1/28", "ge-1/1/28", True, True, ["0.0.0.0"], 120)),
    ("lldpcli/puppet-lldpd-129.lldpd-1.0.one-unnamed.json", 1,
     ("enp3s0", None, "44:94:fc:9d:55:0a", "g17", None, False, False, ["192.168.178.21"], 120)),
    ("lldpcli/puppet-lldpd.lldpd-1.0.list.json", 1,
     ("eno1", "router", "10:0e:7e:aa:aa:aa", "ge-1/0/1", "host:eno1 {#}", True, True, ["192.0.2.1"], 120)),
    ("lldpcli/sonic-lldp-syncd.lldpd-0.9.many.json", 33,
     ("eth0", "switch218ad08", "00:11:22:33:44:55", "ge-0/0/17", "TPS report vending machine", True, True, [], 90)),
    ("lldpcli/sonic-lldp-syncd.lldpd-0.9.none.json", 0, None),
]


@pytest.mark.parametrize("path, count, expect", LLDP, ids=[c[0] for c in LLDP])
def test_lldp_real(path, count, expect):
    got = _lldp.parse_neighbors(lldp_of(path))
    assert len(got) == count
    assert sorted(got) == sorted(set(got))
    if expect:
        ifname = expect[0]
        n = got[ifname][0]
        assert (ifname, n["chassis_name"], n["chassis_id"], n["port_id"], n["port_descr"], n["bridge"], n["router"],
                n["mgmt_ip"], n["ttl"]) == expect
        assert n["via"] == "LLDP"


def test_lldp_sonic_neighbours_one_each_with_a_ttl_one_without_sysname():
    got = _lldp.parse_neighbors(lldp_of("lldpcli/sonic-lldp-syncd.lldpd-0.9.many.json"))
    assert all(len(v) == 1 and v[0]["ttl"] and v[0]["chassis_id"] for v in got.values())
    assert [k for k, v in got.items() if not v[0]["chassis_name"]] == ["Ethernet96"]     # the unnamed chassis shape
    assert got["Ethernet0"][0]["mgmt_ip"] == ["10.3.147.196"]          # one mgmt-ip: a string, not a list


def test_lldp_one_object_or_a_list_read_the_same():
    """lldpd prints a list only for several: the same neighbour as an object and in a one-element list."""
    one = json.loads(real_capture("lldpcli/pica8-tor.lldpd-0.9.one.json"))
    as_list = {"lldp": {"interface": [one["lldp"]["interface"]]}}
    entry = one["lldp"]["interface"]["eth0"]
    entry_single_cap = dict(entry, chassis={"B2-Tor": dict(entry["chassis"]["B2-Tor"], capability=entry["chassis"]["B2-Tor"]["capability"][0])})
    assert _lldp.parse_neighbors(json.dumps(as_list)) == _lldp.parse_neighbors(json.dumps(one))
    assert _lldp.parse_neighbors(json.dumps({"lldp": {"interface": {"eth0": entry_single_cap}}}))["eth0"][0]["capabilities"] == {"bridge": True}


def test_lldp_two_neighbours_on_one_interface():
    one = json.loads(real_capture("lldpcli/pica8-tor.lldpd-0.9.one.json"))["lldp"]["interface"]["eth0"]
    got = _lldp.parse_neighbors(json.dumps({"lldp": {"interface": [{"eth0": one}, {"eth0": one}]}}))
    assert list(got) == ["eth0"] and len(got["eth0"]) == 2


@pytest.mark.parametrize("text, words", [
    ("", "malformed JSON"), ("[]", "expected a JSON object"), ('{"x": 1}', "no 'lldp' member"),
    ('{"lldp": 3}', "lldp is int"), ('{"lldp": {"interface": 5}}', "lldp.interface is int"),
    ('{"lldp": {"interface": [{"a": {}, "b": {}}]}}', "expected one interface name"),
    ('{"lldp": {"interface": {"eth0": {"chassis": []}}}}', "interface eth0 chassis is list"),
    ('{"lldp": {"interface": {"eth0": {"port": {"ttl": "soon"}}}}}', "interface eth0 ttl is 'soon'"),
    ('{"lldp": {"interface": {"eth0": {"chassis": {"a": {}, "b": {}}}}}}', "holds 2 chassis"),
])
def test_lldp_bad_input_names_what_is_wrong(text, words):
    with pytest.raises(ParseError, match="^lldpcli -f json: .*" + words.replace("(", r"\(").replace("[", r"\[")):
        _lldp.parse_neighbors(text)


# capture, switches, cas, (switch guid, port, peer type, peer guid, peer port, peer name, link)
IBNET = [
    ("ibnetdiscover/full.rdma-core-man.voltaire.txt", 2, 4,
     ("0008f10400410015", 1, "switch", "005442ba00003080", 10, "ISR9024 Voltaire", "1xSDR")),
    ("ibnetdiscover/ports.infiniband-exporter.test.txt", 4, 3,
     ("7cfe9003009ce5b0", 10, "ca", "7cfe9003003b4bde", 1, "o0001 HCA-1", "4xEDR")),
    ("ibnetdiscover/ports.infiniband-exporter.test2.txt", 5, 2,
     ("946dae0300630bf6", 79, "ca", "b83fd20300da1138", 1, "worker20 mlx5_3", "4xHDR")),
    ("ibnetdiscover/ports.infiniband-exporter.test3.txt", 1, 0, None),
]


@pytest.mark.parametrize("path, switches, cas, link", IBNET, ids=[c[0] for c in IBNET])
def test_ibnetdiscover_real(path, switches, cas, link):
    got = _ibnet.parse_ibnetdiscover(real_capture(path))
    assert (len(got["switches"]), len(got["cas"])) == (switches, cas)
    if link:
        sw, port = link[0], link[1]
        peer = got["switches"][sw]["ports"][port]
        assert (sw, port, peer["type"], peer["guid"], peer["port"], peer["name"], peer["link"]) == link


def test_ibnetdiscover_full_layout_reads_the_cas_side_and_names():
    got = _ibnet.parse_ibnetdiscover(real_capture("ibnetdiscover/full.rdma-core-man.voltaire.txt"))
    assert got["switches"]["005442ba00003080"]["name"] == "ISR9024 Voltaire"
    assert got["switches"]["005442ba00003080"]["lid"] == 6
    ca = got["cas"]["0008f10403960558"]
    assert sorted(ca["ports"]) == [1, 2]
    assert ca["ports"][1] == {"type": "switch", "guid": "005442ba00003080", "port": 12, "name": "ISR9024 Voltaire",
                              "lid": 6, "link": "1xSDR"}


def test_ibnetdiscover_ports_layout_strips_blanks_and_keeps_unconnected_nodes():
    got = _ibnet.parse_ibnetdiscover(real_capture("ibnetdiscover/ports.infiniband-exporter.test2.txt"))
    assert got["switches"]["946dae0300618c83"]["name"] == " 5FB0406-spine-IB02 "     # as printed; unconnected
    assert got["switches"]["946dae0300618c83"]["ports"] == {}
    test = _ibnet.parse_ibnetdiscover(real_capture("ibnetdiscover/ports.infiniband-exporter.test.txt"))
    assert test["switches"]["7cfe9003009ce5b0"]["ports"][1]["guid"] == "7cfe900300b07320"


@pytest.mark.parametrize("text, words", [
    ("", "empty output"), ("vendid=0x2c9\n", "no Switch, Ca or Rt record"),
    ('[1]  "S-0002c9"[2]  # "x" lid 1 4xQDR\n', "before any Switch/Ca record"),
    ('Switch 8 "S-01"  # "sw" base port 0 lid 1 lmc 0\n[1] garbage\n', "cannot read the line"),
    ("SW  1 1 0x01 4x EDR\nnonsense\n", "-p: cannot read the line"),
])
def test_ibnetdiscover_bad_input_names_the_line(text, words):
    with pytest.raises(ParseError, match="^ibnetdiscover.*" + words.replace("[", r"\[")):
        _ibnet.parse_ibnetdiscover(text)


def test_guid_forms():
    assert _ibnet.guid("0x8f10400410015") == _ibnet.guid("0008:f104:0041:0015") == "0008f10400410015"


CAPTURES = [real_capture(p) for p in real_files("ibnetdiscover")] + [lldp_of(p) for p in real_files("lldpcli")]
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=6), kids, max_size=4), max_leaves=20)


def only_parse_error(tool, parse, text):
    try:
        parse(text)
    except ParseError as e:
        assert str(e).startswith(tool), (tool, str(e))


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_text_only_parse_error(text):
    only_parse_error("lldpcli -f json", _lldp.parse_neighbors, text)
    only_parse_error("ibnetdiscover", _ibnet.parse_ibnetdiscover, text)


@settings(max_examples=300, deadline=None)
@given(JSON, st.sampled_from(["lldp", "interface", "chassis", "port", "capability", "mgmt-ip", "ttl", "id"]))
def test_any_json_shape_only_parse_error(value, key):
    for doc in ({"lldp": value}, {"lldp": {"interface": value}}, {"lldp": {"interface": {"eth0": {key: value}}}},
                {"lldp": {"interface": {"eth0": {"chassis": {"sw": {key: value}}, "port": {key: value}}}}}):
        only_parse_error("lldpcli -f json", _lldp.parse_neighbors, json.dumps(doc))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(CAPTURES), st.integers(min_value=0, max_value=4000), st.text(max_size=12))
def test_truncated_or_garbled_captures_only_parse_error(text, cut, junk):
    for variant in (text[:cut], text[:cut] + junk + text[cut:], text.replace("]", junk, 1), text.replace('"', junk, 2)):
        only_parse_error("lldpcli -f json", _lldp.parse_neighbors, variant)
        only_parse_error("ibnetdiscover", _ibnet.parse_ibnetdiscover, variant)
