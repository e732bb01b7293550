# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""RDMA ports and their netdevs from the kernel's RDMA netlink without ``rdma`` (node/_rdmanl, the stack domain's
rdma_links), on a verbatim capture of a lab VM's kernel 6.1 with soft-RoCE rxe0 on data0, beside ``rdma -j link
show`` of the same minute (tests/unit/fixtures/real/rdma-netlink/): the same ports, the same netdevs, the same
rxe key values either way."""
from __future__ import annotations

import os
import struct

from hypothesis import given, settings, strategies as st

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _ethnl, _ibtools, _rdmanl
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.stack import _domain as _stack

from ....fixtures.real.loader import real_capture

DUMP = [bytes.fromhex(line.split(": ", 1)[1]) for line in real_capture("rdma-netlink/port-dump.rxe.debian12.txt").splitlines()
        if line.startswith("datagram: ")]
TOOL = real_capture("rdma-netlink/rdma-link.same-minute.json")
FIELDS = ("device", "port", "netdev", "netdev_index")


def test_the_dump_is_what_rdma_link_printed_that_minute():
    indexes, done = _rdmanl.read_dump(DUMP, 1, _rdmanl.DEV_GET, _rdmanl.device_index)
    assert done and indexes
    entries = []
    for seq, _index in enumerate(indexes, 2):
        got, done = _rdmanl.read_dump(DUMP, seq)
        assert done
        entries.extend(got)
    by_tool = [dict((k, link[k]) for k in FIELDS) for link in _ibtools.parse_rdma_link(TOOL)]
    assert entries == by_tool
    assert {"device": "rxe0", "port": 1, "netdev": "data0"}.items() <= entries[0].items()


def test_the_requests_are_dumps_of_the_devices_then_of_each_ones_ports():
    (kind, seq, payload), = _ethnl.split(_rdmanl.devices_request(1))
    assert (kind, seq, payload) == ((5 << 10) | 1, 1, b"")
    (kind, seq, payload), = _ethnl.split(_rdmanl.ports_request(7, 3))
    assert (kind, seq, _ethnl.attrs(payload, 0)) == ((5 << 10) | 5, 7, {_rdmanl.DEV_INDEX: struct.pack("=I", 3)})
    assert struct.unpack_from("=H", _rdmanl.ports_request(7, 3), 6)[0] == 0x301      # NLM_F_REQUEST | NLM_F_DUMP


class FakeKernel(object):
    """Host.netlink replaying the capture (its datagrams, in order)."""

    def __init__(self, datagrams=None):
        self.datagrams, self.sent = list(DUMP if datagrams is None else datagrams), []

    def __call__(self, protocol, dialog, timeout=2.0):
        assert protocol == _rdmanl.NETLINK_RDMA
        queue = list(self.datagrams)

        def recv():
            if not queue:
                raise HostError("netlink 20: timed out")
            return queue.pop(0)
        return dialog(self.sent.append, recv)


def stack_host(tmp_path, calls, kernel=None):
    os.makedirs(str(tmp_path / "sys" / "module" / "ib_core"), exist_ok=True)

    def runner(argv):
        calls.append(argv[1:])
        assert argv[1:] == ["-j", "link", "show"]
        return 0, TOOL, ""
    host = Host(root=str(tmp_path), runner=runner, bin_path=lambda name: "/usr/sbin/" + name)
    if kernel is not None:
        host.netlink = kernel
    return host


def test_the_rxe_key_reads_the_same_without_the_tool(tmp_path):
    by_netlink_calls, by_tool_calls = [], []
    kernel = FakeKernel()
    by_netlink = _stack.RXE.read_value(stack_host(tmp_path, by_netlink_calls, kernel), "rxe0")
    by_tool = _stack.RXE.read_value(stack_host(tmp_path, by_tool_calls), "rxe0")   # a test root: no netlink
    assert by_netlink == by_tool == {"netdev": "data0"}
    assert by_netlink_calls == [] and by_tool_calls == [["-j", "link", "show"]]
    index = _rdmanl.read_dump(DUMP, 1, _rdmanl.DEV_GET, _rdmanl.device_index)[0][0]
    assert kernel.sent == [_rdmanl.devices_request(1), _rdmanl.ports_request(2, index)]
    assert _stack.RXE.read_value(stack_host(tmp_path, [], FakeKernel()), "rxe9") is None


def test_a_dump_cut_short_or_refused_is_the_tools_again(tmp_path):
    error = struct.pack("=IHHIIi", 16 + 4 + 16, 2, 0, 1, 0, -1) + DUMP[0][:16]           # NLMSG_ERROR, EPERM
    done_with_error = struct.pack("=IHHIIi", 20, 3, 2, 1, 0, -22)                        # NLMSG_DONE, EINVAL
    for datagrams in (DUMP[:-1], [error], [done_with_error]):
        calls = []
        assert _stack.RXE.read_value(stack_host(tmp_path, calls, FakeKernel(datagrams)), "rxe0") == {"netdev": "data0"}
        assert calls == [["-j", "link", "show"]]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200) | st.tuples(st.integers(min_value=0, max_value=300), st.binary(min_size=1, max_size=6)).map(
    lambda t: DUMP[0][:t[0]] + t[1] + DUMP[0][t[0] + len(t[1]):]))
def test_bytes_the_kernel_never_sends_are_refused_never_a_crash(data):
    for seq, kind, read in ((1, _rdmanl.DEV_GET, _rdmanl.device_index), (2, _rdmanl.PORT_GET, _rdmanl.port_entry)):
        try:
            _rdmanl.read_dump([data], seq, kind, read)
        except _ethnl.NetlinkError:
            pass
