# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""SIMULATION for unit tests only: a fake node whose NICs answer ``dcb``, ``mlnx_qos`` and
``ibv_devinfo`` the way the tools document it, plus a kernel stand-in for rdma_cm configfs.

No lab can emulate DCB (every emulated NIC answers "Operation not supported"), so the apply path
of the QoS backends is exercised against this stand-in.  What it mimics, and from where:

* ``dcb -j pfc|app|apptrust show`` / ``pfc set`` / ``app add|del`` / ``apptrust set``: iproute2's
  dcb/dcb_pfc.c, dcb_app.c, dcb_apptrust.c (JSON keys, the error lines "Attribute read: ...");
  an iproute2 without apptrust answers 'Object "apptrust" is unknown' (captured on iproute2 6.1).
* ``mlnx_qos -i IF [--trust|--pfc|--dscp2prio]``: NVIDIA mlnx-tools python/mlnx_qos (the report
  printed after every call, "trust and dscp2prio commands cannot be used at the same time").
* the driver behind them, ``mlx5`` semantics from mlx5e_dcbnl_ieee_setapp/delapp: one priority per
  DSCP, the first DSCP entry switches trust to dscp, deleting the last switches back to pcp, a
  delete resets the firmware mapping to 0 and fails (ENOENT) unless it names the current priority;
  ``ieee`` semantics: the generic IEEE APP table (several priorities per DSCP allowed).
* rdma_cm configfs: ``mkdir /sys/kernel/config/rdma_cm/DEV`` makes ``ports/N/default_roce_tos|mode``;
  the kernel keeps the values in its cma_device after ``rmdir`` (cma_configfs.c), so a later mkdir
  shows them again.  Bad values are refused with EINVAL like the kernel does.

