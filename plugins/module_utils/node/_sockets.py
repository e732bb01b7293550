# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The two sockets Host talks through where a tool's start would cost more than its answer (a process
start is 0.1-0.2 s on a lab VM under TCG; docs/health.md): a unix stream socket (systemd's private bus,
node/_dbus) and a netlink socket (the kernel's ethtool family, node/_ethnl).  What is said on them is
built and read by those files; here only the bytes go and come, and every failure is a HostError."""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Callable


def _socket():
    """The interpreter's socket extension itself (``_socket``): ``socket.py`` wraps it in classes and
    enums this file never uses, and building those enums was 0.03-0.06 s of the health check on a lab VM
    under TCG.  Imported here only, where a socket is used: the check's start imports nothing it does not use."""
    try:
        import _socket as sock
    except ImportError:          # an interpreter without it: the same names from the public module
        import socket as sock
    return sock


def converse(path: str, hello: bytes, payload: bytes, feed: Callable[[bytes], bool], timeout: float) -> None:
    """A unix stream socket's conversation: send ``hello``, wait for one ``OK ...\\r\\n`` line, send
    ``payload``, give ``feed`` what comes after the line, piece by piece, until it says True.  HostError
    for anything else (no socket, refused, a line that is not OK, the peer gone, ``timeout`` seconds
    for any one wait) - a D-Bus authentication and its messages (node/_dbus)."""
    socket = _socket()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    try:
        sock.settimeout(timeout)
        sock.connect(path)
        sock.sendall(hello)
        data = b""
        while b"\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                raise OSError("closed before it answered")
            data += chunk
        line, _sep, data = data.partition(b"\r\n")
        if not line.startswith(b"OK "):
            raise OSError("answered %r" % line[:80])
        sock.sendall(payload)
        done = feed(data)
        while not done:
            data = sock.recv(65536)
            if not data:
                raise OSError("closed before the last answer")
            done = feed(data)
    except OSError as e:
        raise HostError("%s: %s" % (path, e.strerror or e))
    finally:
        sock.close()


def netlink(protocol: int, dialog: Callable[[Callable[[bytes], Any], Callable[[], bytes]], Any], timeout: float) -> Any:
    """``dialog(send, recv)`` on a netlink socket of ``protocol`` (bound, the kernel's port id): ``send``
    one datagram, ``recv`` the next (``timeout`` seconds for any one wait); what ``dialog`` returns.
    HostError when the socket cannot be made or a send or receive fails."""
    socket = _socket()
    try:
        sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW | socket.SOCK_CLOEXEC, protocol)
    except (OSError, AttributeError) as e:       # no AF_NETLINK (not Linux), or refused
        raise HostError("netlink %d: %s" % (protocol, getattr(e, "strerror", None) or e))
    try:
        sock.settimeout(timeout)
        sock.bind((0, 0))
        return dialog(sock.send, lambda: sock.recv(65536))
    except OSError as e:
        raise HostError("netlink %d: %s" % (protocol, e.strerror or e))
    finally:
        sock.close()
