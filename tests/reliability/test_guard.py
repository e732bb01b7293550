# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""nic_tuning's management-link guard against a real kernel, in a throwaway network namespace.

Each test makes its own netns ``hpcnet-guard-PID-N`` (removed by name in a finally) holding the
shapes a management address hides behind - a bridge whose port is the tuned NIC, a macvlan on it,
an IPv6 link-local address with a zone - and runs the real module (AnsibleModule, exit_json /
fail_json, ``ip``/``ethtool`` for real) in a subprocess inside it, through run_module.py with the
node root ``/``.  What is asserted is the MTU the kernel reports afterwards, never the module's
word.  802.1Q VLANs are left to the unit tests (tests/unit/plugins/module_utils/nic/test_plan.py, ``ip-link.vlan.json``):
the kernel this suite was written on has no 8021q module; a macvlan stacks the same way.
"""
from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any, Dict, Iterator, List, Optional

import pytest

from rlib import COLLECTIONS, RUNNER

_SEQ = itertools.count()
SSH_BRIDGE = "10.91.0.7 50000 10.91.0.1 22"     # the node's end on bridge bra (port a1, whose peer is a0)
SSH_MACVLAN = "10.92.0.7 50000 10.92.0.1 22"    # the node's end on macvlan bmv (on b0, whose peer is b1)
SSH_LINKLOCAL = "fe80::1%d0 50000 fe80::d0%d0 22"


def ip(*args: str) -> str:
    proc = subprocess.run(["ip"] + list(args), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise AssertionError("ip %s: %s" % (" ".join(args), proc.stderr.strip()))
    return proc.stdout


def mtus(ns: str) -> Dict[str, int]:
    """Every interface's MTU, as the kernel reports it."""
    return dict((link["ifname"], link["mtu"]) for link in json.loads(ip("-n", ns, "-j", "link", "show")))


def build(ns: str) -> None:
    ip("netns", "add", ns)
    n = ["-n", ns]
    ip(*n, "link", "set", "lo", "up")
    for a, b in (("a0", "a1"), ("b0", "b1"), ("d0", "d1"), ("e0", "e1"), ("x0", "x1")):
        ip(*n, "link", "add", a, "type", "veth", "peer", "name", b)
    ip(*n, "link", "add", "bra", "type", "bridge")
    ip(*n, "link", "set", "a1", "master", "bra")
    ip(*n, "addr", "add", "10.91.0.1/24", "dev", "bra")
    ip(*n, "link", "set", "b0", "mtu", "9000")
    ip(*n, "link", "add", "link", "b0", "name", "bmv", "type", "macvlan", "mode", "bridge")   # takes 9000
    ip(*n, "addr", "add", "10.92.0.1/24", "dev", "bmv")
    ip(*n, "addr", "add", "fe80::d0/64", "dev", "d0", "nodad")
    ip(*n, "addr", "add", "10.95.0.1/24", "dev", "e0")
    ip(*n, "addr", "add", "10.93.0.1/24", "dev", "x0")
    ip(*n, "addr", "add", "10.93.0.2/24", "dev", "x1")
    for name in ("a0", "a1", "bra", "b0", "b1", "bmv", "d0", "d1", "e0", "e1", "x0", "x1"):
        ip(*n, "link", "set", name, "up")


@pytest.fixture
def netns() -> Iterator[Dict[str, str]]:
    assert os.geteuid() == 0, "the reliability tier runs as root (network namespaces)"
    ns = "hpcnet-guard-%d-%d" % (os.getpid(), next(_SEQ))
    # a journal directory root owns in a chain only root can write (/run), as the journal requires
    jdir = tempfile.mkdtemp(prefix="hpcnet-guard-", dir="/run")
    try:
        build(ns)
        yield {"ns": ns, "journal_dir": os.path.join(jdir, "journal"), "tmp": jdir}
    finally:
        subprocess.run(["ip", "netns", "delete", ns], capture_output=True, check=False)
        shutil.rmtree(jdir, ignore_errors=True)


