# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What roce_qos reads from the node (I/O through the node layer): the DCB backend of each
interface and its state through it (:func:`observe_nic`, dcb or mlnx_qos), the mlx5 ECN sysfs
(:func:`observe_ecn`) and the RDMA ports on the selected netdevs with their rdma_cm defaults
(:func:`observe_rdma`).
"""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _dcb
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _ibtools
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _mlnx_qos
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError, NotSupported
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import lazy_re, ParseError
from ansible_collections.hpcnet.rdma.plugins.module_utils.qos._domain import CONFIGFS, IB_SYSFS, PRIORITIES, RDMACM, ROCE_MODES, cm_dir

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional, Tuple

BACKEND_TOOLS = {"mlnx_qos": "NVIDIA's mlnx-tools (MLNX_OFED / DOCA-OFED) provides it",
                 "dcb": "iproute2 5.11 or later provides it"}


def choose_backend(host: Host, wanted: str, driver: Optional[str]) -> str:
    """The backend of one interface; an explicit ``backend`` whose tool is missing is an error that
    names the option (``auto`` falls back to dcb, which names the missing dcb tool when it runs)."""
    if wanted != "auto":
        if host.which(wanted) is None:
            others = " or ".join(b for b in ("auto", "dcb", "mlnx_qos") if b != wanted)
            raise HostError("backend: %s, but the %s command is not on the node (%s); allowed: install it, or "
                            "backend %s" % (wanted, wanted, BACKEND_TOOLS[wanted], others))
        return wanted
    return "mlnx_qos" if driver == "mlx5_core" and host.which("mlnx_qos") else "dcb"


def observe_nic(host: Host, ifname: str, backend: str) -> Dict[str, Any]:
    """DCB state of one interface through its backend, normalised; ``supported`` False with the
    tool's message when the driver has no DCB (every emulated NIC: virtio-net, e1000e, veth)."""
    out: Dict[str, Any] = {"backend": backend, "supported": True, "reason": None, "pfc": [], "trust": None,
                           "trust_control": None, "apptrust": None, "dscp": {}, "default_prio": 0,
                           "ets": None, "buffer": None}
    if backend == "mlnx_qos":
        try:
            state = _mlnx_qos.report(host, ifname)
        except NotSupported as e:
            out.update(supported=False, reason=str(e))
            return out
        except ParseError as e:
            out.update(supported=False, reason=_unreadable(e))
            return out
        out.update(pfc=state["pfc"], trust=state["trust"], trust_control="mlnx_qos",
                   dscp=dict((d, [p]) for d, p in state["dscp2prio"].items()) if state["trust"] == "dscp" else {},
                   ets=_mlnx_ets(state), buffer=_mlnx_buffer(state))
        return out
    if host.which("dcb") is None:
        host.bin("dcb")   # raises with the install hint
    try:
        out["pfc"] = _dcb.show(host, "pfc", ifname)["enabled"]
        app = _dcb.show(host, "app", ifname)
    except NotSupported as e:
        out.update(supported=False, reason=str(e))
        return out
    except ParseError as e:
        out.update(supported=False, reason=_unreadable(e))
        return out
    out["dscp"] = app["dscp_prio"]
    out["default_prio"] = app["default_prio"][0] if app["default_prio"] else 0
    try:
        out["apptrust"] = _dcb.show(host, "apptrust", ifname)
    except (HostError, ParseError):
        out["apptrust"] = None
    for obj in ("ets", "buffer"):
        try:
            out[obj] = _dcb.show(host, obj, ifname)
        except NotSupported as e:
            out[obj] = {"readable": False, "reason": str(e)}
        except (HostError, ParseError) as e:
            out[obj] = {"readable": False, "reason": _unreadable(e)}
    if out["apptrust"] is not None:
        out["trust_control"] = "apptrust"
        out["trust"] = " ".join(out["apptrust"])
    else:
        out["trust_control"] = "implicit"
        out["trust"] = "dscp" if out["dscp"] else "pcp"
    return out


def _unreadable(error: Exception) -> str:
    """The reason of a DCB part whose tool output could not be read: reported, never a crash."""
    return "unreadable: %s" % error


def _mlnx_ets(state: Dict[str, Any]) -> Dict[str, Any]:
    """ETS of an mlnx_qos report in the shape of ``dcb ets`` (prio_tc, tc_tsa, tc_bw; None where not printed)."""
    tcs = state.get("tc") or {}
    prio_tc = state.get("prio_tc") or {}
    return {"prio_tc": [prio_tc.get(p) for p in PRIORITIES],
            "tc_tsa": [tcs[t]["tsa"] if t in tcs else None for t in PRIORITIES],
            "tc_bw": [tcs[t].get("bw") if t in tcs else None for t in PRIORITIES]}


