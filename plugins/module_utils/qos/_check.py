# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""roce_qos's checks (pure): the options (:func:`validate`, before anything is read), and whether
the state each interface ends with carries lossless RoCE (:func:`check`, :func:`check_input`,
:func:`check_mtu`; an :class:`Incoherent` names every reason), and what applications are told
(:func:`app_values`).
"""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.qos._domain import ROCE_MODES, _from_list

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional, Tuple

RDMA_MTUS = (256, 512, 1024, 2048, 4096)
# mlx5 firmware's dscp2prio table after "trust dscp" (mlnx_qos setDefaultAppEntry: dscp >> 3)
DEFAULT_DSCP2PRIO = dict((d, d >> 3) for d in range(64))
# NVIDIA's RoCE guidance: CNPs on DSCP 48 / priority 6, data on DSCP 26 / priority 3 (tos 106)
NVIDIA_CNP = {"dscp": 48, "priority": 6}


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


# ---------------------------------------------------------------------- coherence (pure)
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