# An "sshd" (a process named so with prctl) holding an established TCP connection to 10.93.0.1
# (on x0) from 10.93.0.2, which runs the module as its child without SSH_CONNECTION: what a module
# run with become through sudo's env_reset sees.
FAKE_SSHD = r"""
import ctypes, os, signal, socket, subprocess, sys, time
srv = socket.socket()
srv.bind(("10.93.0.1", 2222))
srv.listen()
client = os.fork()
if client == 0:
    quiet = os.open(os.devnull, os.O_RDWR)
    os.dup2(quiet, 1)
    os.dup2(quiet, 2)
    cli = socket.create_connection(("10.93.0.1", 2222), source_address=("10.93.0.2", 0))
    time.sleep(300)
    os._exit(0)
conn, _peer = srv.accept()
ctypes.CDLL(None).prctl(15, b"sshd", 0, 0, 0)
try:
    rc = subprocess.call(sys.argv[1:])
finally:
    os.kill(client, signal.SIGKILL)
    os.waitpid(client, 0)
sys.exit(rc)
"""


def run(env: Dict[str, str], module: str, params: Dict[str, Any], ssh: Optional[str] = None,
        check: bool = False, sshd: bool = False) -> Dict[str, Any]:
    """One real module call inside the netns; ``ssh`` is the SSH_CONNECTION its environment has
    (none: as after sudo's env_reset, or a local/docker connection); with ``sshd`` the module is
    the child of :data:`FAKE_SSHD`."""
    params = dict(params, journal_dir=env["journal_dir"])
    if module == "nic_tuning":
        # runtime only, always: the node root is the real / here, and a guard that failed to refuse
        # must not leave .link files in this machine's /etc/systemd/network
        params["mode"] = "runtime"
    job = os.path.join(env["tmp"], "job-%d.json" % next(_SEQ))
    with open(job, "w", encoding="utf-8") as f:
        json.dump({"root": "/", "steps": [{"module": module, "params": params, "check_mode": check}]}, f)
    child_env = {"PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"), "PYTHONPATH": COLLECTIONS,
                 "LC_ALL": "C"}
    if ssh:
        child_env["SSH_CONNECTION"] = ssh
    argv = [sys.executable, RUNNER, job]
    if sshd:
        argv = [sys.executable, "-c", FAKE_SSHD] + argv
    proc = subprocess.run(["ip", "netns", "exec", env["ns"]] + argv, env=child_env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300, check=False)
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, "no result: rc=%d stderr=%s" % (proc.returncode, proc.stderr[-2000:])
    return json.loads(lines[0])


def journal(env: Dict[str, str]) -> Optional[Dict[str, Any]]:
    path = os.path.join(env["journal_dir"], "journal.json")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)


REFUSED: List[Any] = [
    # the address sits on a bridge: its port, and that port's veth peer, carry the connection
    ("bridge port", {"interfaces": [{"name": "a1", "mtu": 1400}]}, SSH_BRIDGE,
     "a1 carries the Ansible connection; changing mtu could cut it off (a1 is a port of bra, which holds 10.91.0.1"),
    ("veth peer of a bridge port", {"interfaces": [{"name": "a0", "mtu": 1400}]}, SSH_BRIDGE,
     "a0 carries the Ansible connection; changing mtu could cut it off (a0 is the veth peer of a1, which is a "
     "port of bra"),
    # the address sits on a macvlan: the NIC under it carries the connection
    ("lower device of a macvlan", {"interfaces": [{"name": "b0", "mtu": 1500}]}, SSH_MACVLAN,
     "b0 carries the Ansible connection; changing mtu could cut it off (b0 is the lower device of bmv, which holds "
     "10.92.0.1"),
    # link-local, with the zone ssh puts in SSH_CONNECTION
    ("IPv6 link-local with a zone", {"interfaces": [{"name": "d0", "mtu": 1400}]}, SSH_LINKLOCAL,
     "d0 carries the Ansible connection; changing mtu could cut it off (d0 holds fe80::d0%d0"),
    # the controller's view alone (become dropped SSH_CONNECTION): ansible_host is on the bridge
    ("management_address on a bridge", {"interfaces": [{"name": "a1", "mtu": 1400}],
                                        "management_address": "10.91.0.1"}, None,
     "a1 carries the Ansible connection; changing mtu could cut it off (a1 is a port of bra, which holds 10.91.0.1 "
     "(management_address: the address Ansible connects to))"),
    # nothing tells the path: fail closed
    ("no connection information", {"interfaces": [{"name": "e0", "mtu": 1400}]}, None,
     "cannot tell which interface carries the Ansible connection (no SSH_CONNECTION in the module's environment; "),
    ("a forwarded port on the controller", {"interfaces": [{"name": "e0", "mtu": 1400}],
                                            "management_address": "127.0.0.1"}, None,
     "127.0.0.1 (management_address: the address Ansible connects to) is a loopback address of the controller"),
    # IPv6 on the interface (the kernel's own link-local address): below 1280 would drop it
    ("MTU below the IPv6 minimum", {"interfaces": [{"name": "e0", "mtu": 1000}], "management_connection": "none"},
     None, "e0 mtu=1000 is below 1280, the IPv6 minimum MTU (RFC 8200), and e0 has IPv6 configured (fe80::"),
]


