# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Plan roce_qos: what the module wires between its parameters and the engine.

``_qos.validate`` (pure) → :func:`observe` (reads the node) → :func:`plan` (pure: coherence of
every interface first, then the live keys of _qos and the boot files of _qosboot) → the engine.
"""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _domain as _nic
from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _select
from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _check as _qoscheck
from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _observe as _qosobserve
from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _keys as _qoskeys
from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _boot as _qosboot
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Plan

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List

BOOT_TOOLS = ("dcb", "mlnx_qos", "modprobe")


# ---------------------------------------------------------------------- observe (I/O)
def observe(host: Host, selections: List[Dict[str, Any]], backend: str, roce_mode: str, mode: str) -> Dict[str, Any]:
    """Everything :func:`plan` needs: the selected links, each one's DCB/ECN state and RDMA ports,
    the state of the boot files ``mode`` plans and where the boot script's tools are.

    In mode persist (a bake) a ``name`` or ``driver`` selection that matches no interface here is
    ``deferred``: found, and inspected, by the boot script."""
    links = _nic.observe(host)
    absent: Dict[str, Dict[str, Any]] = {}
    chosen = _select.select(selections, links, None, absent if mode == "persist" else None)
    ports = _qosobserve.observe_rdma(host, sorted(chosen), roce_mode)
    nics = {}
    for ifname in sorted(chosen):
        driver = links[ifname].get("driver")
        obs = _qosobserve.observe_nic(host, ifname, _qosobserve.choose_backend(host, backend, driver))
        obs["driver"] = driver
        nics[ifname] = {"obs": obs, "mtu": links[ifname]["mtu"], "selected_by": chosen[ifname]["selected_by"],
                        "ecn": _qosobserve.observe_ecn(host, ifname) if obs["supported"] else None,
                        "ports": [p for p in ports if p["netdev"] == ifname]}
    return {"nics": nics, "ports": ports, "backend": backend,
            "deferred": [(a["selector"], a["value"]) for _label, a in sorted(absent.items(), key=lambda x: x[1]["index"])],
            "files": dict((path, host.file_state(path)) for path in _qosboot.planned_paths(mode)),
            "bins": dict((name, host.which(name) or name) for name in BOOT_TOOLS)}


# ---------------------------------------------------------------------- plan (pure)
def plan(desired: Dict[str, Any], seen: Dict[str, Any], on_unsupported: str, mode: str) -> Dict[str, Any]:
    """Coherence checks on every interface, then the plan; ValueError before any change.

    ``mode`` runtime/both plans the live keys; persist/both the boot files rendered from the wanted
    value of every live key considered (``seen["files"]``: path → current state of each planned
    file, ``seen["bins"]``: tool → absolute path on the node, for the boot script)."""
    warnings: List[str] = []
    unsupported: List[Dict[str, str]] = []
    errors: List[str] = []
    finals: Dict[str, Dict[str, Any]] = {}
    interfaces: Dict[str, Dict[str, Any]] = {}
    for ifname, nic in sorted(seen["nics"].items()):
        obs = nic["obs"]
        info = {"driver": obs.get("driver"), "backend": obs["backend"], "dcb": obs["supported"],
                "selected_by": nic["selected_by"]}
        interfaces[ifname] = info
        if not obs["supported"]:
            # no DCB to read: what the input decides alone is still checked, so a bad combination
            # is refused here too rather than reported as unsupported
            unsupported.append({"interface": ifname, "feature": "dcb", "reason": obs["reason"]})
            errors.extend(_qoscheck.check_input(ifname, desired))
            errors.extend(_qoscheck.check_mtu(ifname, nic["mtu"], nic["ports"], desired["rdma_mtu"]))
            continue
        try:
            finals[ifname] = _qoscheck.check(ifname, obs, desired, nic["ecn"], nic["ports"], nic["mtu"], warnings)
        except ValueError as e:
            errors.append(str(e))
            continue
        info.update(finals[ifname], trust_control=obs["trust_control"])
    deferred = seen.get("deferred") or []
    for kind, value in deferred:
        errors.extend(_qoscheck.check_input("%s=%s" % (kind, value), desired))
    if deferred and desired["ecn"] is not None:
        try:
            _qosboot.ecn_priorities(desired)
        except ValueError as e:
            errors.append(str(e))
    if errors:
        raise ValueError("; ".join(errors))
    live = Plan()
    live_previous: Dict[str, Any] = {}
    wanted: _qoskeys.Wanted = []
    for ifname in sorted(finals):
        nic = seen["nics"][ifname]
        _qoskeys.plan_nic(ifname, nic["obs"], desired, nic["ecn"], finals[ifname], live, live_previous, unsupported,
                          wanted)
    _qoskeys.plan_rdma_cm(seen["ports"], desired, live, live_previous, unsupported, wanted)
    if mode in ("runtime", "both"):
        p, previous = live, live_previous
    else:
        p, previous = Plan(), {}
    if mode in ("persist", "both"):
        lines = _qosboot.deferred_lines(deferred, desired, seen.get("backend", "auto"), on_unsupported, seen["bins"])
        _qosboot.plan_files(wanted, seen["bins"], seen["files"], p, previous, lines)
        warnings.extend("%s=%s is not present here: its QoS is applied at boot by %s, which finds it and decides "
                        "its backend, DCB support, ECN and RDMA ports then" % (kind, value, _qosboot.UNIT_FILE)
                        for kind, value in deferred)
    if unsupported and on_unsupported == "fail":
        raise ValueError("not supported here: %s; set on_unsupported: warn to apply the rest and report these"
                         % "; ".join("%s %s (%s)" % (u["interface"], u["feature"], u["reason"]) for u in unsupported))
    app = _qoscheck.app_values(desired, seen["ports"], finals, warnings)
    if not seen["ports"]:
        app["netdevs"] = sorted(set(seen["nics"]) | set(v for k, v in deferred if k == "name"))
    return {"plan": p, "previous": previous, "warnings": warnings, "unsupported": unsupported,
            "interfaces": interfaces, "app": app, "rdma_ports": seen["ports"]}


def returned(planned: Dict[str, Any]) -> Dict[str, Any]:
    """What the module returns besides the engine's changes, previous and current."""
    return dict((k, planned[k]) for k in ("interfaces", "unsupported", "rdma_ports", "app"))


def notes(planned: Dict[str, Any]) -> List[str]:
    """The warnings to show: incoherences that are allowed, then each unsupported feature."""
    return planned["warnings"] + ["%s: %s not supported here: %s" % (u["interface"], u["feature"], u["reason"])
                                  for u in planned["unsupported"]]
