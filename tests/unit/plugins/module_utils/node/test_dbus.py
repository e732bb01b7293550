# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""systemd's private bus without systemctl (node/_dbus, Host.converse, _systemd.unit_properties), on a verbatim
capture of a lab VM's systemd 252: what it answered to the Properties.Get calls node/_dbus builds, and
``systemctl show`` of the same units in the same minute (tests/unit/fixtures/real/systemd-bus/).  The
services domain reads the same values either way; anything the reader does not take is systemctl's again."""
from __future__ import annotations

import os
import socket
import threading

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _dbus, _systemd
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.services import _domain as _service

from ....fixtures.real.loader import real_capture, real_header

BUS = "systemd-bus/private-bus.unit-properties.debian12.txt"
UNITS = real_header(BUS)["units"].split()
NAMES = ("Id", "UnitFileState", "ActiveState")
AUTH_LINE = real_capture(BUS).split("\n", 1)[0][len("auth: "):].encode()
ANSWER = bytes.fromhex("".join(real_capture(BUS).split("answer:\n", 1)[1].split()))
SHOW = real_capture("systemd-bus/show.same-minute.debian12.txt")


def shown():
    """{unit: {property: value}} of the systemctl show capture (its blocks in the order of UNITS)."""
    blocks = SHOW.strip("\n").split("\n\n")
    assert len(blocks) == len(UNITS)
    return dict((unit, dict(line.split("=", 1) for line in block.splitlines())) for unit, block in zip(UNITS, blocks))


def test_the_answer_is_what_systemctl_show_printed_that_minute():
    _payload, asked = _dbus.unit_properties_request(UNITS, NAMES)
    messages, rest = _dbus.split(ANSWER)
    assert rest == b"" and len(asked) == 30
    assert _dbus.unit_properties_answer(asked, messages) == shown()
    assert shown()["sshd.service"]["Id"] == "ssh.service" and shown()["nosuch.service"]["UnitFileState"] == ""


def test_unit_paths_are_systemds_own():
    """systemd's UnitNew signals in the capture name each unit it loaded with its object path: ours agree."""
    news = [_dbus.body(m) for m in _dbus.split(ANSWER)[0] if m["fields"].get(_dbus.MEMBER) == "UnitNew"]
    assert len(news) == 6
    for unit, path in news:
        assert _dbus.unit_path(unit) == path
    assert _dbus.unit_path("serial-getty@ttyS0.service") == "/org/freedesktop/systemd1/unit/serial_2dgetty_40ttyS0_2eservice"
    assert _dbus.unit_path("1x") == _dbus.UNITS_PATH + "/_31x" and _dbus.unit_path("") == _dbus.UNITS_PATH + "/_"


def test_a_call_is_read_back_as_it_was_built():
    messages, rest = _dbus.split(_dbus.get_property(7, "/org/freedesktop/systemd1/unit/ssh_2eservice", _dbus.UNIT_IFACE, "Id"))
    assert rest == b"" and [(m["type"], m["serial"]) for m in messages] == [(_dbus.METHOD_CALL, 7)]
    assert messages[0]["fields"] == {_dbus.PATH: "/org/freedesktop/systemd1/unit/ssh_2eservice", _dbus.INTERFACE: _dbus.PROPERTIES,
                                     _dbus.MEMBER: "Get", _dbus.DESTINATION: _dbus.SYSTEMD, _dbus.SIGNATURE: "ss"}
    assert _dbus.body(messages[0]) == [_dbus.UNIT_IFACE, "Id"]
    assert _dbus.auth(0) == b"\0AUTH EXTERNAL 30\r\n" and _dbus.auth(1000) == b"\0AUTH EXTERNAL 31303030\r\n"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=5000), min_size=1, max_size=40))
