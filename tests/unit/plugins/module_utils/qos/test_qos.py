# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Pure parts of _qos: input validation, coherence checks and plans, as tables."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _domain as _qos
from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _check as _qoscheck
from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _keys as _qoskeys
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Plan


def obs(backend="dcb", trust="pcp", control="implicit", pfc=(), dscp=None, default_prio=0, driver="mlx5_core"):
    return {"backend": backend, "supported": True, "reason": None, "pfc": list(pfc), "trust": trust,
            "trust_control": control, "apptrust": None, "dscp": dict(dscp or {}), "default_prio": default_prio,
            "driver": driver}


MLNX_PCP = obs("mlnx_qos", "pcp", "mlnx_qos")
MLNX_DSCP = obs("mlnx_qos", "dscp", "mlnx_qos", dscp=dict((d, [d >> 3]) for d in range(64)))
DCB_EMPTY = obs()
DCB_MAPPED = obs(trust="dscp", pfc=[3], dscp={26: [3], 48: [6]})
DCB_APPTRUST = obs(trust="pcp", control="apptrust", driver="sparx5", dscp={26: [3]})
ECN = {"roce_np": dict((p, 1) for p in range(8)), "roce_rp": dict((p, 0) for p in range(8)),
       "cnp_dscp": 48, "cnp_802p_prio": 6}
PORT = {"device": "mlx5_0", "port": 1, "netdev": "eth9", "active_mtu": 4096, "configfs": True, "cm_dir": True,
        "tos": 0, "mode": "RoCE v2", "gid_index": 3}


def want(**kw):
    params = {"tos": 106, "trust": "dscp", "pfc": [3], "dscp_map": {}, "roce_mode": "v2"}
    params.update(kw)
    return _qoscheck.validate(params)


def check(o, desired, ecn=None, ports=(), mtu=9000):
    warnings = []
    return _qoscheck.check("eth9", o, desired, ecn, list(ports), mtu, warnings), warnings


# --------------------------------------------------------------------------- validation: each bad input
def test_bad_input_priority_8():
    with pytest.raises(ValueError, match=r"^pfc: 8 is not a priority; allowed: 0..7$"):
        want(pfc=[3, 8])


def test_bad_input_dscp_64():
    with pytest.raises(ValueError, match=r"^dscp_map: 64 is not a DSCP; allowed: 0..63$"):
        want(dscp_map={64: 3})


def test_bad_input_tos_above_255():
    with pytest.raises(ValueError, match=r"^tos: 256 is not a ToS byte; allowed: 0..255$"):
        want(tos=256)


def test_bad_input_trust_pcp_with_a_dscp_map():
    with pytest.raises(ValueError, match=r"^trust: pcp with a dscp_map \(26: 3\): the NIC ignores DSCP under PCP "
                                         r"trust; allowed: trust: dscp with a dscp_map, or trust: pcp without one$"):
        want(trust="pcp", dscp_map={26: 3})


def test_bad_input_pfc_on_a_priority_no_dscp_maps_to():
    # a sparse APP table (dcb): only DSCP 26 -> 3 is mapped, everything else falls to priority 0
    with pytest.raises(_qoscheck.Incoherent, match=r"pfc: priority 5 is lossless on eth9 but no DSCP maps to it "
                                                   r"\(DSCP map: priority 3 <- DSCP 26\); allowed: priorities some DSCP "
                                                   r"maps to — add dscp_map: \{D: 5\} or drop 5 from pfc"):
        check(DCB_EMPTY, want(pfc=[3, 5], dscp_map={26: 3}))