The Molecule/VM scenarios run the real tools on a real kernel; this file never ships.
"""
from __future__ import annotations

import json
import os
import shutil
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host

from .conftest import FakeNode

CONFIGFS = "/sys/kernel/config/rdma_cm"


class FakeQos(object):
    """DCB state of one simulated NIC (driver side)."""

    def __init__(self, semantics: str = "mlx5", supported: bool = True, trust: str = "pcp",
                 pfc: Tuple[int, ...] = (), apptrust: Optional[List[str]] = None,
                 dscp: Optional[Dict[int, List[int]]] = None, default_prio: Optional[List[int]] = None) -> None:
        self.semantics = semantics
        self.supported = supported
        self.pfc = set(pfc)
        self.apptrust = apptrust          # None: the driver has no dcbnl apptrust ops
        self.default_prio = list(default_prio or [])
        self.fw = [0] * 64                 # mlx5 firmware dscp2prio
        self.apps: Dict[int, List[int]] = {}
        self.trust = "pcp"
        if semantics == "mlx5" and trust == "dscp":   # driver loaded in DSCP trust: all 64 entries
            for d in range(64):
                self.setapp(d, d >> 3)
        for d, ps in (dscp or {}).items():
            for p in ps:
                self.setapp(d, p)

    def state(self) -> Any:
        return [sorted(self.pfc), self.apptrust, self.default_prio, self.fw, sorted(self.apps.items()), self.trust]

    # kernel dcbnl handlers; a string return is the errno text
    def setapp(self, d: int, p: int) -> Optional[str]:
        if self.semantics == "mlx5":
            if not self.apps:
                self.trust = "dscp"
            self.fw[d] = p
            self.apps[d] = [p]
            return None
        if p in self.apps.get(d, []):
            return "File exists"
        self.apps.setdefault(d, []).append(p)
        self.apps[d].sort()
        return None

    def delapp(self, d: int, p: int) -> Optional[str]:
        if self.semantics == "mlx5":
            if not self.apps or d not in self.apps or self.fw[d] != p:
                return "No such file or directory"
            del self.apps[d]
            self.fw[d] = 0
            if not self.apps:
                self.trust = "pcp"
            return None
        if p not in self.apps.get(d, []):
            return "No such file or directory"
        self.apps[d].remove(p)
        if not self.apps[d]:
            del self.apps[d]
        return None


class FakeRdma(object):
    def __init__(self, device: str, netdev: str, port: int = 1, active_mtu: int = 1024,
                 modes: Tuple[str, ...] = ("RoCE v2",), gids: Optional[List[Tuple[int, str, str]]] = None) -> None:
        self.device, self.netdev, self.port, self.active_mtu, self.modes = device, netdev, port, active_mtu, modes
        self.gids = gids if gids is not None else [
            (0, "fe80:0000:0000:0000:5054:00ff:fe12:3401", "RoCE v2"),
            (1, "0000:0000:0000:0000:0000:ffff:0a4d:0001", "RoCE v2"),
        ]


class SimHost(Host):
    """Host whose configfs writes behave like the kernel's rdma_cm configfs (see module docstring)."""

    def __init__(self, node: "QosNode") -> None:
        Host.__init__(self, root=node.root, runner=node.run, bin_path=node.bin_path, environ=node.environ)
        self.node = node

    def _group(self, path: str) -> Optional[str]:
        if path.startswith(CONFIGFS + "/") and "/" not in path[len(CONFIGFS) + 1:]:
            return path[len(CONFIGFS) + 1:]
        return None

    def mkdir(self, path: str) -> None:
        device = self._group(path)
        if device is not None and device not in self.node.rdma:
            raise HostError("cannot create directory %s: No such device (simulated)" % path)
        Host.mkdir(self, path)
        if device is not None:
            dev = self.node.rdma[device]
            kept = self.node.cm_kernel.setdefault(device, {"tos": "0", "mode": "RoCE v2"})
            self.node.write("%s/ports/%d/default_roce_tos" % (path, dev.port), kept["tos"] + "\n")
            self.node.write("%s/ports/%d/default_roce_mode" % (path, dev.port), kept["mode"] + "\n")

    def rmdir(self, path: str) -> None:
        device = self._group(path)
        if device is None:
            Host.rmdir(self, path)
            return
        dev = self.node.rdma[device]
        base = "%s/ports/%d/default_roce_" % (path, dev.port)
        tos, mode = self.node.read(base + "tos"), self.node.read(base + "mode")
        if tos is not None:
            self.node.cm_kernel[device] = {"tos": tos.strip(), "mode": mode.strip()}
        shutil.rmtree(self.p(path), ignore_errors=True)

    def write_proc(self, path: str, value: str) -> None:
        if path.startswith(CONFIGFS + "/"):
            device = path[len(CONFIGFS) + 1:].split("/", 1)[0]
            dev = self.node.rdma[device]
            if path.endswith("default_roce_mode") and value not in dev.modes:
                raise HostError("cannot write %r to %s: Invalid argument" % (value, path))
            if path.endswith("default_roce_tos") and not (value.isdigit() and int(value) <= 255):
                raise HostError("cannot write %r to %s: Invalid argument" % (value, path))
        Host.write_proc(self, path, value)