@pytest.mark.parametrize("check", [False, True], ids=["apply", "check"])
@pytest.mark.parametrize("case, params, ssh, message", REFUSED, ids=[c[0] for c in REFUSED])
def test_refused_and_the_kernel_keeps_every_mtu(netns, case, params, ssh, message, check):
    before = mtus(netns["ns"])
    result = run(netns, "nic_tuning", params, ssh, check)
    assert result.get("failed") and result["rc"] != 0, "%s: not refused: %r" % (case, result)
    assert message in result["msg"], result["msg"]
    assert mtus(netns["ns"]) == before
    assert journal(netns) is None


def test_a_nic_off_the_management_path_is_tuned(netns):
    """The control: the guard protects what carries the connection, not every NIC."""
    before = mtus(netns["ns"])
    result = run(netns, "nic_tuning", {"interfaces": [{"name": "e0", "mtu": 1400}]}, SSH_BRIDGE)
    assert result["rc"] == 0 and result["changed"], result
    assert sorted(result["management"]["interfaces"]) == ["a0", "a1", "bra"]
    assert mtus(netns["ns"]) == dict(before, e0=1400)


def test_lowering_a_nic_journals_the_macvlan_the_kernel_lowers_with_it(netns):
    """Lowering b0 lowers bmv on it (the kernel does); bmv is journaled, so rollback restores both."""
    before = mtus(netns["ns"])
    assert (before["b0"], before["bmv"]) == (9000, 9000)
    result = run(netns, "nic_tuning", {"interfaces": [{"name": "b0", "mtu": 1500}], "management_connection": "none"})
    assert result["rc"] == 0 and result["changed"], result
    assert [c["key"] for c in result["changes"]] == ["nic:bmv:mtu", "nic:b0:mtu"]
    assert mtus(netns["ns"]) == dict(before, b0=1500, bmv=1500)
    originals = journal(netns)["originals"]
    assert (originals["nic:b0:mtu"]["value"], originals["nic:bmv:mtu"]["value"]) == (9000, 9000)
    rolled = run(netns, "tuning_state", {"action": "rollback"})
    assert rolled["rc"] == 0 and not rolled.get("unrestorable"), rolled
    assert mtus(netns["ns"]) == before


def test_become_without_ssh_connection_finds_the_sshd_parents_connection(netns):
    """No SSH_CONNECTION, no management_address: the sshd among the parents tells the path."""
    before = mtus(netns["ns"])
    result = run(netns, "nic_tuning", {"interfaces": [{"name": "x0", "mtu": 1400}]}, sshd=True)
    assert result.get("failed"), result
    assert "x0 carries the Ansible connection; changing mtu could cut it off (x0 holds 10.93.0.1 (the connection " \
           "of sshd (pid " in result["msg"], result["msg"]
    assert mtus(netns["ns"]) == before
    # the path is known, so a NIC off it is tuned
    result = run(netns, "nic_tuning", {"interfaces": [{"name": "e0", "mtu": 1400}]}, sshd=True)
    assert result["rc"] == 0 and result["changed"], result
    assert sorted(result["management"]["interfaces"]) == ["x0", "x1"] and result["management"]["determined"]
    assert mtus(netns["ns"]) == dict(before, e0=1400)