@pytest.mark.parametrize("kw, message", [
    ({"dscp_map": {26: 8}}, r"^dscp_map.26: 8 is not a priority; allowed: 0..7$"),
    ({"dscp_map": {"x": 3}}, r"^dscp_map: 'x' is not a DSCP; allowed: 0..63$"),
    ({"dscp_map": {"26": 3}}, None),                         # string keys (templated YAML) are fine
    ({"pfc": [3, 3]}, r"^pfc: priority 3 is listed twice$"),
    ({"pfc": [-1]}, r"^pfc: -1 is not a priority; allowed: 0..7$"),
    ({"tos": -1}, r"^tos: -1 is not a ToS byte"),
    ({"cnp": {"dscp": 64}}, r"^cnp.dscp: 64 is not a DSCP; allowed: 0..63$"),
    ({"cnp": {"priority": 8}}, r"^cnp.priority: 8 is not a priority; allowed: 0..7$"),
    ({"ecn": {"priorities": [9]}}, r"^ecn.priorities: 9 is not a priority; allowed: 0..7$"),
    ({"roce_mode": "v3"}, r"^roce_mode: 'v3'; allowed: v1, v2$"),
    ({"rdma_mtu": 9000}, r"^rdma_mtu: 9000 is not an RDMA MTU; allowed: 256, 512, 1024, 2048, 4096$"),
    ({"dscp_map": {26: True}}, r"^dscp_map.26: True is not a priority"),
])
def test_validate_table(kw, message):
    if message is None:
        assert want(**kw)["dscp_map"] == {26: 3}
        return
    with pytest.raises(ValueError, match=message):
        want(**kw)


def test_validate_normalises():
    d = want(tos=106, pfc=[4, 3], dscp_map={"48": "6"}, ecn={"priorities": None, "np": True, "rp": False})
    assert (d["dscp"], d["pfc"], d["dscp_map"]) == (26, [3, 4], {48: 6})
    assert d["ecn"] == {"priorities": None, "np": True, "rp": False}


# --------------------------------------------------------------------------- coherence: good states
@pytest.mark.parametrize("o, desired, trust, prio", [
    (MLNX_PCP, want(), "dscp", 3),                         # --trust dscp loads dscp>>3: 26 -> 3
    (MLNX_DSCP, want(), "dscp", 3),
    (MLNX_DSCP, want(tos=184, pfc=[5], dscp_map={46: 5}), "dscp", 5),    # EF 46 -> 5
    (DCB_EMPTY, want(dscp_map={26: 3}), "dscp", 3),        # implicit trust follows the first entry
    (DCB_MAPPED, want(pfc=None), "dscp", 3),               # PFC unmanaged: the current [3] is used
    (DCB_APPTRUST, want(), "dscp", 3),
    (obs(trust="dscp", pfc=[0], dscp={46: [5]}), want(pfc=[0], tos=0), "dscp", 0),  # DSCP 0 unmapped -> default 0
])
def test_coherent_states(o, desired, trust, prio):
    final, warnings = check(o, desired)
    assert (final["trust"], final["priority"]) == (trust, prio)
    assert warnings == []


def test_pcp_trust_skips_the_tos_check_with_a_warning():
    final, warnings = check(MLNX_DSCP, want(trust="pcp", pfc=[3]))
    assert final["trust"] == "pcp" and final["priority"] is None
    assert "trusts PCP" in warnings[0]


# --------------------------------------------------------------------------- coherence: refused states
@pytest.mark.parametrize("o, desired, kw, message", [
    (DCB_EMPTY, want(pfc=[3], dscp_map={46: 3}), {},
     r"tos: 106 \(DSCP 26\) lands in priority 0 on eth9 \(DSCP 26 has no entry in the DSCP map, so the default "
     r"priority 0 applies\), but PFC is on only for 3 \(pfc\); allowed: a tos whose DSCP maps to a PFC priority"),
    (MLNX_DSCP, want(pfc=[4]), {}, r"tos: 106 \(DSCP 26\) lands in priority 3 on eth9 \(DSCP 26 maps to priority "
                                   r"3\), but PFC is on only for 4 \(pfc\)"),
    (DCB_MAPPED, want(pfc=None, tos=184), {}, r"lands in priority 0 .*\(PFC currently on eth9\)"),
    (DCB_EMPTY, want(), {}, r"trust: dscp on eth9 needs DSCP entries: dcb apptrust is not available"),
    (MLNX_DSCP, want(cnp={"priority": 3}), {},
     r"cnp.priority: 3 \(cnp.priority\) on eth9 is the RoCE data priority \(tos 106 -> DSCP 26 -> priority 3\); "
     r"CNPs must not queue behind the traffic they slow down; allowed: 0..7 except 3 \(NVIDIA uses 6\)"),
    (MLNX_DSCP, want(cnp={"dscp": 27}), {},
     r"cnp.dscp: 27 on eth9 lands in priority 3, the RoCE data priority \(tos 106 -> DSCP 26\); allowed: a DSCP "
     r"that maps to another priority \(NVIDIA uses DSCP 48 -> priority 6\)"),
    (MLNX_DSCP, want(), {"ecn": dict(ECN, cnp_802p_prio=3)},
     r"cnp.priority: 3 \(the driver's current cnp_802p_prio\)"),
    (MLNX_DSCP, want(trust="pcp", ecn={"np": True}), {},
     r"ecn.priorities: required on eth9 because its RoCE priority is not known under trust pcp"),
    (obs(trust="dscp", pfc=[3], dscp={26: [3, 5]}), want(pfc=[3], dscp_map={}), {},
     r"dscp_map: DSCP 26 maps to several priorities \[3, 5\] on eth9; allowed: one"),
])
def test_incoherent_states(o, desired, kw, message):
    with pytest.raises(_qoscheck.Incoherent, match=message):
        check(o, desired, **kw)


