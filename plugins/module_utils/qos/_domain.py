# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Lossless RoCE: PFC, DSCP trust and map, RoCE ToS/mode (rdma_cm), ECN/DCQCN and CNP.

Journal keys name the tool that reads and writes them, so rollback restores through the same
interface that recorded the original and never guesses a backend:

* ``dcb:IF:pfc`` (list of priorities with PFC on), ``dcb:IF:dscp.26`` (the APP table's
  priorities for DSCP 26: None when absent, an int, or a list when the table holds several),
  ``dcb:IF:trust`` (``dcb apptrust`` order, e.g. ``"dscp"``; only where apptrust exists);
* ``mlnx_qos:IF:pfc``, ``mlnx_qos:IF:trust`` (``dscp``/``pcp``), ``mlnx_qos:IF:dscp.26``;
* ``ecn:IF:roce_np.3`` / ``ecn:IF:roce_rp.3`` (0/1), ``ecn:IF:cnp_dscp``, ``ecn:IF:cnp_802p_prio``
  (mlx5 sysfs ``/sys/class/net/IF/ecn/...``, exposed by NVIDIA's MLNX_OFED driver);
* ``rdmacm:DEV:PORT:tos`` / ``rdmacm:DEV:PORT:mode`` (configfs
  ``/sys/kernel/config/rdma_cm/DEV/ports/PORT/default_roce_tos|default_roce_mode``) and
  ``dir:/sys/kernel/config/rdma_cm/DEV`` when this collection had to create the configfs group.

Trust without ``dcb apptrust`` (iproute2 < 6.3, or a driver without it — mlx5 and ice): those
drivers switch to DSCP trust when the first DSCP APP entry is added and back to PCP when the last
one is deleted (mlx5e_dcbnl_ieee_setapp/delapp), so trust is derived from the table and is not a
key of its own; ``trust: pcp`` then means "delete the DSCP entries".
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _dcb
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _ibtools
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _mlnx_qos
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError, NotSupported
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import ParseError
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Plan

PRIORITIES = range(8)
CONFIGFS = "/sys/kernel/config/rdma_cm"
IB_SYSFS = "/sys/class/infiniband"
ROCE_MODES = {"v1": "IB/RoCE v1", "v2": "RoCE v2"}
RDMA_MTUS = (256, 512, 1024, 2048, 4096)
# mlx5 firmware's dscp2prio table after "trust dscp" (mlnx_qos setDefaultAppEntry: dscp >> 3)
DEFAULT_DSCP2PRIO = dict((d, d >> 3) for d in range(64))
# NVIDIA's RoCE guidance: CNPs on DSCP 48 / priority 6, data on DSCP 26 / priority 3 (tos 106)
NVIDIA_CNP = {"dscp": 48, "priority": 6}


def _split(target: str) -> Tuple[str, str]:
    ifname, field = target.rsplit(":", 1)
    return ifname, field


def _as_list(value: Any) -> List[int]:
    if value is None:
        return []
    if isinstance(value, list):
        return sorted(int(v) for v in value)
    return [int(value)]


def _from_list(prios: List[int]) -> Any:
    """APP-table priorities of one DSCP as a journal value: None, an int, or a sorted list."""
    prios = sorted(set(prios))
    if not prios:
        return None
    return prios[0] if len(prios) == 1 else prios


# ---------------------------------------------------------------------- domains (node I/O)
class _Dcb(object):
    """``dcb:`` keys — iproute2 dcb(8)."""

    @staticmethod
    def read_value(host: Host, target: str) -> Any:
        ifname, field = _split(target)
        if field == "pfc":
            return _dcb.show(host, "pfc", ifname)["enabled"]
        if field == "trust":
            return " ".join(_dcb.show(host, "apptrust", ifname))
        if field.startswith("dscp."):
            return _from_list(_dcb.show(host, "app", ifname)["dscp_prio"].get(int(field[5:]), []))
        raise HostError("unknown dcb setting %r" % target)

    @staticmethod
    def write_value(host: Host, target: str, value: Any) -> None:
        ifname, field = _split(target)
        if field == "pfc":
            wanted = set(_as_list(value))
            _dcb.DCB.call(host, "set_pfc", ifname=ifname,
                          prios=["%d:%s" % (p, "on" if p in wanted else "off") for p in PRIORITIES])
        elif field == "trust":
            _dcb.DCB.call(host, "set_apptrust", ifname=ifname, order=str(value or "").split())
        elif field.startswith("dscp."):
            dscp = int(field[5:])
            wanted = _as_list(value)
            have = _dcb.show(host, "app", ifname)["dscp_prio"].get(dscp, [])
            add = [p for p in wanted if p not in have]
            if add:
                _dcb.DCB.call(host, "add_app", ifname=ifname, pairs=["%d:%d" % (dscp, p) for p in add])
                # drivers that keep one priority per DSCP (mlx5, ice) replace on add: re-read
                have = _dcb.show(host, "app", ifname)["dscp_prio"].get(dscp, [])
            drop = [p for p in have if p not in wanted]
            if drop:
                _dcb.DCB.call(host, "del_app", ifname=ifname, pairs=["%d:%d" % (dscp, p) for p in drop])
        else:
            raise HostError("unknown dcb setting %r" % target)

    @staticmethod
    def same(actual: Any, wanted: Any) -> bool:
        if isinstance(actual, str) or isinstance(wanted, str):
            return " ".join(str(actual or "").split()) == " ".join(str(wanted or "").split())
        return _as_list(actual) == _as_list(wanted)


class _MlnxQos(object):
    """``mlnx_qos:`` keys — NVIDIA mlnx_qos (mlnx-tools)."""

    @staticmethod
    def read_value(host: Host, target: str) -> Any:
        ifname, field = _split(target)
        state = _mlnx_qos.report(host, ifname)
        if field == "pfc":
            return state["pfc"]
        if field == "trust":
            return state["trust"]
        if field.startswith("dscp."):
            return state["dscp2prio"].get(int(field[5:])) if state["trust"] == "dscp" else None
        raise HostError("unknown mlnx_qos setting %r" % target)

    @staticmethod
    def write_value(host: Host, target: str, value: Any) -> None:
        ifname, field = _split(target)
        if field == "pfc":
            wanted = set(_as_list(value))
            _mlnx_qos.MLNX_QOS.call(host, "set_pfc", ifname=ifname,
                                    pfc=",".join("1" if p in wanted else "0" for p in PRIORITIES))
        elif field == "trust":
            if value not in ("dscp", "pcp"):
                raise HostError("mlnx_qos can set trust dscp or pcp, not %r" % value)
            _mlnx_qos.MLNX_QOS.call(host, "set_trust", ifname=ifname, trust=value)
        elif field.startswith("dscp."):
            dscp = int(field[5:])
            if value is not None:
                _mlnx_qos.MLNX_QOS.call(host, "set_dscp2prio", ifname=ifname, op="set", dscp=dscp, prio=int(value))
                return
            current = _MlnxQos.read_value(host, target)
            if current is not None:
                # "del" removes the entry and resets the firmware mapping of that DSCP to 0
                _mlnx_qos.MLNX_QOS.call(host, "set_dscp2prio", ifname=ifname, op="del", dscp=dscp, prio=current)
        else:
            raise HostError("unknown mlnx_qos setting %r" % target)

    @staticmethod
    def same(actual: Any, wanted: Any) -> bool:
        if isinstance(actual, list) or isinstance(wanted, list):
            return _as_list(actual) == _as_list(wanted)
        return actual == wanted


def ecn_path(ifname: str, field: str) -> str:
    base = "/sys/class/net/%s/ecn/" % ifname
    if field in ("cnp_dscp", "cnp_802p_prio"):
        return base + "roce_np/" + field
    role, prio = field.split(".", 1)
    return base + "%s/enable/%s" % (role, prio)


class _Ecn(object):
    """``ecn:`` keys — mlx5 (MLNX_OFED) ECN/DCQCN sysfs."""

    @staticmethod
    def read_value(host: Host, target: str) -> Any:
        ifname, field = _split(target)
        text = host.read(ecn_path(ifname, field))
        if text is None:
            raise HostError("%s does not exist (the driver does not expose ECN settings)" % ecn_path(ifname, field))
        return int(text.strip())

    @staticmethod
    def write_value(host: Host, target: str, value: Any) -> None:
        ifname, field = _split(target)
        host.write_proc(ecn_path(ifname, field), str(int(value)))

    @staticmethod
    def same(actual: Any, wanted: Any) -> bool:
        return actual == wanted


def cm_dir(device: str) -> str:
    return "%s/%s" % (CONFIGFS, device)


def cm_path(device: str, port: int, field: str) -> str:
    return "%s/ports/%d/default_roce_%s" % (cm_dir(device), int(port), field)


class _RdmaCm(object):
    """``rdmacm:DEV:PORT:tos|mode`` — the RDMA CM's per-port defaults in configfs.

    None is "the configfs group did not exist": the kernel's own defaults applied (tos 0 and
    RoCE v2 where the port supports it, cma_add_one).  Writing None restores those defaults while
    the group exists, because the kernel keeps the values after the group is removed; the group
    itself is a ``dir:`` key and is removed after these (rollback runs newest first touch first).
    """

    @staticmethod
    def _parse(target: str) -> Tuple[str, int, str]:
        device, port, field = target.rsplit(":", 2)
        return device, int(port), field

    @staticmethod
    def read_value(host: Host, target: str) -> Any:
        device, port, field = _RdmaCm._parse(target)
        text = host.read(cm_path(device, port, field))
        if text is None:
            return None
        return int(text.strip()) if field == "tos" else text.strip()

    @staticmethod
    def write_value(host: Host, target: str, value: Any) -> None:
        device, port, field = _RdmaCm._parse(target)
        path = cm_path(device, port, field)
        if value is None:
            if not host.exists(path):
                return
            if field == "tos":
                host.write_proc(path, "0")
                return
            try:
                host.write_proc(path, ROCE_MODES["v2"])
            except HostError:
                host.write_proc(path, ROCE_MODES["v1"])
            return
        if not host.exists(path):
            raise HostError("%s does not exist: the rdma_cm configfs group of %s is missing" % (path, device))
        host.write_proc(path, str(value))

    @staticmethod
    def same(actual: Any, wanted: Any) -> bool:
        if actual is None or wanted is None:
            return actual is wanted
        return str(actual).strip() == str(wanted).strip()


DCB = _Dcb()
MLNX_QOS = _MlnxQos()
ECN = _Ecn()
RDMACM = _RdmaCm()

# the domain contract (_domain.Domain): the journal prefixes this file reads and writes
DOMAINS = {"dcb": DCB, "mlnx_qos": MLNX_QOS, "ecn": ECN, "rdmacm": RDMACM}


# ---------------------------------------------------------------------- input validation (pure)
def _int(value: Any, field: str, lo: int, hi: int, what: str) -> int:
    if isinstance(value, bool):
        raise ValueError("%s: %r is not %s; allowed: %d..%d" % (field, value, what, lo, hi))
    try:
        number = int(str(value).strip(), 10)
    except ValueError:
        raise ValueError("%s: %r is not %s; allowed: %d..%d" % (field, value, what, lo, hi))
    if not lo <= number <= hi:
        raise ValueError("%s: %d is not %s; allowed: %d..%d" % (field, number, what, lo, hi))
    return number


def _prio_list(values: Any, field: str) -> List[int]:
    out: List[int] = []
    for v in values:
        p = _int(v, field, 0, 7, "a priority")
        if p in out:
            raise ValueError("%s: priority %d is listed twice" % (field, p))
        out.append(p)
    return sorted(out)


def validate(params: Dict[str, Any]) -> Dict[str, Any]:
    """Check every QoS option before anything is read; returns the normalised desired state."""
    tos = _int(params.get("tos", 106), "tos", 0, 255, "a ToS byte")
    dscp_map: Dict[int, int] = {}
    for key, prio in (params.get("dscp_map") or {}).items():
        dscp = _int(key, "dscp_map", 0, 63, "a DSCP")
        dscp_map[dscp] = _int(prio, "dscp_map.%d" % dscp, 0, 7, "a priority")
    trust = params.get("trust")
    if trust not in (None, "dscp", "pcp"):
        raise ValueError("trust: %r; allowed: dscp, pcp" % trust)
    if trust == "pcp" and dscp_map:
        raise ValueError("trust: pcp with a dscp_map (%s): the NIC ignores DSCP under PCP trust; allowed: "
                         "trust: dscp with a dscp_map, or trust: pcp without one"
                         % ", ".join("%d: %d" % kv for kv in sorted(dscp_map.items())))
    pfc = params.get("pfc")
    mode = params.get("roce_mode") or "v2"
    if mode not in ROCE_MODES:
        raise ValueError("roce_mode: %r; allowed: v1, v2" % mode)
    ecn = params.get("ecn")
    if ecn is not None:
        prios = ecn.get("priorities")
        ecn = {"priorities": None if prios is None else _prio_list(prios, "ecn.priorities"),
               "np": ecn.get("np", True) is not False, "rp": ecn.get("rp", True) is not False}
    cnp = params.get("cnp")
    if cnp is not None:
        cnp = {"dscp": None if cnp.get("dscp") is None else _int(cnp["dscp"], "cnp.dscp", 0, 63, "a DSCP"),
               "priority": None if cnp.get("priority") is None
               else _int(cnp["priority"], "cnp.priority", 0, 7, "a priority")}
    mtu = params.get("rdma_mtu")
    if mtu is not None and mtu not in RDMA_MTUS:
        raise ValueError("rdma_mtu: %r is not an RDMA MTU; allowed: %s" % (mtu, ", ".join(map(str, RDMA_MTUS))))
    return {
        "tos": tos, "dscp": tos >> 2, "trust": trust, "dscp_map": dscp_map,
        "pfc": None if pfc is None else _prio_list(pfc, "pfc"), "roce_mode": mode,
        "ecn": ecn, "cnp": cnp, "rdma_mtu": mtu,
    }


# ---------------------------------------------------------------------- observe (I/O)
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


_EMPTY_GID = re.compile(r"^[0:]+$")


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


# ---------------------------------------------------------------------- coherence and plan (pure)
class Incoherent(ValueError):
    """The state an interface would end with cannot carry lossless RoCE; ``errors`` lists each reason."""

    def __init__(self, errors: List[str]) -> None:
        ValueError.__init__(self, "; ".join(errors))
        self.errors = list(errors)


def effective_map(obs: Dict[str, Any], desired: Dict[str, Any]) -> Tuple[Dict[int, List[int]], Optional[str]]:
    """DSCP -> priorities after the plan, and the trust the interface ends with."""
    trust = desired["trust"] or obs["trust"]
    if obs["backend"] == "mlnx_qos":
        if obs["trust"] == "dscp":
            base = dict(obs["dscp"])
        elif trust == "dscp":
            base = dict((d, [p]) for d, p in DEFAULT_DSCP2PRIO.items())   # what "--trust dscp" loads
        else:
            base = {}
    elif obs["trust_control"] == "implicit" and trust == "pcp":
        base = {}
    else:
        base = dict(obs["dscp"])
    for d, p in desired["dscp_map"].items():
        base[d] = [p]
    if obs["trust_control"] == "implicit":
        trust = "dscp" if base else "pcp"
    elif trust and obs["trust_control"] == "apptrust":
        trust = trust.split()[0] if trust.split() else "none"
    return base, trust


def data_priority(ifname: str, dscp: int, emap: Dict[int, List[int]], obs: Dict[str, Any]) -> Tuple[int, str]:
    """The priority RoCE traffic with ``dscp`` lands in under DSCP trust, and how it got there."""
    prios = emap.get(dscp)
    if prios is None:
        return obs.get("default_prio") or 0, "DSCP %d has no entry in the DSCP map, so the default priority %d applies" \
            % (dscp, obs.get("default_prio") or 0)
    if len(prios) != 1:
        raise Incoherent(["dscp_map: DSCP %d maps to several priorities %s on %s; allowed: one — give "
                          "dscp_map: {%d: N}" % (dscp, prios, ifname, dscp)])
    return prios[0], "DSCP %d maps to priority %d" % (dscp, prios[0])


def check(ifname: str, obs: Dict[str, Any], desired: Dict[str, Any], ecn: Optional[Dict[str, Any]],
          ports: List[Dict[str, Any]], mtu: int, warnings: List[str]) -> Dict[str, Any]:
    """Coherence of the state one interface ends with; ValueError names field, value and what is allowed."""
    errors: List[str] = []
    emap, trust = effective_map(obs, desired)
    pfc = desired["pfc"] if desired["pfc"] is not None else obs["pfc"]
    pfc_src = "pfc" if desired["pfc"] is not None else "PFC currently on %s" % ifname
    tos, dscp = desired["tos"], desired["dscp"]
    prio: Optional[int] = None
    if obs["backend"] == "dcb" and obs["trust_control"] == "implicit" and desired["trust"] == "dscp" and not emap:
        raise Incoherent(["trust: dscp on %s needs DSCP entries: dcb apptrust is not available here (iproute2 "
                          "< 6.3, or driver %s lacks it) and the driver switches to DSCP trust with the first "
                          "DSCP APP entry; allowed: give a dscp_map (e.g. {%d: 3}), or backend: mlnx_qos"
                          % (ifname, obs.get("driver") or "?", dscp)])
    if trust == "dscp":
        prio, how = data_priority(ifname, dscp, emap, obs)
        if prio not in pfc:
            errors.append(_tos_not_lossless(ifname, desired, prio, how, pfc, pfc_src))
        reached = set(p for ps in emap.values() for p in ps)
        if len(emap) < 64:
            reached.add(obs.get("default_prio") or 0)
        for p in pfc:
            if p not in reached:
                errors.append("pfc: priority %d is lossless on %s but no DSCP maps to it (DSCP map: %s); allowed: "
                              "priorities some DSCP maps to — add dscp_map: {D: %d} or drop %d from pfc"
                              % (p, ifname, _render_map(emap), p, p))
    elif trust == "pcp":
        warnings.append("%s trusts PCP: RoCE traffic's priority is its VLAN PCP (the VLAN's egress-qos-map "
                        "applied to the ToS), which roce_qos does not manage; the tos/PFC check is skipped" % ifname)
    cnp = desired["cnp"] or {}
    cnp_prio = cnp.get("priority") if cnp.get("priority") is not None else (ecn or {}).get("cnp_802p_prio")
    cnp_dscp = cnp.get("dscp") if cnp.get("dscp") is not None else (ecn or {}).get("cnp_dscp")
    src = "cnp.priority" if cnp.get("priority") is not None else "the driver's current cnp_802p_prio"
    if prio is not None and cnp_prio is not None and cnp_prio == prio:
        errors.append(_cnp_priority_is_data(ifname, desired, cnp_prio, src, prio))
    if prio is not None and cnp_dscp is not None:
        cprio = (emap.get(cnp_dscp) or [obs.get("default_prio") or 0])[0]
        if cprio == prio:
            errors.append(_cnp_dscp_is_data(ifname, desired, cnp_dscp, cprio))
    ecn_want = desired["ecn"]
    if ecn_want is not None and ecn_want["priorities"] is None and prio is None:
        errors.append(_ecn_priorities_unknown(ifname, trust))
    errors.extend(check_mtu(ifname, mtu, ports, desired["rdma_mtu"]))
    if errors:
        raise Incoherent(errors)
    return {"trust": trust, "pfc": pfc, "priority": prio, "dscp_map": _flat(emap),
            "cnp": {"dscp": cnp_dscp, "priority": cnp_prio}}


def check_input(ifname: str, desired: Dict[str, Any]) -> List[str]:
    """The part of :func:`check` that the input decides alone, whatever the NIC holds: what a NIC
    without DCB is checked against (pure), so a bad combination is refused there too instead of
    becoming an "unsupported" result.  The errors, worded as :func:`check` words them."""
    errors: List[str] = []
    trust, dscp, dmap = desired["trust"], desired["dscp"], desired["dscp_map"]
    prio: Optional[int] = None
    if trust == "dscp" and dscp in dmap:
        prio = dmap[dscp]
        if desired["pfc"] is not None and prio not in desired["pfc"]:
            errors.append(_tos_not_lossless(ifname, desired, prio, "dscp_map: {%d: %d}" % (dscp, prio),
                                            desired["pfc"], "pfc"))
    cnp = desired["cnp"] or {}
    if prio is not None and cnp.get("priority") == prio:
        errors.append(_cnp_priority_is_data(ifname, desired, prio, "cnp.priority", prio))
    if trust == "dscp" and cnp.get("dscp") is not None:
        same_dscp = cnp["dscp"] == dscp   # the data DSCP itself: the same priority on every NIC
        if same_dscp or (prio is not None and dmap.get(cnp["dscp"]) == prio):
            errors.append(_cnp_dscp_is_data(ifname, desired, cnp["dscp"], prio))
    if trust == "pcp" and desired["ecn"] is not None and desired["ecn"]["priorities"] is None:
        errors.append(_ecn_priorities_unknown(ifname, trust))
    return errors


def _tos_not_lossless(ifname: str, desired: Dict[str, Any], prio: int, how: str, pfc: List[int], pfc_src: str) -> str:
    return ("tos: %d (DSCP %d) lands in priority %d on %s (%s), but PFC is on only for %s (%s); allowed: a tos "
            "whose DSCP maps to a PFC priority — add dscp_map: {%d: P} for a P in pfc, or enable PFC on %d"
            % (desired["tos"], desired["dscp"], prio, ifname, how, ", ".join(map(str, pfc)) or "no priority",
               pfc_src, desired["dscp"], prio))


def _cnp_priority_is_data(ifname: str, desired: Dict[str, Any], cnp_prio: int, src: str, prio: int) -> str:
    return ("cnp.priority: %d (%s) on %s is the RoCE data priority (tos %d -> DSCP %d -> priority %d); CNPs must "
            "not queue behind the traffic they slow down; allowed: 0..7 except %d (NVIDIA uses %d)"
            % (cnp_prio, src, ifname, desired["tos"], desired["dscp"], prio, prio, NVIDIA_CNP["priority"]))


def _cnp_dscp_is_data(ifname: str, desired: Dict[str, Any], cnp_dscp: int, cprio: Optional[int]) -> str:
    lands = "the RoCE data priority" if cprio is None else "priority %d, the RoCE data priority" % cprio
    return ("cnp.dscp: %d on %s lands in %s (tos %d -> DSCP %d); allowed: a DSCP that maps to another "
            "priority (NVIDIA uses DSCP %d -> priority %d)"
            % (cnp_dscp, ifname, lands, desired["tos"], desired["dscp"], NVIDIA_CNP["dscp"], NVIDIA_CNP["priority"]))


def _ecn_priorities_unknown(ifname: str, trust: Optional[str]) -> str:
    return ("ecn.priorities: required on %s because its RoCE priority is not known under trust %s; allowed: a "
            "list of priorities 0..7" % (ifname, trust))


def check_mtu(ifname: str, mtu: int, ports: List[Dict[str, Any]], rdma_mtu: Optional[int]) -> List[str]:
    """The netdev MTU against the RDMA path MTU of each of its ports (and ``rdma_mtu``): the errors."""
    errors = []
    for port in ports:
        name = "%s port %d" % (port["device"], port["port"])
        active = port.get("active_mtu")
        if rdma_mtu is not None and active is not None and rdma_mtu > active:
            errors.append("rdma_mtu: %d exceeds the active MTU %d of %s (derived from %s's MTU %d); allowed: "
                          "%d or less, or raise %s's MTU (about 4200 for an RDMA MTU of 4096)"
                          % (rdma_mtu, active, name, ifname, mtu, active, ifname))
        path = rdma_mtu if rdma_mtu is not None else active
        if path is not None and mtu < path:
            errors.append("rdma_mtu: %s has MTU %d, below the RDMA path MTU %d of %s; allowed: a netdev MTU "
                          "of at least the RDMA MTU — raise it with nic_tuning, or lower rdma_mtu"
                          % (ifname, mtu, path, name))
    return errors


def _flat(emap: Dict[int, List[int]]) -> Dict[int, Any]:
    return dict((d, _from_list(ps)) for d, ps in sorted(emap.items()))


def _render_map(emap: Dict[int, List[int]]) -> str:
    if not emap:
        return "empty"
    by_prio: Dict[int, List[int]] = {}
    for d, ps in sorted(emap.items()):
        for p in ps:
            by_prio.setdefault(p, []).append(d)
    return ", ".join("priority %d <- DSCP %s" % (p, ",".join(map(str, ds))) for p, ds in sorted(by_prio.items()))


Wanted = List[Tuple[str, Any]]


def _consider(plan: Plan, previous: Dict[str, Any], wanted: Optional[Wanted], key: str, before: Any,
              after: Any) -> None:
    """Plan one runtime key and record its wanted value in ``wanted`` (plan order) — also when it
    is already at that value, which Plan.add drops: the boot script must re-apply every key."""
    previous[key] = before
    plan.add(key, before, after)
    if wanted is not None:
        wanted.append((key, after))


def plan_nic(ifname: str, obs: Dict[str, Any], desired: Dict[str, Any], ecn: Optional[Dict[str, Any]],
             final: Dict[str, Any], plan: Plan, previous: Dict[str, Any], unsupported: List[Dict[str, str]],
             wanted: Optional[Wanted] = None) -> None:
    """Plan the NIC side of one interface whose driver supports DCB; ``wanted`` collects
    (key, wanted value) of every key considered, in plan order."""
    backend = obs["backend"]
    prefix = "%s:%s:" % (backend, ifname)

    def add(key: str, before: Any, after: Any) -> None:
        _consider(plan, previous, wanted, key, before, after)

    dscp_keys: List[Tuple[str, Any, Any]] = []
    if backend == "mlnx_qos":
        dscp_now = dict((d, ps[0]) for d, ps in obs["dscp"].items()) if obs["trust"] == "dscp" else {}
        for d, p in sorted(desired["dscp_map"].items()):
            dscp_keys.append(("%sdscp.%d" % (prefix, d), dscp_now.get(d), p))
        if desired["trust"] is not None:
            add(prefix + "trust", obs["trust"], desired["trust"])   # first: --trust dscp loads the table
        for k, b, a in dscp_keys:
            add(k, b, a)
    else:
        entries = dict(desired["dscp_map"])
        if obs["trust_control"] == "implicit" and desired["trust"] == "pcp":
            entries = dict((d, None) for d in obs["dscp"])   # PCP trust = no DSCP entries
        for d in sorted(entries):
            add("%sdscp.%d" % (prefix, d), _from_list(obs["dscp"].get(d, [])), entries[d])
    if desired["pfc"] is not None:
        add(prefix + "pfc", obs["pfc"], desired["pfc"])
    if backend == "dcb" and obs["trust_control"] == "apptrust" and desired["trust"] is not None:
        add(prefix + "trust", obs["trust"], desired["trust"])
    _plan_ecn(ifname, desired, ecn, final, plan, previous, unsupported, wanted)


def _plan_ecn(ifname: str, desired: Dict[str, Any], ecn: Optional[Dict[str, Any]], final: Dict[str, Any],
              plan: Plan, previous: Dict[str, Any], unsupported: List[Dict[str, str]],
              wanted: Optional[Wanted] = None) -> None:
    want, cnp = desired["ecn"], desired["cnp"]
    if want is None and cnp is None:
        return
    if ecn is None:
        unsupported.append({"interface": ifname, "feature": "ecn",
                            "reason": "no /sys/class/net/%s/ecn: the driver does not expose ECN/DCQCN or CNP "
                                      "settings (NVIDIA's MLNX_OFED mlx5_core does; the upstream driver keeps "
                                      "the firmware defaults)" % ifname})
        return
    if want is not None:
        prios = want["priorities"] if want["priorities"] is not None else [final["priority"]]
        for role, on in (("roce_np", want["np"]), ("roce_rp", want["rp"])):
            for p in prios:
                key = "ecn:%s:%s.%d" % (ifname, role, p)
                if p not in ecn[role]:
                    raise ValueError("ecn.priorities: %s does not expose %s for priority %d; allowed: %s"
                                     % (ifname, ecn_path(ifname, "%s.%d" % (role, p)), p,
                                        ", ".join(map(str, sorted(ecn[role]))) or "none"))
                _consider(plan, previous, wanted, key, ecn[role][p], 1 if on else 0)
    for field, value in (("cnp_dscp", (cnp or {}).get("dscp")), ("cnp_802p_prio", (cnp or {}).get("priority"))):
        if value is None:
            continue
        if ecn[field] is None:
            raise ValueError("cnp: %s does not expose %s; allowed: leave cnp unset on this driver"
                             % (ifname, ecn_path(ifname, field)))
        _consider(plan, previous, wanted, "ecn:%s:%s" % (ifname, field), ecn[field], value)


def plan_rdma_cm(ports: List[Dict[str, Any]], desired: Dict[str, Any], plan: Plan, previous: Dict[str, Any],
                 unsupported: List[Dict[str, str]], wanted: Optional[Wanted] = None) -> None:
    """Plan the RDMA CM defaults of every port; ``wanted`` gets the ``rdmacm:`` keys (not the
    ``dir:`` key: the boot script creates the configfs group of every device it sets)."""
    mode = ROCE_MODES[desired["roce_mode"]]
    seen = set()
    for port in ports:
        device = port["device"]
        if not port["configfs"]:
            unsupported.append({"interface": port["netdev"], "feature": "rdma_cm",
                                "reason": "%s is missing: mount configfs (mount -t configfs none /sys/kernel/config) "
                                          "and load rdma_cm (modprobe rdma_cm) to set the RoCE ToS and mode of %s"
                                          % (CONFIGFS, device)})
            continue
        if device not in seen:
            seen.add(device)
            key = "dir:" + cm_dir(device)
            previous[key] = bool(port["cm_dir"])   # managed either way (a later release_scope call keeps it)
            if not port["cm_dir"]:
                plan.add(key, False, True)
        for field, value in (("tos", desired["tos"]), ("mode", mode)):
            _consider(plan, previous, wanted, "rdmacm:%s:%d:%s" % (device, port["port"], field), port[field], value)


def app_values(desired: Dict[str, Any], ports: List[Dict[str, Any]], finals: Dict[str, Dict[str, Any]],
               warnings: List[str]) -> Dict[str, Any]:
    """What NCCL, UCX and Open MPI must be told, derived from the same desired state."""
    prios = sorted(set(f["priority"] for f in finals.values() if f.get("priority") is not None))
    gids = sorted(set(p["gid_index"] for p in ports if p.get("gid_index") is not None))
    if len(gids) > 1:
        warnings.append("RDMA ports use different GID indexes %s for %s; NCCL_IB_GID_INDEX is left unset"
                        % (gids, ROCE_MODES[desired["roce_mode"]]))
    return {
        "tos": desired["tos"], "dscp": desired["dscp"], "priority": prios[0] if len(prios) == 1 else None,
        "roce_mode": desired["roce_mode"], "rdma_mtu": desired["rdma_mtu"],
        "hcas": sorted(set("%s:%d" % (p["device"], p["port"]) for p in ports)),
        "netdevs": sorted(set(p["netdev"] for p in ports)) or sorted(finals),
        "gid_index": gids[0] if len(gids) == 1 else None,
    }
