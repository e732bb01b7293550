# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/nic/_guard.py: which interfaces carry the Ansible connection, and the refusal to change them."""
from __future__ import annotations

import os

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _guard
from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _plan as _planner
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host

from ....conftest import fixture
from .nics import BRIDGED, J, VETH

ROUTES = {("10.9.0.5", None): {"dev": "br0", "type": None}, ("198.51.100.1", None): {"dev": "br0", "type": None},
          ("10.9.2.7", None): {"dev": "mv0", "type": None}, ("fe80::1", "mv0"): {"dev": "mv0", "type": None},
          ("127.0.0.1", None): {"dev": "lo", "type": "local"}}


def route(address, oif):
    found = ROUTES.get((address, oif))
    return (found, "") if found else (None, "RTNETLINK answers: Network is unreachable")


def path(*endpoints, required=True):
    return _guard.management_path(BRIDGED, [_guard.Endpoint(*e) for e in endpoints], route, required)


SSH = "SSH_CONNECTION"


@pytest.mark.parametrize("endpoints, protected", [
    # the address sits on a bridge: the bridge, its port, and the port's veth peer are under it
    ([("10.9.0.1", "node", SSH), ("10.9.0.5", "peer", SSH)], ["br0", "v0", "v1"]),
    # a macvlan carries it: its lower device is under it (and that veth's peer)
    ([("10.9.2.1", "node", SSH)], ["mv0", "v0", "v1"]),
    # link-local with the node's zone, or without it (read from the sshd socket): compared as addresses
    ([("fe80::aa%mv0", "node", SSH), ("fe80::1%mv0", "peer", SSH)], ["mv0", "v0", "v1"]),
    ([("fe80:0:0::aa", "node", "the connection of sshd (pid 9)")], ["mv0", "v0", "v1"]),
    # an IPv4 connection on a dual-stack socket, as /proc/net/tcp6 shows it
    ([("::ffff:10.9.0.1", "node", "the connection of sshd (pid 9)")], ["br0", "v0", "v1"]),
    # the controller's ansible_host: held here, or NATed and reached by a route
    ([("10.9.2.1", "controller", "management_address")], ["mv0", "v0", "v1"]),
    ([("198.51.100.1", "controller", "management_address")], ["br0", "v0", "v1"]),
    # the route back to the SSH client alone
    ([("10.9.2.7", "peer", SSH)], ["mv0", "v0", "v1"]),
    # ssh to the node from itself: determined, no NIC
    ([("127.0.0.1", "node", SSH), ("127.0.0.1", "peer", SSH)], []),
])
def test_management_path(endpoints, protected):
    mgmt = path(*endpoints)
    assert mgmt.determined
    assert sorted(mgmt.protected) == protected


def test_management_path_says_why():
    mgmt = path(("10.9.0.1", "node", SSH))
    assert mgmt.protected["br0"] == "holds 10.9.0.1 (SSH_CONNECTION: the node's end)"
    assert mgmt.protected["v0"] == ("is the veth peer of v1, which is a port of br0, which holds 10.9.0.1 "
                                    "(SSH_CONNECTION: the node's end)")
    with pytest.raises(ValueError) as e:
        _planner.plan({"v0": {"mtu": 1500}}, {"v0": dict(BRIDGED["v0"], driver="veth")}, "runtime", False, mgmt,
                      False, {}, J, net=BRIDGED)
    assert str(e.value) == (
        "interfaces: v0 carries the Ansible connection; changing mtu could cut it off (v0 is the veth peer of v1, "
        "which is a port of br0, which holds 10.9.0.1 (SSH_CONNECTION: the node's end)). "
        "Set allow_management_interface: true to proceed")