def test_every_incoherence_is_reported_at_once():
    with pytest.raises(_qoscheck.Incoherent) as e:
        check(DCB_EMPTY, want(pfc=[3, 5], dscp_map={46: 3}, cnp={"priority": 0}))
    assert len(e.value.errors) == 3
    assert [m.split(":")[0] for m in e.value.errors] == ["tos", "pfc", "cnp.priority"]


# --------------------------------------------------------------------------- MTU
@pytest.mark.parametrize("mtu, rdma_mtu, active, message", [
    (9000, 4096, 4096, None),
    (1500, None, 1024, None),
    (1500, 1024, 1024, None),
    (1500, 4096, 1024, r"rdma_mtu: 4096 exceeds the active MTU 1024 of mlx5_0 port 1 \(derived from eth9's MTU "
                       r"1500\); allowed: 1024 or less, or raise eth9's MTU \(about 4200"),
    (1000, None, 1024, r"rdma_mtu: eth9 has MTU 1000, below the RDMA path MTU 1024 of mlx5_0 port 1; allowed: a "
                       r"netdev MTU of at least the RDMA MTU"),
    (2000, 2048, None, r"eth9 has MTU 2000, below the RDMA path MTU 2048"),      # no ibv_devinfo
    (2000, None, None, None),
])
def test_mtu_checks(mtu, rdma_mtu, active, message):
    port = dict(PORT, active_mtu=active)
    desired = want(rdma_mtu=rdma_mtu)
    if message is None:
        check(MLNX_DSCP, desired, ports=[port], mtu=mtu)
        return
    with pytest.raises(_qoscheck.Incoherent, match=message):
        check(MLNX_DSCP, desired, ports=[port], mtu=mtu)


# --------------------------------------------------------------------------- plans
def plan_of(o, desired, ecn=None):
    final = check(o, desired, ecn)[0]
    p, previous, unsupported = Plan(), {}, []
    _qoskeys.plan_nic("eth9", o, desired, ecn, final, p, previous, unsupported)
    return [(c.key, c.before, c.after) for c in p], previous, unsupported


@pytest.mark.parametrize("o, desired, changes", [
    # mlnx_qos: trust first (it loads the firmware table), then DSCP entries, then PFC
    (MLNX_PCP, want(dscp_map={26: 3, 48: 6}),
     [("mlnx_qos:eth9:trust", "pcp", "dscp"), ("mlnx_qos:eth9:dscp.26", None, 3), ("mlnx_qos:eth9:dscp.48", None, 6),
      ("mlnx_qos:eth9:pfc", [], [3])]),
    (MLNX_DSCP, want(dscp_map={26: 3, 8: 0}), [("mlnx_qos:eth9:dscp.8", 1, 0), ("mlnx_qos:eth9:pfc", [], [3])]),
    (dict(MLNX_DSCP, pfc=[3]), want(pfc=None), []),
    # dcb with implicit trust: DSCP entries first, no trust key
    (DCB_EMPTY, want(dscp_map={26: 3}), [("dcb:eth9:dscp.26", None, 3), ("dcb:eth9:pfc", [], [3])]),
    (DCB_MAPPED, want(dscp_map={26: 3, 48: 6}), []),
    # trust pcp with implicit trust = remove every DSCP entry
    (DCB_MAPPED, want(trust="pcp", pfc=[3]), [("dcb:eth9:dscp.26", 3, None), ("dcb:eth9:dscp.48", 6, None)]),
    # several priorities for one DSCP become one
    (obs(trust="dscp", pfc=[3], dscp={26: [3, 5]}), want(dscp_map={26: 3}), [("dcb:eth9:dscp.26", [3, 5], 3)]),
    # dcb apptrust: an explicit trust key, after the entries
    (DCB_APPTRUST, want(dscp_map={48: 6}), [("dcb:eth9:dscp.48", None, 6), ("dcb:eth9:pfc", [], [3]),
                                            ("dcb:eth9:trust", "pcp", "dscp")]),
])
def test_plan_nic(o, desired, changes):
    assert plan_of(o, desired)[0] == changes


