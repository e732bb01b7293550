# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/qos/_check.py: input validation, coherence checks and what apps are told, as tables."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _check as _qoscheck

from .states import DCB_APPTRUST, DCB_EMPTY, DCB_MAPPED, ECN, MLNX_DSCP, MLNX_PCP, PORT, check, obs, want


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


def test_app_values_come_from_the_same_desired_state():
    desired = want(tos=98, rdma_mtu=4096)
    warnings = []
    app = _qoscheck.app_values(desired, [PORT, dict(PORT, device="mlx5_1", netdev="eth8")],
                               {"eth9": {"priority": 0}, "eth8": {"priority": 0}}, warnings)
    assert app == {"tos": 98, "dscp": 24, "priority": 0, "roce_mode": "v2", "rdma_mtu": 4096,
                   "hcas": ["mlx5_0:1", "mlx5_1:1"], "netdevs": ["eth8", "eth9"], "gid_index": 3}
    app = _qoscheck.app_values(desired, [PORT, dict(PORT, device="mlx5_1", gid_index=1)], {}, warnings)
    assert app["gid_index"] is None and "different GID indexes [1, 3]" in warnings[0]