def _mlnx_buffer(state: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """Receive buffers of an mlnx_qos report in the shape of ``dcb buffer``; None when it printed none."""
    sizes = state.get("receive_buffer_size")
    if sizes is None and state.get("pfc_buffer") is None:
        return None
    total = state.get("buffer_total")
    return {"prio_buffer": state.get("pfc_buffer"), "buffer_size": sizes,
            "total_size": total["bytes"] if total else None}


def observe_ecn(host: Host, ifname: str) -> Optional[Dict[str, Any]]:
    base = "/sys/class/net/%s/ecn" % ifname
    if not host.isdir(base + "/roce_np/enable") and not host.isdir(base + "/roce_rp/enable"):
        return None
    out: Dict[str, Any] = {"roce_np": {}, "roce_rp": {}, "cnp_dscp": None, "cnp_802p_prio": None}
    for role in ("roce_np", "roce_rp"):
        for name in host.listdir("%s/%s/enable" % (base, role)):
            if name.isdigit():
                text = host.read("%s/%s/enable/%s" % (base, role, name))
                out[role][int(name)] = None if text is None else int(text.strip())
    for field in ("cnp_dscp", "cnp_802p_prio"):
        text = host.read("%s/roce_np/%s" % (base, field))
        out[field] = None if text is None else int(text.strip())
    return out


def _safe_read(host: Host, path: str) -> Optional[str]:
    try:
        text = host.read(path)
    except HostError:
        return None   # sysfs answers EINVAL for empty GID entries and for ndevs of IB ports
    return None if text is None else text.strip()


_EMPTY_GID = lazy_re(r"^[0:]+$")


def _gid_index(host: Host, port_dir: str, mode: str) -> Optional[int]:
    """The GID index apps should use: the RoCE GID of the wanted type carrying an IPv4-mapped
    address (NCCL's default address family), else one with a global address, else the first."""
    wanted = ROCE_MODES[mode]
    ranked: List[Tuple[int, int]] = []
    for name in host.listdir(port_dir + "/gids"):
        if not name.isdigit():
            continue
        gid = _safe_read(host, "%s/gids/%s" % (port_dir, name))
        if not gid or _EMPTY_GID.match(gid):
            continue
        if _safe_read(host, "%s/gid_attrs/types/%s" % (port_dir, name)) != wanted:
            continue
        rank = 0 if gid.startswith("0000:0000:0000:0000:0000:ffff:") else 2 if gid.startswith("fe80:") else 1
        ranked.append((rank, int(name)))
    return min(ranked)[1] if ranked else None


def observe_rdma(host: Host, netdevs: List[str], mode: str) -> List[Dict[str, Any]]:
    """RDMA ports whose default GID (gid_attrs/ndevs/0) belongs to one of ``netdevs``."""
    ports: List[Dict[str, Any]] = []
    devinfo: Dict[str, Any] = {}
    for device in host.listdir(IB_SYSFS):
        for port in host.listdir("%s/%s/ports" % (IB_SYSFS, device)):
            if not port.isdigit():
                continue
            port_dir = "%s/%s/ports/%s" % (IB_SYSFS, device, port)
            ndev = _safe_read(host, port_dir + "/gid_attrs/ndevs/0")
            if ndev not in netdevs:
                continue
            if device not in devinfo:
                devinfo[device] = _ibtools.devinfo(host, device)
            info = ((devinfo[device] or {}).get("ports") or {}).get(int(port)) or {}
            cm = cm_dir(device)
            ports.append({
                "device": device, "port": int(port), "netdev": ndev,
                "link_layer": _safe_read(host, port_dir + "/link_layer"),
                "state": (_safe_read(host, port_dir + "/state") or "").split(":")[-1].strip() or None,
                "active_mtu": info.get("active_mtu"), "max_mtu": info.get("max_mtu"),
                "gid_index": _gid_index(host, port_dir, mode),
                "configfs": host.isdir(CONFIGFS), "cm_dir": host.isdir(cm),
                "tos": RDMACM.read_value(host, "%s:%s:tos" % (device, port)),
                "mode": RDMACM.read_value(host, "%s:%s:mode" % (device, port)),
            })
    return ports