def test_the_answer_read_piece_by_piece_is_the_same(cuts):
    """However the socket cuts the bytes, the same answers; done exactly when the last one is in."""
    _payload, asked = _dbus.unit_properties_request(UNITS, NAMES)
    answers, pos, done = _dbus.Answers(len(asked)), 0, False
    for size in cuts + [len(ANSWER)]:
        if done:
            break
        done = answers.feed(ANSWER[pos:pos + size])
        pos += size
    assert done and _dbus.unit_properties_answer(asked, answers.messages) == shown()


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300) | st.integers(min_value=0, max_value=len(ANSWER) - 1).flatmap(
    lambda cut: st.tuples(st.just(cut), st.binary(min_size=1, max_size=8)).map(
        lambda t: ANSWER[:t[0]] + t[1] + ANSWER[t[0] + len(t[1]):])))
def test_bytes_nobody_should_send_are_refused_never_a_crash(data):
    """The socket's bytes are untrusted: any of them is messages, a wait for more, or DBusError."""
    _payload, asked = _dbus.unit_properties_request(UNITS, NAMES)
    try:
        messages, _rest = _dbus.split(data)
        _dbus.unit_properties_answer(asked, [m for m in messages if m["type"] in (_dbus.METHOD_RETURN, _dbus.ERROR)])
    except _dbus.DBusError:
        pass


def test_an_error_or_a_missing_answer_is_refused():
    _payload, asked = _dbus.unit_properties_request(UNITS, NAMES)
    messages = _dbus.split(ANSWER)[0]
    first = next(i for i, m in enumerate(messages) if m["type"] == _dbus.METHOD_RETURN)
    with pytest.raises(_dbus.DBusError, match="no answer"):
        _dbus.unit_properties_answer(asked, messages[:first] + messages[first + 1:])
    error = dict(messages[first], type=_dbus.ERROR)
    with pytest.raises(_dbus.DBusError):
        _dbus.unit_properties_answer(asked, messages[:first] + [error] + messages[first + 1:])
    with pytest.raises(_dbus.DBusError, match="byte order"):
        _dbus.split(b"X" + ANSWER[1:])


class FakeSystemd(object):
    """A unix socket at ROOT/run/systemd/private that answers as the captured systemd did: its OK line,
    then (once it has the calls node/_dbus builds, byte for byte) the captured bytes in pieces."""

    def __init__(self, root, line=AUTH_LINE, answer=ANSWER):
        os.makedirs(os.path.join(root, "run", "systemd", "system"))
        self.path = os.path.join(root, "run", "systemd", "private")
        self.line, self.answer, self.got = line, answer, b""
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        self.sock.listen(1)
        self.thread = threading.Thread(target=self.serve)
        self.thread.start()

    def serve(self):
        conn, _addr = self.sock.accept()
        conn.settimeout(10)
        payload, _asked = _dbus.unit_properties_request(UNITS, NAMES)
        want = _dbus.auth(os.geteuid()) + _dbus.BEGIN + payload
        try:
            while len(self.got) < len(_dbus.auth(os.geteuid())):
                self.got += conn.recv(4096)
            conn.sendall(self.line + b"\r\n")
            if self.line.startswith(b"OK "):
                while len(self.got) < len(want):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    self.got += chunk
                for i in range(0, len(self.answer), 1000):
                    conn.sendall(self.answer[i:i + 1000])
        except OSError:
            pass
        finally:
            conn.close()

    def stop(self):
        self.thread.join(10)
        self.sock.close()


def single_runs():
    """{(verb, unit): (rc, stdout, stderr)} of the lab VM's is-enabled / is-active captures (services/test_service)."""
    import re
    out = {}
    for line in real_capture("systemctl/is-enabled-is-active.debian12.txt").splitlines():
        m = re.match(r"^(is-enabled|is-active) (\S+) rc=(\d+) out=\[(.*)\] err=\[(.*)\]$", line)
        out[(m.group(1), m.group(2))] = (int(m.group(3)), m.group(4) + "\n" if m.group(4) else "",
                                         m.group(5) + "\n" if m.group(5) else "")
    return out


