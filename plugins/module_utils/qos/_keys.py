# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The runtime keys roce_qos plans (pure): the DCB and ECN keys of one interface through its backend
(:func:`plan_nic`) and the rdma_cm defaults of each RDMA port (:func:`plan_rdma_cm`), each also
recorded with its wanted value for the boot script (``Wanted``).
"""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Plan
from ansible_collections.hpcnet.rdma.plugins.module_utils.qos._domain import CONFIGFS, ROCE_MODES, _from_list, cm_dir, ecn_path

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional, Tuple
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
