# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""systemd's own bus, spoken without a tool: the few D-Bus messages that read units' properties.

``systemctl show`` is a process whose start alone (its shared library, under TCG) is 0.15 s on a lab VM,
and it took 0.2-0.4 s of the health check there (docs/health.md).  As root, systemctl itself talks to
systemd over ``/run/systemd/private``: a peer-to-peer D-Bus connection (no bus daemon, no ``Hello``).
This file builds the bytes of that conversation and reads systemd's answers - pure functions, tested on
a verbatim capture of a lab VM's systemd (tests/unit/fixtures/real/dbus/); the socket itself is
:meth:`_host.Host.converse`.  Only what reading a unit needs: method calls of
``org.freedesktop.DBus.Properties.Get`` (two strings in), answers that are a variant holding a string
(or an error).  Anything else in an answer - another type, a malformed message - is :class:`DBusError`, and
the caller asks systemctl as before.

The wire format is the D-Bus specification's (dbus.freedesktop.org/doc/dbus-specification.html,
"Message Protocol"): a 12-byte fixed header (endianness, type, flags, version, body length, serial), an
array of (code, variant) header fields, padding to 8, the body; every value aligned to its size from
the message's start.  Object paths of units as systemd encodes them (``sd_bus_path_encode``: every byte
that is not a letter, or a digit after the first byte, is ``_`` and two hex digits).
"""
from __future__ import annotations

import struct

PRIVATE = "/run/systemd/private"
SYSTEMD = "org.freedesktop.systemd1"
UNIT_IFACE = SYSTEMD + ".Unit"
PROPERTIES = "org.freedesktop.DBus.Properties"
UNITS_PATH = "/org/freedesktop/systemd1/unit"

METHOD_CALL, METHOD_RETURN, ERROR = 1, 2, 3
# header field codes (the specification's table) and the type of each one's variant
PATH, INTERFACE, MEMBER, ERROR_NAME, REPLY_SERIAL, DESTINATION, SENDER, SIGNATURE, UNIX_FDS = range(1, 10)


class DBusError(Exception):
    """An answer this reader does not take (malformed, not what was asked, an error reply)."""


def auth(uid):
    """SASL EXTERNAL as the process's uid (hex of its decimal digits), after the one nul byte the
    specification asks for first; the server answers ``OK <guid>\\r\\n``."""
    return b"\0AUTH EXTERNAL " + str(uid).encode().hex().encode() + b"\r\n"


BEGIN = b"BEGIN\r\n"


def unit_path(name):
    """The object path of unit ``name`` (systemd's encoding of a bus label)."""
    out = []
    for i, byte in enumerate(name.encode("utf-8")):
        char = chr(byte)
        if ("a" <= char <= "z") or ("A" <= char <= "Z") or (i > 0 and "0" <= char <= "9"):
            out.append(char)
        else:
            out.append("_%02x" % byte)
    return UNITS_PATH + "/" + ("".join(out) or "_")


def _pad(buf, align):
    buf.extend(b"\0" * (-len(buf) % align))


def _string(buf, text, length_format="<I", align=4):
    data = text.encode("utf-8")
    _pad(buf, align)
    buf.extend(struct.pack(length_format, len(data)))
    buf.extend(data + b"\0")


def get_property(serial, path, interface, name):
    """The bytes of ``Properties.Get(interface, name)`` on ``path``, little-endian, with ``serial``."""
    body = bytearray()
    _string(body, interface)
    _string(body, name)
    fields = bytearray()
    for code, sig, value in ((PATH, "o", path), (INTERFACE, "s", PROPERTIES), (MEMBER, "s", "Get"),
                             (DESTINATION, "s", SYSTEMD), (SIGNATURE, "g", "ss")):
        _pad(fields, 8)                  # each field a struct: 8-aligned (the array starts 8-aligned, at 16)
        fields.append(code)
        _string(fields, sig, "<B", 1)
        if sig == "g":
            _string(fields, value, "<B", 1)
        else:
            _string(fields, value)
    head = bytearray(b"l" + bytes((METHOD_CALL, 0, 1)) + struct.pack("<III", len(body), serial, len(fields)))
    head.extend(fields)
    _pad(head, 8)
    return bytes(head + body)


class _Reader(object):
    """Values out of one message's bytes, aligned from its start, in its own byte order."""

    def __init__(self, data, order):
        self.data, self.pos, self.order = data, 0, order

    def align(self, n):
        self.pos += -self.pos % n

    def take(self, fmt, size):
        self.align(size)
        if self.pos + size > len(self.data):
            raise DBusError("message ends inside a value")
        value = struct.unpack_from(self.order + fmt, self.data, self.pos)[0]
        self.pos += size
        return value

    def text(self, length_size):
        length = self.take("B", 1) if length_size == 1 else self.take("I", 4)
        end = self.pos + length
        if end >= len(self.data) or self.data[end:end + 1] != b"\0":
            raise DBusError("a string is not nul-terminated")
        value = self.data[self.pos:end].decode("utf-8", "replace")
        self.pos = end + 1
        return value

    def value(self, sig, nested=False):
        if sig in ("s", "o"):
            return self.text(4)
        if sig == "g":
            return self.text(1)
        if sig == "u":
            return self.take("I", 4)
        if sig == "v" and not nested:       # a variant in a variant: never an answer of ours
            return self.value(self.text(1), True)
        raise DBusError("a value of type %r is not read here" % sig)


def split(data):
    """Complete messages at the start of ``data`` (bytes a socket gave) and the bytes left over:
    ([message, ...], rest).  A message is {"type", "serial", "fields": {code: value}, "body": reader}: its
    body is read (:func:`body`) only where it is an answer to us - systemd also sends what nobody asked
    (a signal whose body is an array, on a lab VM), which is skipped whole by its length."""
    messages = []
    while len(data) >= 16:
        order = {b"l": "<", b"B": ">"}.get(data[:1])
        if order is None:
            raise DBusError("byte order %r is not D-Bus's" % data[:1])
        kind, _flags, _version, body_len, serial, fields_len = struct.unpack_from(order + "BBBIII", data, 1)
        start = 16 + fields_len + (-(16 + fields_len) % 8)
        if len(data) < start + body_len:
            break
        reader = _Reader(data[:start + body_len], order)
        reader.pos = 16
        fields = {}
        while reader.pos < 16 + fields_len:
            reader.align(8)
            code = reader.take("B", 1)
            fields[code] = reader.value(reader.text(1))
        reader.pos = start
        messages.append({"type": kind, "serial": serial, "fields": fields, "body": reader})
        data = data[start + body_len:]
    return messages, data


def body(message):
    """The values of a message's body (types s, o, g, u, v only - DBusError for any other)."""
    reader, sig = message["body"], message["fields"].get(SIGNATURE, "")
    if not isinstance(sig, str):
        raise DBusError("the signature field is not a signature")
    return [reader.value(one) for one in sig]


def is_answer(message):
    """Whether a message answers a call (a method return or an error), not a signal or a call of its own."""
    return message["type"] in (METHOD_RETURN, ERROR) and REPLY_SERIAL in message["fields"]


def replies(messages):
    """{serial asked: message} of the answers among ``messages``."""
    return dict((m["fields"][REPLY_SERIAL], m) for m in messages if is_answer(m))


class Answers(object):
    """The answers among what a socket gives, piece by piece (:meth:`_host.Host.converse`'s ``feed``):
    ``feed`` is True once ``want`` of them are in.  Signals are dropped as they come."""

    def __init__(self, want):
        self.want, self.rest, self.messages = want, b"", []

    def feed(self, chunk):
        found, self.rest = split(self.rest + chunk)
        self.messages.extend(m for m in found if is_answer(m))
        return len(self.messages) >= self.want


def unit_properties_request(units, names):
    """The bytes asking each unit's properties ``names`` (serials 1, 2, ... in the order unit, name) and
    the (unit, name) each serial asks."""
    asked, out = {}, bytearray()
    for unit in units:
        for name in names:
            serial = len(asked) + 1
            asked[serial] = (unit, name)
            out.extend(get_property(serial, unit_path(unit), UNIT_IFACE, name))
    return bytes(out), asked


def unit_properties_answer(asked, messages):
    """{unit: {name: value}} from the answers to unit_properties_request; DBusError when one is missing,
    an error, or not a string."""
    got = replies(messages)
    out = {}
    for serial, (unit, name) in sorted(asked.items()):
        reply = got.get(serial)
        if reply is None:
            raise DBusError("no answer for %s's %s" % (unit, name))
        if reply["type"] == ERROR:
            raise DBusError("%s's %s: %s" % (unit, name, reply["fields"].get(ERROR_NAME)))
        values = body(reply)
        if len(values) != 1 or not isinstance(values[0], str) or reply["fields"].get(SIGNATURE) != "v":
            raise DBusError("%s's %s is not a string" % (unit, name))
        out.setdefault(unit, {})[name] = values[0]
    return out