@pytest.mark.parametrize("o, desired, ecn, wanted", [
    # nothing changes, yet every key considered is recorded with its wanted value, in plan order
    (DCB_MAPPED, want(dscp_map={26: 3, 48: 6}), None,
     [("dcb:eth9:dscp.26", 3), ("dcb:eth9:dscp.48", 6), ("dcb:eth9:pfc", [3])]),
    (DCB_MAPPED, want(trust="pcp", pfc=[3]), None,
     [("dcb:eth9:dscp.26", None), ("dcb:eth9:dscp.48", None), ("dcb:eth9:pfc", [3])]),
    (MLNX_PCP, want(dscp_map={26: 3}), ECN,
     [("mlnx_qos:eth9:trust", "dscp"), ("mlnx_qos:eth9:dscp.26", 3), ("mlnx_qos:eth9:pfc", [3])]),
    (dict(MLNX_DSCP, pfc=[3]), want(pfc=[3], ecn={}, cnp={"dscp": 48}), ECN,
     [("mlnx_qos:eth9:trust", "dscp"), ("mlnx_qos:eth9:pfc", [3]), ("ecn:eth9:roce_np.3", 1),
      ("ecn:eth9:roce_rp.3", 1), ("ecn:eth9:cnp_dscp", 48)]),
    (DCB_APPTRUST, want(dscp_map={48: 6}), None,
     [("dcb:eth9:dscp.48", 6), ("dcb:eth9:pfc", [3]), ("dcb:eth9:trust", "dscp")]),
])
def test_plan_nic_records_every_wanted_value(o, desired, ecn, wanted):
    final = check(o, desired, ecn)[0]
    p, previous, unsupported, recorded = Plan(), {}, [], []
    _qoskeys.plan_nic("eth9", o, desired, ecn, final, p, previous, unsupported, recorded)
    assert recorded == wanted
    assert sorted(k for k, _v in recorded) == sorted(previous)
    assert [c.key for c in p] == [k for k, _v in recorded if k in p.keys()]     # same order as the plan


def test_plan_rdma_cm_records_the_rdmacm_keys_not_the_group():
    p, recorded = Plan(), []
    ports = [dict(PORT, cm_dir=False, tos=None, mode=None), dict(PORT, port=2, tos=106, mode="RoCE v2")]
    _qoskeys.plan_rdma_cm(ports, want(), p, {}, [], recorded)
    assert recorded == [("rdmacm:mlx5_0:1:tos", 106), ("rdmacm:mlx5_0:1:mode", "RoCE v2"),
                        ("rdmacm:mlx5_0:2:tos", 106), ("rdmacm:mlx5_0:2:mode", "RoCE v2")]
    assert "dir:/sys/kernel/config/rdma_cm/mlx5_0" in p.keys()
    recorded = []
    _qoskeys.plan_rdma_cm([dict(PORT, configfs=False)], want(), Plan(), {}, [], recorded)
    assert recorded == []                                          # unsupported: nothing to re-apply