def host_with(root, calls):
    """A host whose systemctl answers as the captures: show (same minute as the bus capture), is-enabled/is-active."""
    single = single_runs()

    def runner(argv):
        calls.append(argv[1:])
        if argv[1] == "show":
            return 0, SHOW, ""
        return single[(argv[1], argv[3])]
    return Host(root=str(root), runner=runner, bin_path=lambda name: "/usr/bin/" + name)


def test_read_values_asks_systemd_itself_as_root_and_reads_what_systemctl_show_reads(tmp_path, monkeypatch):
    """As root: the bus, no systemctl show; the alias and the unit without a file are asked one by one as with
    show.  The values are those of the show capture of the same minute, read the systemctl way."""
    monkeypatch.setattr(_systemd.os, "geteuid", lambda: 0)
    fake, calls = FakeSystemd(str(tmp_path / "bus")), []
    try:
        by_bus = _service.read_values(host_with(tmp_path / "bus", calls), UNITS)
    finally:
        fake.stop()
    payload, _asked = _dbus.unit_properties_request(UNITS, NAMES)
    assert fake.got == _dbus.auth(0) + _dbus.BEGIN + payload
    assert sorted(c[2] for c in calls) == ["nosuch.service", "nosuch.service", "sshd.service", "sshd.service"]
    assert all(c[0] in ("is-enabled", "is-active") for c in calls)
    os.makedirs(str(tmp_path / "show" / "run" / "systemd" / "system"))      # no socket: systemctl show
    show_calls = []
    assert _service.read_values(host_with(tmp_path / "show", show_calls), UNITS) == by_bus
    assert show_calls[0] == ["show", "--property=Id,UnitFileState,ActiveState", "--"] + UNITS
    assert by_bus["irqbalance.service"] == {"active": True, "enabled": "enabled"}
    assert by_bus["fstrim.timer"] == {"active": False, "enabled": "masked"}
    assert by_bus["serial-getty@ttyS0.service"] == {"active": True, "enabled": "enabled-runtime"}
    assert by_bus["nosuch.service"] is None and by_bus["sshd.service"] == {"active": True, "enabled": "alias"}


@pytest.mark.parametrize("line, answer", [
    (b"REJECTED EXTERNAL", ANSWER),                 # not let in
    (AUTH_LINE, ANSWER[:len(ANSWER) // 2]),         # gone before the last answer
    (AUTH_LINE, b"X" + ANSWER[1:]),                 # bytes that are not D-Bus
])
def test_what_the_bus_does_not_give_is_asked_of_systemctl(tmp_path, monkeypatch, line, answer):
    monkeypatch.setattr(_systemd.os, "geteuid", lambda: 0)
    fake, calls = FakeSystemd(str(tmp_path), line, answer), []
    try:
        assert _systemd.unit_properties(host_with(tmp_path, calls), UNITS, NAMES) is None
    finally:
        fake.stop()
    assert calls == []


def test_not_root_never_connects(tmp_path, monkeypatch):
    """The private bus is root's: another user asks systemctl (which then uses the system bus)."""
    monkeypatch.setattr(_systemd.os, "geteuid", lambda: 1000)
    host = host_with(tmp_path, [])
    host.converse = None                            # any use of the socket would raise
    assert _systemd.unit_properties(host, UNITS, NAMES) is None


def test_a_silent_peer_is_a_host_error_after_the_timeout(tmp_path):
    path = str(tmp_path / "sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    try:
        with pytest.raises(HostError, match="timed out"):
            Host(root=str(tmp_path)).converse("/sock", b"\0AUTH\r\n", b"", lambda data: True, timeout=0.2)
        with pytest.raises(HostError, match="missing"):
            Host(root=str(tmp_path)).converse("/missing", b"", b"", lambda data: True)
    finally:
        server.close()
