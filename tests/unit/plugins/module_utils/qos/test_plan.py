# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_qosplan.plan, pure, as tables: what was observed + what is wanted -> the plan roce_qos applies."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _check as _qoscheck
from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _boot as _qosboot
from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _plan as _qosplan

BOOT = ["file:" + _qosboot.SCRIPT, "file:" + _qosboot.UNIT_FILE, "file:" + _qosboot.UNIT_LINK]
BINS = {"dcb": "/usr/sbin/dcb", "mlnx_qos": "mlnx_qos", "modprobe": "/usr/sbin/modprobe"}


def obs(backend: str = "dcb", trust: str = "pcp", control: str = "implicit", pfc: Any = (),
        dscp: Optional[Dict[int, List[int]]] = None, supported: bool = True) -> Dict[str, Any]:
    return {"backend": backend, "supported": supported, "reason": None if supported else "driver lacks dcbnl",
            "pfc": list(pfc), "trust": trust, "trust_control": control, "apptrust": None, "dscp": dict(dscp or {}),
            "default_prio": 0, "driver": "mlx5_core"}


def port(netdev: str = "eth9", device: str = "mlx5_0", tos: Optional[int] = 0, mode: Optional[str] = "RoCE v2",
         cm_dir: bool = True, active_mtu: Optional[int] = 4096) -> Dict[str, Any]:
    return {"device": device, "port": 1, "netdev": netdev, "active_mtu": active_mtu, "configfs": True,
            "cm_dir": cm_dir, "tos": tos, "mode": mode, "gid_index": 3}


def seen(nics: Dict[str, Dict[str, Any]], ports: List[Dict[str, Any]], mtu: int = 9000) -> Dict[str, Any]:
    return {"nics": dict((n, {"obs": o, "mtu": mtu, "selected_by": "name", "ecn": None,
                              "ports": [p for p in ports if p["netdev"] == n]}) for n, o in nics.items()),
            "ports": ports, "files": {}, "bins": BINS}


def want(**kw: Any) -> Dict[str, Any]:
    params = {"tos": 106, "trust": "dscp", "pfc": [3], "dscp_map": {26: 3}, "roce_mode": "v2"}
    params.update(kw)
    return _qoscheck.validate(params)


def changes(planned: Dict[str, Any]) -> List[Any]:
    """(key, before, after) of each runtime key; a boot file's key alone (its content is _qosboot's)."""
    return [c.key if c.key.startswith("file:") else (c.key, c.before, c.after) for c in planned["plan"]]


DCB_LIVE = [("dcb:eth9:dscp.26", None, 3), ("dcb:eth9:pfc", [], [3]), ("rdmacm:mlx5_0:1:tos", 0, 106)]

CASES = [
    # runtime: the NIC's DSCP entry and PFC, then the RDMA CM ToS; the mode already matches
    ("runtime", seen({"eth9": obs()}, [port()]), want(), "warn", DCB_LIVE),
    # persist: nothing live, only the boot script, its unit and the wants link
    ("persist", seen({"eth9": obs()}, [port()]), want(), "warn", BOOT),
    # both: the live keys first, then the boot files
    ("both", seen({"eth9": obs()}, [port()]), want(), "warn", DCB_LIVE + BOOT),
    # already tuned: no live change, yet the boot files re-apply every key after a reboot
    ("both", seen({"eth9": obs(trust="dscp", pfc=[3], dscp={26: [3]})}, [port(tos=106)]), want(), "warn", BOOT),
    # a missing configfs group is created before its keys
    ("runtime", seen({"eth9": obs(trust="dscp", pfc=[3], dscp={26: [3]})}, [port(cm_dir=False, tos=None, mode=None)]),
     want(), "warn", [("dir:/sys/kernel/config/rdma_cm/mlx5_0", False, True), ("rdmacm:mlx5_0:1:tos", None, 106),
                      ("rdmacm:mlx5_0:1:mode", None, "RoCE v2")]),
    # mlnx_qos: trust first (it loads the firmware table), then the entry, then PFC
    ("runtime", seen({"eth9": obs("mlnx_qos", control="mlnx_qos")}, []), want(), "warn",
     [("mlnx_qos:eth9:trust", "pcp", "dscp"), ("mlnx_qos:eth9:dscp.26", None, 3), ("mlnx_qos:eth9:pfc", [], [3])]),
    # a NIC without DCB is reported, the others are still planned
    ("runtime", seen({"eth8": obs(supported=False), "eth9": obs()}, []), want(), "warn", DCB_LIVE[:2]),
    # every setting unsupported: no boot files either
    ("both", seen({"eth8": obs(supported=False)}, []), want(), "warn", []),
]


@pytest.mark.parametrize("mode, observed, desired, on_unsupported, expected", CASES)
def test_plan(mode, observed, desired, on_unsupported, expected):
    planned = _qosplan.plan(desired, observed, on_unsupported, mode)
    assert changes(planned) == expected
    assert sorted(planned["previous"]) == sorted(set(planned["previous"]) | set(planned["plan"].keys()))


