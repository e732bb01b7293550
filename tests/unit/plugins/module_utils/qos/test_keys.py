# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/qos/_keys.py: the runtime keys of one interface and one RDMA port, as tables."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _keys as _qoskeys
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Plan

from .states import DCB_APPTRUST, DCB_EMPTY, DCB_MAPPED, ECN, MLNX_DSCP, MLNX_PCP, PORT, check, obs, want


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