def test_plan_ecn_and_cnp():
    changes, previous, unsupported = plan_of(MLNX_DSCP, want(pfc=[3], ecn={"np": True, "rp": True},
                                                             cnp={"dscp": 46, "priority": 5}), ECN)
    assert changes == [("mlnx_qos:eth9:pfc", [], [3]), ("ecn:eth9:roce_rp.3", 0, 1), ("ecn:eth9:cnp_dscp", 48, 46),
                       ("ecn:eth9:cnp_802p_prio", 6, 5)]
    assert previous["ecn:eth9:roce_np.3"] == 1 and unsupported == []


def test_plan_ecn_explicit_priorities_and_disable():
    changes = plan_of(MLNX_DSCP, want(ecn={"priorities": [3, 4], "np": False, "rp": True}), ECN)[0]
    assert changes == [("mlnx_qos:eth9:pfc", [], [3]), ("ecn:eth9:roce_np.3", 1, 0), ("ecn:eth9:roce_np.4", 1, 0),
                       ("ecn:eth9:roce_rp.3", 0, 1), ("ecn:eth9:roce_rp.4", 0, 1)]


def test_plan_ecn_without_sysfs_is_a_named_unsupported_result():
    changes, unsupported = plan_of(MLNX_DSCP, want(ecn={"np": True}), None)[0::2]
    assert changes == [("mlnx_qos:eth9:pfc", [], [3])]
    assert unsupported[0]["feature"] == "ecn" and "no /sys/class/net/eth9/ecn" in unsupported[0]["reason"]


def test_plan_rdma_cm_creates_the_configfs_group_first():
    p, previous, unsupported = Plan(), {}, []
    ports = [dict(PORT, cm_dir=False, tos=None, mode=None), dict(PORT, port=2, cm_dir=False, tos=None, mode=None)]
    _qoskeys.plan_rdma_cm(ports, want(roce_mode="v1"), p, previous, unsupported)
    assert [(c.key, c.before, c.after) for c in p] == [
        ("dir:/sys/kernel/config/rdma_cm/mlx5_0", False, True),
        ("rdmacm:mlx5_0:1:tos", None, 106), ("rdmacm:mlx5_0:1:mode", None, "IB/RoCE v1"),
        ("rdmacm:mlx5_0:2:tos", None, 106), ("rdmacm:mlx5_0:2:mode", None, "IB/RoCE v1")]


def test_plan_rdma_cm_without_configfs():
    p, unsupported = Plan(), []
    _qoskeys.plan_rdma_cm([dict(PORT, configfs=False)], want(), p, {}, unsupported)
    assert not p
    assert unsupported[0]["feature"] == "rdma_cm" and "modprobe rdma_cm" in unsupported[0]["reason"]


def test_app_values_come_from_the_same_desired_state():
    desired = want(tos=98, rdma_mtu=4096)
    warnings = []
    app = _qoscheck.app_values(desired, [PORT, dict(PORT, device="mlx5_1", netdev="eth8")],
                               {"eth9": {"priority": 0}, "eth8": {"priority": 0}}, warnings)
    assert app == {"tos": 98, "dscp": 24, "priority": 0, "roce_mode": "v2", "rdma_mtu": 4096,
                   "hcas": ["mlx5_0:1", "mlx5_1:1"], "netdevs": ["eth8", "eth9"], "gid_index": 3}
    app = _qoscheck.app_values(desired, [PORT, dict(PORT, device="mlx5_1", gid_index=1)], {}, warnings)
    assert app["gid_index"] is None and "different GID indexes [1, 3]" in warnings[0]


def test_domain_value_forms():
    assert _qos._from_list([]) is None
    assert _qos._from_list([3]) == 3
    assert _qos._from_list([5, 3, 5]) == [3, 5]
    assert _qos.DCB.same([3], 3) and _qos.DCB.same(None, []) and not _qos.DCB.same(3, [3, 5])
    assert _qos.DCB.same("dscp  pcp", "dscp pcp")
    assert _qos.RDMACM.same(106, "106\n") and not _qos.RDMACM.same(None, 0)
    assert _qos.ecn_path("eth9", "roce_rp.3") == "/sys/class/net/eth9/ecn/roce_rp/enable/3"
    assert _qos.ecn_path("eth9", "cnp_dscp") == "/sys/class/net/eth9/ecn/roce_np/cnp_dscp"
