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

This file is what rollback needs (the four domains and their ``DOMAINS`` map, the key helpers the
boot script shares).  The rest of the concern: input and coherence checks (``_check``), reading the
node (``_observe``), the keys one interface and one RDMA port get (``_keys``), and roce_qos's
planner (``_plan``), boot script (``_boot``) and report (``_info``).
"""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, List, Tuple

PRIORITIES = range(8)
CONFIGFS = "/sys/kernel/config/rdma_cm"
IB_SYSFS = "/sys/class/infiniband"
ROCE_MODES = {"v1": "IB/RoCE v1", "v2": "RoCE v2"}


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
        from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _dcb   # here: only dcb: keys need it
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
        from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _dcb   # here: only dcb: keys need it
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
        from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _mlnx_qos   # here: only mlnx_qos: keys need it
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
        from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _mlnx_qos   # here: only mlnx_qos: keys need it
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
