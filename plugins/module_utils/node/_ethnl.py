# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The kernel's ethtool netlink family, asked without ethtool: ring sizes, channels and coalescing of
interfaces, as ``ethtool -g|-l|-c`` read them.

ethtool itself (5.6 and later) gets these from the same netlink messages and prints them; one ethtool run
is 0.05-0.15 s on a lab VM under TCG, and the health check's drift stage ran four of them one after the
other, the longest path of its run (docs/health.md).  Here every interface and group is one message, all
sent at once.  What the kernel does not put in a reply is the text's "n/a" (None), as ethtool prints it:
the kernel leaves a ring or channel pair out when the driver's maximum is 0, and a coalescing parameter
when it is 0 and not one the driver supports (net/ethtool/rings.c, channels.c, coalesce.c).

The wire format (include/uapi/linux/netlink.h, genetlink.h, ethtool_netlink.h): a 16-byte nlmsghdr (length,
type, flags, sequence, port) and a 4-byte genlmsghdr (command, version), then attributes (length, type,
payload padded to 4) in the host's byte order.  The family's id is asked of the generic netlink controller
first (CTRL_CMD_GETFAMILY "ethtool").  Pure: the socket is Host.netlink; tested on a verbatim capture of a
lab VM's kernel beside ethtool's text of the same interfaces in the same minute
(tests/unit/fixtures/real/ethtool-netlink/).
"""
from __future__ import annotations

import errno
import struct

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError

NETLINK_GENERIC = 16
GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY = 3
CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME = 1, 2
NLM_F_REQUEST = 1
NLMSG_ERROR = 2
NLA_F_NESTED = 0x8000
NLA_TYPE_MASK = 0x3FFF
ETHTOOL_A_HEADER_DEV_NAME = 2
HEADER = 1                      # ETHTOOL_A_{RINGS,CHANNELS,COALESCE}_HEADER

# group: (ETHTOOL_MSG_*_GET, {attribute: (section, field)}) - section None for a flat group (coalesce);
# fields as _ethtool's text readers name them, "bool" fields are u8 flags
GROUPS = {
    "rings": (15, {2: ("max", "rx"), 3: ("max", "rx_mini"), 4: ("max", "rx_jumbo"), 5: ("max", "tx"),
                   6: ("current", "rx"), 7: ("current", "rx_mini"), 8: ("current", "rx_jumbo"), 9: ("current", "tx")}),
    "channels": (17, {2: ("max", "rx"), 3: ("max", "tx"), 4: ("max", "other"), 5: ("max", "combined"),
                      6: ("current", "rx"), 7: ("current", "tx"), 8: ("current", "other"), 9: ("current", "combined")}),
    "coalesce": (19, {2: (None, "rx_usecs"), 3: (None, "rx_frames"), 6: (None, "tx_usecs"), 7: (None, "tx_frames"),
                      11: (None, "adaptive_rx"), 12: (None, "adaptive_tx")}),
}
BOOLS = ("adaptive_rx", "adaptive_tx")


class NetlinkError(Exception):
    """A reply this reader does not take, or the kernel's error (``code``: its errno, else None)."""

    def __init__(self, msg, code=None):
        super(NetlinkError, self).__init__(msg)
        self.code = code


def attr(kind, payload):
    """One attribute, padded to 4."""
    data = struct.pack("=HH", 4 + len(payload), kind) + payload
    return data + b"\0" * (-len(data) % 4)


def message(kind, seq, command, attrs):
    """A request: nlmsghdr, genlmsghdr (version 1), the attributes."""
    body = struct.pack("=BBH", command, 1, 0) + attrs
    return struct.pack("=IHHII", 16 + len(body), kind, NLM_F_REQUEST, seq, 0) + body


def family_request(seq):
    return message(GENL_ID_CTRL, seq, CTRL_CMD_GETFAMILY, attr(CTRL_ATTR_FAMILY_NAME, b"ethtool\0"))


def get_request(family, seq, group, ifname):
    """ETHTOOL_MSG_<group>_GET of ``ifname`` (its header: the device's name)."""
    name = attr(ETHTOOL_A_HEADER_DEV_NAME, ifname.encode("utf-8") + b"\0")
    return message(family, seq, GROUPS[group][0], attr(HEADER | NLA_F_NESTED, name))