@pytest.mark.parametrize("observed, desired, on_unsupported, message", [
    # every interface's incoherence at once, before anything is planned
    (seen({"eth8": obs(), "eth9": obs()}, []), want(dscp_map={26: 4}), "warn",
     r"^tos: 106 \(DSCP 26\) lands in priority 4 on eth8 .*; tos: 106 \(DSCP 26\) lands in priority 4 on eth9 "),
    # the MTU is checked on a NIC without DCB too
    (seen({"eth8": obs(supported=False)}, [port("eth8", active_mtu=1024)], mtu=1500), want(rdma_mtu=4096), "warn",
     r"^rdma_mtu: 4096 exceeds the active MTU 1024 of mlx5_0 port 1"),
    # on_unsupported: fail names each unsupported feature
    (seen({"eth8": obs(supported=False), "eth9": obs()}, []), want(), "fail",
     r"^not supported here: eth8 dcb \(driver lacks dcbnl\); set on_unsupported: warn"),
])
def test_plan_refuses(observed, desired, on_unsupported, message):
    with pytest.raises(ValueError, match=message):
        _qosplan.plan(desired, observed, on_unsupported, "both")


NO_DCB = seen({"eth8": obs(supported=False)}, [])


@pytest.mark.parametrize("desired, message", [
    (want(pfc=[4]), r"^tos: 106 \(DSCP 26\) lands in priority 3 on eth8 \(dscp_map: \{26: 3\}\), but PFC is on only "
                    r"for 4 \(pfc\); allowed: "),
    (want(cnp={"priority": 3}), r"^cnp.priority: 3 \(cnp.priority\) on eth8 is the RoCE data priority \(tos 106 -> "
                                r"DSCP 26 -> priority 3\)"),
    (want(cnp={"dscp": 26}), r"^cnp.dscp: 26 on eth8 lands in priority 3, the RoCE data priority \(tos 106 -> DSCP 26\)"),
    (want(dscp_map={}, cnp={"dscp": 26}), r"^cnp.dscp: 26 on eth8 lands in the RoCE data priority \(tos 106 -> DSCP "
                                          r"26\)"),
    (want(dscp_map={26: 3, 48: 3}, cnp={"dscp": 48}), r"^cnp.dscp: 48 on eth8 lands in priority 3"),
    (want(trust="pcp", dscp_map={}, ecn={}), r"^ecn.priorities: required on eth8 because its RoCE priority is not "
                                             r"known under trust pcp"),
    (want(pfc=[4], cnp={"priority": 3}), r"^tos: .*; cnp.priority: 3 \(cnp.priority\) on eth8"),   # every error at once
])
@pytest.mark.parametrize("on_unsupported", ["warn", "fail"])
def test_input_coherence_is_checked_on_a_nic_without_dcb(desired, message, on_unsupported):
    """No DCB to read, yet what the input decides alone is refused, not turned into "unsupported"."""
    with pytest.raises(ValueError, match=message):
        _qosplan.plan(desired, NO_DCB, on_unsupported, "both")


@pytest.mark.parametrize("desired", [
    want(), want(dscp_map={}, pfc=[5]), want(cnp={"dscp": 48, "priority": 6}), want(trust="pcp", dscp_map={}),
    want(trust="pcp", dscp_map={}, ecn={"priorities": [3]}), want(dscp_map={48: 6}, pfc=[3], cnp={"dscp": 48}),
])
def test_input_that_depends_on_the_nic_is_left_to_it_on_a_nic_without_dcb(desired):
    """What only the NIC's own table decides (a DSCP without a dscp_map entry) is not guessed."""
    planned = _qosplan.plan(desired, NO_DCB, "warn", "both")
    assert [u["feature"] for u in planned["unsupported"]] == ["dcb"]


def test_returned_values_and_notes():
    planned = _qosplan.plan(want(), seen({"eth8": obs(supported=False), "eth9": obs()}, []), "warn", "runtime")
    out = _qosplan.returned(planned)
    assert sorted(out) == ["app", "interfaces", "rdma_ports", "unsupported"]
    assert out["interfaces"]["eth8"] == {"driver": "mlx5_core", "backend": "dcb", "dcb": False, "selected_by": "name"}
    assert out["interfaces"]["eth9"]["priority"] == 3 and out["interfaces"]["eth9"]["trust"] == "dscp"
    assert out["app"]["netdevs"] == ["eth8", "eth9"] and out["app"]["priority"] == 3   # no RDMA ports: every NIC
    assert _qosplan.notes(planned) == ["eth8: dcb not supported here: driver lacks dcbnl"]


def test_boot_script_carries_every_wanted_key_with_the_tools_found():
    planned = _qosplan.plan(want(), seen({"eth9": obs()}, [port()]), "warn", "persist")
    script = planned["plan"].as_list()[0]["after"]["content"]
    assert "run_dcb dcb:eth9:dscp.26 /usr/sbin/dcb app replace dev eth9 dscp-prio 26:3\n" in script
    assert "run rdma_cm /usr/sbin/modprobe -q rdma_cm\n" in script
    assert "put rdmacm:mlx5_0:1:tos 106 /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos\n" in script