class QosNode(FakeNode):
    """FakeNode plus simulated DCB tools, RDMA devices and configfs (a SIMULATION, see above)."""

    def __init__(self, root: str) -> None:
        FakeNode.__init__(self, root)
        self.qos: Dict[str, FakeQos] = {}
        self.rdma: Dict[str, FakeRdma] = {}
        self.cm_kernel: Dict[str, Dict[str, str]] = {}
        self.missing: set = set()          # commands not installed
        self.dcb_apptrust = False          # iproute2 >= 6.3 (has the apptrust object)

    def bin_path(self, name: str) -> Optional[str]:
        return None if name in self.missing else "/usr/sbin/" + name

    def host(self) -> Host:
        return SimHost(self)

    def add_qos(self, ifname: str, qos: FakeQos, ecn: bool = False, ecn_on: int = 1,
                cnp: Tuple[int, int] = (48, 6)) -> FakeQos:
        self.qos[ifname] = qos
        if ecn:
            for role in ("roce_np", "roce_rp"):
                for p in range(8):
                    self.write("/sys/class/net/%s/ecn/%s/enable/%d" % (ifname, role, p), "%d\n" % ecn_on)
            self.write("/sys/class/net/%s/ecn/roce_np/cnp_dscp" % ifname, "%d\n" % cnp[0])
            self.write("/sys/class/net/%s/ecn/roce_np/cnp_802p_prio" % ifname, "%d\n" % cnp[1])
        return qos

    def add_rdma(self, dev: FakeRdma, configfs: bool = True) -> FakeRdma:
        self.rdma[dev.device] = dev
        base = "/sys/class/infiniband/%s/ports/%d" % (dev.device, dev.port)
        self.write(base + "/link_layer", "Ethernet\n")
        self.write(base + "/state", "4: ACTIVE\n")
        self.write(base + "/gid_attrs/ndevs/0", dev.netdev + "\n")
        for idx, gid, kind in dev.gids:
            self.write("%s/gids/%d" % (base, idx), gid + "\n")
            self.write("%s/gid_attrs/types/%d" % (base, idx), kind + "\n")
            self.write("%s/gid_attrs/ndevs/%d" % (base, idx), dev.netdev + "\n")
        self.write("%s/gids/%d" % (base, 9), "0000:0000:0000:0000:0000:0000:0000:0000\n")   # an empty slot
        if configfs:
            os.makedirs(self.path(CONFIGFS), exist_ok=True)
        return dev

    def snapshot(self) -> Dict[str, Any]:
        snap = FakeNode.snapshot(self)
        sys_root = self.path("/sys") + "/"
        for path, value in list(snap["files"].items()):
            if path.startswith(sys_root) and isinstance(value, tuple):
                # sysfs/configfs: the kernel renders the value, its whitespace is not state
                snap["files"][path] = (b" ".join(value[0].split()), value[1])
        snap["qos"] = dict((n, json.dumps(q.state(), sort_keys=True)) for n, q in self.qos.items())
        snap["cm_kernel"] = json.dumps(self.cm_kernel, sort_keys=True)
        return snap

    def setters(self) -> List[List[str]]:
        """Every command that could change DCB state."""
        return [c for c in self.calls if (c[0] == "dcb" and c[1] != "-j") or (c[0] == "mlnx_qos" and len(c) > 3)]

    # ------------------------------------------------------------------ command simulation
    def run(self, argv: List[str]) -> Tuple[int, str, str]:
        name = os.path.basename(argv[0])
        if name not in ("dcb", "mlnx_qos", "ibv_devinfo"):
            return FakeNode.run(self, argv)
        argv = [name] + list(argv[1:])
        self.calls.append(argv)
        if self.fail_on and self.fail_on in " ".join(argv):
            return 1, "", "Attribute write: Invalid argument (simulated)"
        if name == "dcb":
            return self._dcb(argv[1:])
        if name == "mlnx_qos":
            return self._mlnx_qos(argv[1:])
        return self._ibv_devinfo(argv[1:])

    def _dcb(self, args: List[str]) -> Tuple[int, str, str]:
        as_json = args[:1] == ["-j"]
        if as_json:
            args = args[1:]
        obj, cmd, ifname, rest = args[0], args[1], args[3], args[4:]
        out = "\n" if as_json else ""
        if obj == "apptrust" and not self.dcb_apptrust:
            return 1, out, 'Object "apptrust" is unknown\n'
        if ifname not in self.nics:
            return 1, out, "Attribute read: No such device\n"
        q = self.qos.get(ifname)
        writes = cmd in ("add", "del") or (obj == "apptrust" and cmd == "set")
        if q is None or not q.supported:
            return 1, out, "Attribute %s: Operation not supported\n" % ("write" if writes else "read")
        if obj == "pfc" and cmd == "show":
            return 0, json.dumps({"pfc_cap": 8, "macsec_bypass": False, "delay": 7,
                                  "prio_pfc": [p in q.pfc for p in range(8)]}, separators=(",", ":")) + "\n", ""
        if obj == "pfc" and cmd == "set":
            assert rest[0] == "prio-pfc"
            for item in rest[1:]:
                p, state = item.split(":")
                (q.pfc.add if state == "on" else q.pfc.discard)(int(p))
            return 0, "", ""
        if obj == "app" and cmd == "show":
            data: Dict[str, Any] = {}
            if q.default_prio:
                data["default_prio"] = q.default_prio
            pairs = [[d, p] for d in sorted(q.apps) for p in q.apps[d]]
            if pairs:
                data["dscp_prio"] = pairs
            return 0, json.dumps(data, separators=(",", ":")) + "\n", ""
        if obj == "app" and cmd in ("add", "del"):
            assert rest[0] == "dscp-prio"
            for item in rest[1:]:
                d, p = (int(x) for x in item.split(":"))
                err = (q.setapp if cmd == "add" else q.delapp)(d, p)
                if err:
                    return 1, "", "Attribute write: %s\n" % err
            return 0, "", ""
        if obj == "apptrust":
            if q.apptrust is None:
                return 1, out, "Attribute not found: Operation not supported (simulated)\n"
            if cmd == "show":
                return 0, json.dumps({"order": q.apptrust}) + "\n", ""
            q.apptrust = rest[1:]
            return 0, "", ""
        return 1, "", "fake dcb: unexpected %r" % args

    def _mlnx_qos(self, args: List[str]) -> Tuple[int, str, str]:
        ifname = args[1]
        q = self.qos.get(ifname)
        if q is None or not q.supported or q.semantics != "mlx5":
            return 1, "", "Traceback (most recent call last):\nOSError: [Errno 95] Operation not supported (simulated)\n"
        opts = dict(zip(args[2::2], args[3::2]))
        if "--trust" in opts and "--dscp2prio" in opts:
            return 1, "trust and dscp2prio commands cannot be used at the same time.\n", ""
        if "--pfc" in opts:
            bits = [int(b) for b in opts["--pfc"].split(",")]
            if len(bits) != 8:
                return 1, "pfc list must have 8 items\n", ""
            q.pfc = set(i for i, b in enumerate(bits) if b)
        if "--dscp2prio" in opts:
            action, d, p = opts["--dscp2prio"].split(",")
            err = (q.setapp if action == "set" else q.delapp)(int(d), int(p))
            if err:
                return 1, "dscp2prio command failed\n", ""
        if "--trust" in opts:
            if opts["--trust"] == "dscp" and q.trust != "dscp":
                for d in range(64):
                    q.setapp(d, d >> 3)
            elif opts["--trust"] == "pcp":
                for d in sorted(q.apps):
                    q.delapp(d, q.apps[d][0])
        return 0, self._mlnx_report(q), ""

    @staticmethod
    def _mlnx_report(q: FakeQos) -> str:
        lines = ["DCBX mode: OS controlled", "Priority trust state: %s" % q.trust]
        if q.trust == "dscp":
            lines.append("dscp2prio mapping:")
            s = [""] * 8
            for d in sorted(q.apps, reverse=True):
                s[q.apps[d][0]] += "%02d," % d
            for i in range(8):
                text, pad, block = s[i], "\tprio:%d dscp:" % i, ""
                while len(text) > 24:
                    block += pad + text[:24] + "\n"
                    text = text[24:]
                if text:
                    block += pad + text
                if block:
                    lines.append(block)
        lines += ["default priority:", "Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,total_size=1027008",
                  "Cable len: 7", "PFC configuration:", "\tpriority    0   1   2   3   4   5   6   7",
                  "\tenabled     " + "".join("%d   " % (p in q.pfc) for p in range(8)),
                  "tc: 0 ratelimit: unlimited, tsa: vendor", "\t priority:  0"]
        return "\n".join(lines) + "\n"

    def _ibv_devinfo(self, args: List[str]) -> Tuple[int, str, str]:
        if args == ["-v"]:   # every device (what fabric_info runs), the same fields as -d prints
            blocks = [self._ibv_devinfo(["-d", name])[1] for name in sorted(self.rdma)]
            return 0, "".join(blocks), ""
        dev = self.rdma.get(args[1])
        if dev is None:
            return 255, "", "Failed to get IB devices list: Unknown error -38 (simulated)\n"
        enum = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
        return 0, ("hca_id:\t%s\n\ttransport:\t\t\tInfiniBand (0)\n\tfw_ver:\t\t\t\t0.0.0\n"
                   "\tphys_port_cnt:\t\t\t1\n\t\tport:\t%d\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n"
                   "\t\t\tmax_mtu:\t\t4096 (5)\n\t\t\tactive_mtu:\t\t%d (%d)\n\t\t\tlink_layer:\t\tEthernet\n\n"
                   % (dev.device, dev.port, dev.active_mtu, enum[dev.active_mtu])), ""
