# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared test doubles: a fake node tree under tmp_path and a module stand-in.

``FakeNode`` keeps NIC state and answers ``ip``/``ethtool`` argv the way the real tools print
(their documented output formats), so the real parsers and planners run unchanged.  It is a
simulation for unit tests only; the Molecule scenarios exercise the real tools on a real kernel.
"""
from __future__ import annotations

import copy
import json
import os
from typing import Any, Dict, List, Optional, Tuple

import pytest

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")


def fixture(name: str) -> str:
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as f:
        return f.read()


class Failed(Exception):
    def __init__(self, msg: str, **kwargs: Any) -> None:
        Exception.__init__(self, msg)
        self.msg = msg
        self.result = kwargs


class FakeModule(object):
    """Validates params against the module's real ARGUMENT_SPEC, like AnsibleModule does."""

    def __init__(self, spec: Dict[str, Any], params: Dict[str, Any], check_mode: bool = False,
                 diff: bool = True) -> None:
        # a copy: the validator writes into the spec it is given (defaults of dict suboptions), and the
        # modules' specs are shared module_utils objects (AnsibleModule validates once per process)
        result = ArgumentSpecValidator(copy.deepcopy(spec)).validate(params)
        if result.error_messages:
            raise Failed("; ".join(result.error_messages))
        self.params = result.validated_parameters
        self.check_mode = check_mode
        self._diff = diff
        self.warnings: List[str] = []

    def fail_json(self, msg: str, **kwargs: Any) -> None:
        raise Failed(msg, **kwargs)

    def warn(self, msg: str) -> None:
        self.warnings.append(msg)


def _fmt(v: Optional[int]) -> str:
    return "n/a" if v is None else str(v)


class FakeNic(object):
    def __init__(self, name: str, driver: str, mtu: int = 1500, min_mtu: int = 68, max_mtu: int = 9216,
                 rings: Optional[Dict[str, Any]] = None, channels: Optional[Dict[str, Any]] = None,
                 coalesce: Optional[Dict[str, Any]] = None, addresses: Optional[List[Tuple[str, int]]] = None,
                 mac: str = "52:54:00:12:34:56", kind: Optional[str] = None) -> None:
        self.name, self.driver, self.mtu, self.min_mtu, self.max_mtu = name, driver, mtu, min_mtu, max_mtu
        self.rings = rings          # {"max": {...}, "current": {...}} or None = not supported
        self.channels = channels
        self.coalesce = coalesce    # flat dict or None
        self.addresses = addresses or []
        self.mac = mac
        self.kind = kind


