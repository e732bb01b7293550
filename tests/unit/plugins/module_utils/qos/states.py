# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Interface states the roce_qos checks and planners are tried on (not a test module)."""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _check as _qoscheck


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
