# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The kernel's ethtool netlink family without ethtool (node/_ethnl, Host.netlink, the nic domain's read_values),
on a verbatim capture of a lab VM's kernel 6.1 - virtio_net, e1000e, lo (no such operations) and a name
that is no device - beside ``ethtool -g|-l|-c`` of the same interfaces in the same minute
(tests/unit/fixtures/real/ethtool-netlink/): the same fields, the same "not supported", the same values in
the nic domain either way."""
from __future__ import annotations

import errno
import re
import struct

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _domain as _nic
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _ethnl, _ethtool
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host

from ....fixtures.real.loader import real_capture, real_header

NL = "ethtool-netlink/vm.virtio_net-e1000e.debian12.txt"
IFACES = real_header(NL)["interfaces"].split()
PAIRS = [(i, g) for i in IFACES for g in ("rings", "channels", "coalesce")]
FAMILY = bytes.fromhex(real_capture(NL).split("family: ", 1)[1].split("\n", 1)[0])
DATAGRAMS = [bytes.fromhex(line.split(": ", 1)[1]) for line in real_capture(NL).splitlines() if line.startswith("datagram: ")]
OPTION = {"rings": "-g", "channels": "-l", "coalesce": "-c"}
PARSER = {"rings": _ethtool.parse_ethtool_rings, "channels": _ethtool.parse_ethtool_channels,
          "coalesce": _ethtool.parse_ethtool_coalesce}


def texts():
    """{(option, ifname): (exit, output)} of the ethtool runs of the same minute."""
    out, key = {}, None
    for line in real_capture("ethtool-netlink/ethtool-text.same-minute.txt").splitlines():
        m = re.match(r"^\$ ethtool (-[glc]) (\S+)  \(exit (\d+)\)$", line)
        if m:
            key = (m.group(1), m.group(2))
            out[key] = (int(m.group(3)), [])
        else:
            out[key][1].append(line)
    return dict((k, (rc, "\n".join(lines) + "\n")) for k, (rc, lines) in out.items())


def replies():
    """{seq: (type, payload)} of every reply datagram in the capture."""
    return dict((seq, (kind, payload)) for data in DATAGRAMS for kind, seq, payload in _ethnl.split(data))


def test_the_family_is_asked_of_the_controller_and_found():
    (kind, seq, payload), = _ethnl.split(FAMILY)
    assert (kind, seq) == (_ethnl.GENL_ID_CTRL, 1)
    assert 16 <= _ethnl.family_id(kind, payload) < 0x10000
    assert _ethnl.attrs(payload)[_ethnl.CTRL_ATTR_FAMILY_NAME] == b"ethtool\0"


@pytest.mark.parametrize("pair", PAIRS, ids=["%s-%s" % p for p in PAIRS])
def test_each_reply_is_what_ethtool_printed_that_minute(pair):
    ifname, group = pair
    kind, payload = replies()[PAIRS.index(pair) + 2]
    rc, text = texts()[(OPTION[group], ifname)]
    if "Operation not supported" in text:                  # lo has no such operations; e1000e has no channels
        assert rc == 1 and _ethnl.group_fields(group, kind, payload) is None
        return
    if "No such device" in text:
        with pytest.raises(_ethnl.NetlinkError) as e:
            _ethnl.group_fields(group, kind, payload)
        assert rc == 1 and e.value.code == errno.ENODEV
        return
    assert rc == 0
    by_netlink, by_text = _ethnl.group_fields(group, kind, payload), PARSER[group](text)
    if group == "coalesce":
        assert by_netlink == dict((f, by_text.get(f)) for f in by_netlink)
    else:
        assert by_netlink == dict((s, dict((f, by_text[s][f]) for f in by_netlink[s])) for s in ("max", "current"))


def fields(pair):
    return _ethnl.group_fields(pair[1], *replies()[PAIRS.index(pair) + 2])


def test_the_capture_has_what_the_nic_domain_reads():
    assert fields(("data0", "rings"))["current"] == {"rx": 1024, "rx_mini": None, "rx_jumbo": None, "tx": 256}
    assert fields(("data1", "coalesce"))["rx_usecs"] == 50 and fields(("data1", "coalesce"))["adaptive_rx"] is None
    assert fields(("data0", "coalesce"))["rx_usecs"] == 0       # 0 and supported: printed, not n/a


class FakeKernel(object):
    """Host.netlink replaying the capture: the controller's datagram, then for each request the kernel's
    reply to the same interface and group (its payload verbatim, its sequence number the request's)."""

    def __init__(self, datagrams=None):
        self.sent, self.datagrams = [], datagrams

    def __call__(self, protocol, dialog, timeout=2.0):
        assert protocol == _ethnl.NETLINK_GENERIC
        by_pair = dict((pair, replies()[seq]) for seq, pair in enumerate(PAIRS, 2))
        command = dict((v[0], k) for k, v in _ethnl.GROUPS.items())
        queue = [FAMILY]

        def send(data):
            self.sent.append(data)
            if len(self.sent) == 2:
                for _kind, seq, payload in _ethnl.split(data):
                    header = _ethnl.attrs(payload)[_ethnl.HEADER]
                    ifname = _ethnl.attrs(b"\0\0\0\0" + header)[_ethnl.ETHTOOL_A_HEADER_DEV_NAME].rstrip(b"\0").decode()
                    kind, reply = by_pair[(ifname, command[payload[0]])]
                    queue.append(struct.pack("=IHHII", 16 + len(reply), kind, 0, seq, 0) + reply)
                if self.datagrams is not None:
                    del queue[self.datagrams:]

        def recv():
            if not queue:
                raise HostError("netlink 16: timed out")
            return queue.pop(0)
        return dialog(send, recv)


def test_read_groups_sends_one_datagram_for_all_and_leaves_out_what_the_kernel_refused():
    kernel = FakeKernel()
    host = Host(root="/tmp/no-such-root")
    host.netlink = kernel
    got = _ethnl.read_groups(host, PAIRS)
    family = _ethnl.family_id(*_ethnl.split(FAMILY)[0][::2])
    assert kernel.sent == [_ethnl.family_request(1),
                           b"".join(_ethnl.get_request(family, seq, g, i) for seq, (i, g) in enumerate(PAIRS, 2))]
    assert sorted(got) == sorted(p for p in PAIRS if p[0] != "nosuch0")
    assert got[("lo", "rings")] is None and got[("data1", "channels")] is None


def test_no_answer_or_another_root_is_nothing_read():
    host = Host(root="/tmp/no-such-root")
    assert _ethnl.read_groups(host, PAIRS) == {}                 # Host.netlink refuses another root
    with pytest.raises(HostError, match="running kernel"):
        host.netlink(_ethnl.NETLINK_GENERIC, lambda send, recv: None)
    host.netlink = FakeKernel(3)                                  # the kernel's answers stop: a timeout
    assert _ethnl.read_groups(host, PAIRS) == {}


def ethtool_host(calls):
    """A host whose ethtool answers from the text capture (ethtool 6.1: no --json for -g/-c)."""
    runs = texts()

    def runner(argv):
        calls.append(argv[1:])
        rc, text = runs[(argv[1], argv[2])]
        return (0, text, "") if rc == 0 else (rc, "", text)
    host = Host(root="/tmp/no-such-root", runner=runner, bin_path=lambda name: "/usr/sbin/" + name)
    host.tool_facts["ethtool_no_json"] = True
    return host


TARGETS = ["%s:%s" % (i, knob.name) for i in IFACES for knob in _nic.KNOBS]


def test_the_nic_domain_reads_the_same_values_either_way():
    """read_values over the kernel's netlink (no ethtool run but for the name that is no device) equals
    read_values over ethtool's text of the same minute, error for error."""
    by_text_calls, by_netlink_calls = [], []
    by_text = _nic.read_values(ethtool_host(by_text_calls), TARGETS)
    host = ethtool_host(by_netlink_calls)
    host.netlink = FakeKernel()
    by_netlink = _nic.read_values(host, TARGETS)
    assert sorted(set(c[1] for c in by_netlink_calls)) == ["nosuch0"] and len(by_text_calls) == 3 * len(IFACES)
    assert sorted(by_netlink) == sorted(by_text) == sorted(TARGETS)
    for target in TARGETS:
        a, b = by_netlink[target], by_text[target]
        assert (str(a) if isinstance(a, HostError) else a) == (str(b) if isinstance(b, HostError) else b), target
    assert by_netlink["data0:ring.rx"] == 1024 and by_netlink["data1:coalesce.rx_usecs"] == 50
    assert isinstance(by_netlink["lo:ring.rx"], HostError) and "not supported" in str(by_netlink["lo:ring.rx"])


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200) | st.integers(min_value=0, max_value=len(DATAGRAMS) - 1).flatmap(
    lambda i: st.tuples(st.just(i), st.integers(min_value=0, max_value=200), st.binary(min_size=1, max_size=6))))
def test_bytes_the_kernel_never_sends_are_refused_never_a_crash(data):
    """A reply is untrusted input: any bytes are messages or NetlinkError, never another exception."""
    if isinstance(data, tuple):
        gram = DATAGRAMS[data[0]]
        cut = min(data[1], len(gram))
        data = gram[:cut] + data[2] + gram[cut + len(data[2]):]
    try:
        for kind, _seq, payload in _ethnl.split(data):
            for group in _ethnl.GROUPS:
                try:
                    _ethnl.group_fields(group, kind, payload)
                except _ethnl.NetlinkError:
                    pass
            try:
                _ethnl.family_id(kind, payload)
            except _ethnl.NetlinkError:
                pass
    except _ethnl.NetlinkError:
        pass