def split(data):
    """The messages of one datagram: [(type, seq, payload after the nlmsghdr)]."""
    out, pos = [], 0
    while pos + 16 <= len(data):
        length, kind, _flags, seq, _port = struct.unpack_from("=IHHII", data, pos)
        if length < 16 or pos + length > len(data):
            raise NetlinkError("a message of %d bytes in a datagram of %d" % (length, len(data)))
        out.append((kind, seq, data[pos + 16:pos + length]))
        pos += (length + 3) & ~3
    return out


def attrs(payload, start=4):
    """{type: payload} of the attributes after a genlmsghdr (``start`` 0: a netlink family without one)."""
    out, pos = {}, start
    while pos + 4 <= len(payload):
        length, kind = struct.unpack_from("=HH", payload, pos)
        if length < 4 or pos + length > len(payload):
            raise NetlinkError("an attribute of %d bytes overruns its message" % length)
        out[kind & NLA_TYPE_MASK] = payload[pos + 4:pos + length]
        pos += (length + 3) & ~3
    return out


def error_of(kind, payload):
    """The kernel's errno of an NLMSG_ERROR (0: an acknowledgement), None for any other message."""
    if kind != NLMSG_ERROR:
        return None
    if len(payload) < 4:
        raise NetlinkError("an error message without its code")
    return -struct.unpack_from("=i", payload)[0]


def family_id(kind, payload):
    code = error_of(kind, payload)
    if code:
        raise NetlinkError("no ethtool netlink family: %s" % errno.errorcode.get(code, code), code)
    value = attrs(payload).get(CTRL_ATTR_FAMILY_ID)
    if value is None or len(value) < 2:
        raise NetlinkError("the controller's answer has no family id")
    return struct.unpack_from("=H", value)[0]


def group_fields(group, kind, payload):
    """The reply to get_request as _ethtool's text reader gives it: rings and channels {max, current}, coalesce
    flat; None where the kernel left an attribute out.  None for EOPNOTSUPP (the driver has no such
    operation: the text reader's NotSupported); NetlinkError for any other error."""
    code = error_of(kind, payload)
    if code == errno.EOPNOTSUPP:
        return None
    if code is not None:
        raise NetlinkError("%s" % errno.errorcode.get(code, code), code)
    found = attrs(payload)
    table = GROUPS[group][1]
    if group == "coalesce":
        out = dict((field, None) for _section, field in table.values())
    else:
        out = {"max": {}, "current": {}}
        for section, field in table.values():
            out[section][field] = None
    for key, (section, field) in table.items():
        value = found.get(key)
        if value is None:
            continue
        if field in BOOLS:
            if len(value) < 1:
                raise NetlinkError("%s of %s is empty" % (field, group))
            number = bool(value[0])
        else:
            if len(value) < 4:
                raise NetlinkError("%s of %s is %d bytes, not a u32" % (field, group, len(value)))
            number = struct.unpack_from("=I", value)[0]
        if section is None:
            out[field] = number
        else:
            out[section][field] = number
    return out


def read_groups(host, pairs):
    """{(ifname, group): fields or None (not supported by the driver)} of each pair the kernel answered
    (group_fields); a pair it refused otherwise (no such device ...) is left out, and so is every pair when
    netlink cannot be asked (another root, no ethtool family, a reply not taken): the caller asks ethtool
    for what is left out, as before."""
    if not pairs:
        return {}

    def dialog(send, recv):
        send(family_request(1))
        family = None
        while family is None:
            for kind, seq, payload in split(recv()):
                if seq == 1:
                    family = family_id(kind, payload)
        asked = dict((seq, pair) for seq, pair in enumerate(pairs, 2))
        send(b"".join(get_request(family, seq, pair[1], pair[0]) for seq, pair in asked.items()))
        got = {}
        while len(got) < len(asked):
            for kind, seq, payload in split(recv()):
                if seq in asked and seq not in got:
                    got[seq] = (kind, payload)
        out = {}
        for seq, pair in asked.items():
            try:
                out[pair] = group_fields(pair[1], *got[seq])
            except NetlinkError:
                pass
        return out
    try:
        return host.netlink(NETLINK_GENERIC, dialog)
    except (HostError, NetlinkError):
        return {}