@pytest.mark.parametrize("endpoints, note", [
    ([], None),
    ([("127.0.0.1", "controller", "management_address")], "is a loopback address of the controller"),
    ([("node1.cluster", "controller", "management_address")], "node1.cluster (management_address: the address Ansible "
                                                              "connects to) is not an IP address"),
    ([("203.0.113.9", "controller", "management_address")], "no route to 203.0.113.9"),
    ([("10.9.9.9", "node", SSH), ("203.0.113.9", "peer", SSH)], "no interface holds it"),
    ([("fe80::5", "peer", SSH)], "is link-local without an interface"),
])
def test_management_path_undetermined(endpoints, note):
    mgmt = path(*endpoints)
    assert not mgmt.determined and mgmt.protected == {}
    if note:
        assert any(note in n for n in mgmt.notes), mgmt.notes
    obs = {"data0": VETH}
    with pytest.raises(ValueError, match="cannot tell which interface carries the Ansible connection"):
        _planner.plan({"data0": {"mtu": 9000}}, obs, "runtime", False, mgmt, False, {}, J)
    # the controller said the connection does not use this node's network
    mgmt.required = False
    assert len(_planner.plan({"data0": {"mtu": 9000}}, obs, "both", False, mgmt, False, {}, J)["plan"]) == 2
    # nothing to change at runtime: nothing to refuse, whatever the path
    mgmt.required = True
    assert len(_planner.plan({"data0": {"mtu": 1500}}, obs, "runtime", False, mgmt, False, {}, J)["plan"]) == 0
    assert len(_planner.plan({"data0": {"mtu": 9000}}, obs, "persist", False, mgmt, False, {}, J)["plan"]) == 1
    assert len(_planner.plan({"data0": {"mtu": 9000}}, obs, "runtime", False, mgmt, True, {}, J)["plan"]) == 1


# ---------------------------------------------------------------------- the sshd parent when SSH_CONNECTION is gone

def fake_proc(root, sshd_ns="net:[4026531840]", comm="sshd"):
    """python (300) <- sudo (200) <- sshd (100) <- systemd (1); sshd's socket 418952 is the
    connection in the captured /proc/net/tcp (127.0.0.1:2222 <- 127.0.0.1:56060)."""
    chain = [("300", "200", "python3"), ("200", "100", "sudo"), ("100", "1", comm), ("1", "0", "systemd")]
    for pid, ppid, name in chain:
        d = root / "proc" / pid
        (d / "fd").mkdir(parents=True)
        (d / "ns").mkdir()
        (d / "status").write_text("Name:\t%s\nPPid:\t%s\n" % (name, ppid))
        (d / "comm").write_text(name + "\n")
        os.symlink(sshd_ns if pid == "100" else "net:[4026531840]", str(d / "ns" / "net"))
    os.symlink("300", str(root / "proc" / "self"))
    os.symlink("socket:[418952]", str(root / "proc/100/fd/4"))
    os.symlink("/dev/null", str(root / "proc/100/fd/0"))
    (root / "proc/100/net").mkdir()
    (root / "proc/100/net/tcp").write_text(fixture("proc-net-tcp.captured.txt"))


def test_sshd_parent_gives_the_connection_when_become_dropped_the_environment(tmp_path):
    fake_proc(tmp_path)
    host = Host(root=str(tmp_path), environ={})
    assert _guard.sshd_connections(host) == ([("127.0.0.1", "127.0.0.1", "the connection of sshd (pid 100)")], "")
    endpoints, notes = _guard.connection_endpoints(host, "10.9.0.1")
    assert [(e.address, e.side) for e in endpoints] == [("127.0.0.1", "node"), ("127.0.0.1", "peer"),
                                                        ("10.9.0.1", "controller")]
    assert notes == ["no SSH_CONNECTION in the module's environment"]
    # SSH_CONNECTION, when there, is used as it is
    host = Host(root=str(tmp_path), environ={"SSH_CONNECTION": "fe80::1%mgmt0 50000 fe80::2%mgmt0 22"})
    endpoints, notes = _guard.connection_endpoints(host, None)
    assert [(e.address, e.side) for e in endpoints] == [("fe80::2%mgmt0", "node"), ("fe80::1%mgmt0", "peer")]
    assert notes == ["management_address not given"]


@pytest.mark.parametrize("kw, reason", [
    ({"sshd_ns": "net:[4026532000]"}, "the sshd parent (pid 100) is in another network namespace"),
    ({"comm": "bash"}, "no sshd among the module's parent processes"),
])
def test_sshd_parent_elsewhere_tells_nothing(tmp_path, kw, reason):
    fake_proc(tmp_path, **kw)
    assert _guard.sshd_connections(Host(root=str(tmp_path), environ={})) == ([], reason)
