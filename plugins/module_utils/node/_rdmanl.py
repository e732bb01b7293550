# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The kernel's RDMA netlink (NETLINK_RDMA, client RDMA_NL_NLDEV), asked without ``rdma``: each RDMA port
and the netdev it is bound to, what ``rdma -j link show`` prints as ``ifname``, ``port`` and ``netdev``.

``rdma link show`` is a dump of the devices (RDMA_NLDEV_CMD_GET), then one dump of RDMA_NLDEV_CMD_PORT_GET per
device (the kernel refuses a port dump without RDMA_NLDEV_ATTR_DEV_INDEX, EINVAL in its NLMSG_DONE); the
health check's drift stage ran it for its
soft-RoCE keys (0.12-0.2 s on a lab VM under TCG, at the end of that stage's path - docs/health.md).  The
same dump here, read by the attributes iproute2 prints (include/uapi/rdma/rdma_netlink.h, an ABI:
RDMA_NLDEV_ATTR_DEV_NAME 2, PORT_INDEX 3, NDEV_INDEX 50, NDEV_NAME 51).  The kernel puts NDEV_* only for
a port whose netdev is in the caller's network namespace (drivers/infiniband/core/nldev.c,
fill_port_info), as the tool shows it.  Pure but for :func:`port_netdevs` (Host.netlink); tested on a
verbatim capture of a lab VM's kernel beside ``rdma -j link show`` of the same minute
(tests/unit/fixtures/real/rdma-netlink/).  Opening NETLINK_RDMA loads ib_core: the caller asks only when
it is loaded (stack/_domain.rdma_links)."""
from __future__ import annotations

import struct

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _ethnl
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError

NETLINK_RDMA = 20
RDMA_NL_NLDEV = 5
RDMA_NLDEV_CMD_GET, RDMA_NLDEV_CMD_PORT_GET = 1, 5
DEV_GET = (RDMA_NL_NLDEV << 10) | RDMA_NLDEV_CMD_GET
PORT_GET = (RDMA_NL_NLDEV << 10) | RDMA_NLDEV_CMD_PORT_GET
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
NLMSG_DONE = 3
DEV_INDEX, DEV_NAME, PORT_INDEX, NDEV_INDEX, NDEV_NAME = 1, 2, 3, 50, 51


def devices_request(seq):
    """A dump of every RDMA device (no attributes)."""
    return struct.pack("=IHHII", 16, DEV_GET, NLM_F_REQUEST | NLM_F_DUMP, seq, 0)


def ports_request(seq, index):
    """A dump of the ports of the device of index ``index``."""
    body = _ethnl.attr(DEV_INDEX, struct.pack("=I", index))
    return struct.pack("=IHHII", 16 + len(body), PORT_GET, NLM_F_REQUEST | NLM_F_DUMP, seq, 0) + body


def device_index(payload):
    """A device dump message's RDMA_NLDEV_ATTR_DEV_INDEX."""
    value = _ethnl.attrs(payload, 0).get(DEV_INDEX, b"")
    if len(value) < 4:
        raise _ethnl.NetlinkError("a device without its index")
    return struct.unpack_from("=I", value)[0]


def _text(value):
    return value.split(b"\0", 1)[0].decode("utf-8", "replace")


def port_entry(payload):
    """One dump message: {"device", "port", "netdev", "netdev_index"} (netdev None: none in this namespace)."""
    found = _ethnl.attrs(payload, 0)
    if DEV_NAME not in found or len(found.get(PORT_INDEX, b"")) < 4:
        raise _ethnl.NetlinkError("a port without its device name or index")
    index = found.get(NDEV_INDEX)
    return {"device": _text(found[DEV_NAME]), "port": struct.unpack_from("=I", found[PORT_INDEX])[0],
            "netdev": _text(found[NDEV_NAME]) if NDEV_NAME in found else None,
            "netdev_index": struct.unpack_from("=I", index)[0] if index is not None and len(index) >= 4 else None}


def read_dump(datagrams, seq, kind_wanted=PORT_GET, read=port_entry):
    """``read`` of each message of the dump answering ``seq`` (messages of ``kind_wanted``), from its datagrams,
    and whether its NLMSG_DONE came; NetlinkError for an error, or a NLMSG_DONE that carries one."""
    out, done = [], False
    for data in datagrams:
        for kind, got, payload in _ethnl.split(data):
            if got != seq:
                continue
            code = _ethnl.error_of(kind, payload)
            if kind == NLMSG_DONE and len(payload) >= 4:
                code = -struct.unpack_from("=i", payload)[0]
            if code:
                raise _ethnl.NetlinkError("the RDMA netlink dump was refused: errno %d" % code, code)
            if kind == NLMSG_DONE:
                done = True
            elif kind == kind_wanted:
                out.append(read(payload))
    return out, done


def port_netdevs(host):
    """[{"device", "port", "netdev", "netdev_index"}] of every RDMA port, or None when netlink cannot be asked
    or answers what this does not take (the caller runs ``rdma -j link show`` then, as before)."""
    def dump(send, recv, request, seq, kind, read):
        send(request)
        out, done = [], False
        while not done:                 # each datagram read once, until the one with NLMSG_DONE
            got, done = read_dump([recv()], seq, kind, read)
            out.extend(got)
        return out

    def dialog(send, recv):
        indexes = dump(send, recv, devices_request(1), 1, DEV_GET, device_index)
        ports = []
        for seq, index in enumerate(indexes, 2):      # one dump at a time: a socket runs one dump
            ports.extend(dump(send, recv, ports_request(seq, index), seq, PORT_GET, port_entry))
        return ports
    try:
        return host.netlink(NETLINK_RDMA, dialog)
    except (HostError, _ethnl.NetlinkError):
        return None