class FakeNode(object):
    """A node: a fake /proc, /sys and /etc tree under ``root`` plus NICs answering ip/ethtool."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.nics: Dict[str, FakeNic] = {}
        self.calls: List[List[str]] = []
        self.fail_on: Optional[str] = None   # substring of an argv that makes the command fail
        self.environ: Dict[str, str] = {}
        # the ethtool this node has: 6.1 (Debian 12) has no --json for -g/-c; True plays a newer one
        self.ethtool_json = False

    # ---- tree helpers
    def path(self, p: str) -> str:
        return os.path.join(self.root, p.lstrip("/"))

    def write(self, p: str, text: str, mode: int = 0o644) -> None:
        full = self.path(p)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(full, mode)

    def read(self, p: str) -> Optional[str]:
        try:
            with open(self.path(p), encoding="utf-8") as f:
                return f.read()
        except FileNotFoundError:
            return None

    def sysctl(self, key: str, value: str, writable: bool = True) -> None:
        self.write("/proc/sys/" + key.replace(".", "/"), value + "\n", 0o644 if writable else 0o444)

    def add_nic(self, nic: FakeNic) -> FakeNic:
        self.nics[nic.name] = nic
        self.write("/sys/class/net/%s/mtu" % nic.name, "%d\n" % nic.mtu)
        if nic.kind is None:
            drv = self.path("/sys/bus/pci/drivers/%s" % nic.driver)
            os.makedirs(drv, exist_ok=True)
            os.makedirs(self.path("/sys/class/net/%s/device" % nic.name), exist_ok=True)
            link = self.path("/sys/class/net/%s/device/driver" % nic.name)
            if not os.path.lexists(link):
                os.symlink(drv, link)
        return nic

    def snapshot(self) -> Dict[str, Any]:
        """Every file under the root (content + mode) and every NIC setting: 'node untouched'."""
        files = {}
        for d, _dirs, names in os.walk(self.root):
            for n in names:
                full = os.path.join(d, n)
                if os.path.islink(full):
                    files[full] = "-> " + os.readlink(full)
                    continue
                with open(full, "rb") as f:
                    data = f.read()
                if full.startswith(self.path("/proc") + "/"):
                    data = b" ".join(data.split())   # the kernel renders a value; its whitespace is not state
                files[full] = (data, oct(os.stat(full).st_mode))
        nics = dict((n, json.dumps([x.mtu, x.rings, x.channels, x.coalesce], sort_keys=True))
                    for n, x in self.nics.items())
        return {"files": files, "nics": nics}

    def host(self) -> Host:
        return Host(root=self.root, runner=self.run, bin_path=lambda name: "/usr/sbin/" + name,
                    environ=self.environ)

    # ---- command simulation
    def run(self, argv: List[str]) -> Tuple[int, str, str]:
        argv = [os.path.basename(argv[0])] + list(argv[1:])
        self.calls.append(argv)
        if self.fail_on and self.fail_on in " ".join(argv):
            return 1, "", "netlink error: Invalid argument (simulated)"
        if argv[:2] == ["ip", "-j"] and "link" in argv:
            return 0, json.dumps([self._link_json(i + 2, n) for i, n in enumerate(self.nics.values())]), ""
        if argv[:4] == ["ip", "-j", "addr", "show"]:
            return 0, json.dumps([{"ifname": n.name, "addr_info": [
                {"family": "inet6" if ":" in a else "inet", "local": a, "prefixlen": p} for a, p in n.addresses]}
                for n in self.nics.values()]), ""
        if argv[:5] == ["ip", "link", "set", "dev", argv[4] if len(argv) > 4 else ""] and argv[5:6] == ["mtu"]:
            nic = self.nics[argv[4]]
            mtu = int(argv[6])
            if not nic.min_mtu <= mtu <= nic.max_mtu:
                return 2, "", "Error: mtu greater than device maximum."
            nic.mtu = mtu
            self.write("/sys/class/net/%s/mtu" % nic.name, "%d\n" % mtu)
            return 0, "", ""
        if argv[:2] == ["ethtool", "--json"]:
            return self._ethtool_json(argv[2], argv[3])
        if argv[0] == "ethtool":
            return self._ethtool(argv[1], argv[2], argv[3:])
        return 127, "", "fake node: unexpected command %r" % argv

    def _link_json(self, index: int, nic: FakeNic) -> Dict[str, Any]:
        d: Dict[str, Any] = {"ifindex": index, "ifname": nic.name, "flags": ["BROADCAST", "MULTICAST", "UP"],
                             "mtu": nic.mtu, "min_mtu": nic.min_mtu, "max_mtu": nic.max_mtu,
                             "operstate": "UP", "link_type": "ether", "address": nic.mac}
        if nic.kind:
            d["linkinfo"] = {"info_kind": nic.kind}
        return d

    def _ethtool_json(self, flag: str, ifname: str) -> Tuple[int, str, str]:
        """``ethtool --json -g|-c IF`` as ethtool 6.14 prints it (absent keys for n/a), or 6.1's refusal."""
        if not self.ethtool_json or flag not in ("-g", "-c"):
            return 1, "", "ethtool: bad command line argument(s)\nFor more information run ethtool -h\n"
        nic = self.nics.get(ifname)
        state = getattr(nic, "rings" if flag == "-g" else "coalesce") if nic is not None else None
        if state is None:
            return 1, "[ ]\n", "netlink error: Operation not supported\n"
        obj: Dict[str, Any] = {"ifname": ifname}
        if flag == "-g":
            for k in ("rx", "rx_mini", "rx_jumbo", "tx"):
                if state["max"].get(k) is not None:
                    obj[k.replace("_", "-") + "-max"] = state["max"][k]
            for k in ("rx", "rx_mini", "rx_jumbo", "tx"):
                if state["current"].get(k) is not None:
                    obj[k.replace("_", "-")] = state["current"][k]
        else:
            obj.update((k.replace("_", "-"), v) for k, v in sorted(state.items()) if v is not None)
        return 0, json.dumps([obj], indent=4) + "\n", ""

    def _ethtool(self, flag: str, ifname: str, args: List[str]) -> Tuple[int, str, str]:
        nic = self.nics.get(ifname)
        if nic is None:
            return 1, "", "netlink error: no device matches name (No such device)"
        section = {"-g": "rings", "-G": "rings", "-l": "channels", "-L": "channels",
                   "-c": "coalesce", "-C": "coalesce"}[flag]
        state = getattr(nic, section)
        if state is None:
            return 1, "", "netlink error: Operation not supported"
        if flag in ("-g", "-l"):
            title = "Ring" if flag == "-g" else "Channel"
            names = (("RX", "rx"), ("RX Mini", "rx_mini"), ("RX Jumbo", "rx_jumbo"), ("TX", "tx")) \
                if flag == "-g" else (("RX", "rx"), ("TX", "tx"), ("Other", "other"), ("Combined", "combined"))
            out = ["%s parameters for %s:" % (title, ifname), "Pre-set maximums:"]
            out += ["%s:\t%s" % (label, _fmt(state["max"].get(k))) for label, k in names]
            out.append("Current hardware settings:")
            out += ["%s:\t%s" % (label, _fmt(state["current"].get(k))) for label, k in names]
            return 0, "\n".join(out) + "\n", ""
        if flag == "-c":
            onoff = {True: "on", False: "off", None: "n/a"}
            out = ["Coalesce parameters for %s:" % ifname,
                   "Adaptive RX: %s  TX: %s" % (onoff[state.get("adaptive_rx")], onoff[state.get("adaptive_tx")])]
            out += ["%s: %s" % (k.replace("_", "-"), _fmt(v)) for k, v in sorted(state.items())
                    if not k.startswith("adaptive")]
            return 0, "\n".join(out) + "\n", ""
        # setters: pairs of "name value"
        pairs = list(zip(args[::2], args[1::2]))
        for name, value in pairs:
            key = name.replace("-", "_")
            if section == "coalesce":
                state[key] = value == "on" if key.startswith("adaptive") else int(value)
                continue
            if int(value) > (state["max"].get(key) or 0):
                return 1, "", "netlink error: requested %s exceeds maximum" % name
            state["current"][key] = int(value)
        return 0, "", ""


def mlx5(name: str = "ens1f0np0", **kw: Any) -> FakeNic:
    return FakeNic(name, "mlx5_core", max_mtu=9978,
                   rings={"max": {"rx": 8192, "tx": 8192}, "current": {"rx": 1024, "tx": 1024}},
                   channels={"max": {"other": None, "combined": 63}, "current": {"combined": 63}},
                   coalesce={"adaptive_rx": True, "adaptive_tx": True, "rx_usecs": 8, "tx_usecs": 16,
                             "rx_frames": 128, "tx_frames": 32},
                   mac="b8:ce:f6:00:00:01", **kw)


def veth(name: str = "data0", **kw: Any) -> FakeNic:
    return FakeNic(name, "veth", kind="veth", max_mtu=65535, rings=None,
                   channels={"max": {"rx": 2, "tx": 2}, "current": {"rx": 1, "tx": 1}},
                   coalesce=None, mac="02:00:00:00:00:02", **kw)


@pytest.fixture
def node(tmp_path: Any) -> FakeNode:
    n = FakeNode(str(tmp_path / "root"))
    os.makedirs(n.root)
    return n


class Recorder(object):
    """The runner a Host gets in tool tests: records argv, answers with a canned (rc, stdout, stderr)."""

    def __init__(self, answer: Tuple[int, str, str]) -> None:
        self.answer = answer
        self.calls: List[List[str]] = []

    def __call__(self, argv: List[str]) -> Tuple[int, str, str]:
        self.calls.append(list(argv))
        return self.answer


def host_answering(tmp_path: Any, rc: int, out: str = "", err: str = "",
                   bin_dir: str = "/usr/sbin/") -> Tuple[Host, Recorder]:
    """A Host on ``tmp_path`` whose every command answers ``(rc, out, err)``; tools resolve to
    ``bin_dir + name`` (``""``: the bare name)."""
    rec = Recorder((rc, out, err))
    return Host(root=str(tmp_path), runner=rec, bin_path=lambda name: bin_dir + name), rec
