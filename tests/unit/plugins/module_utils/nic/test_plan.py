# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/nic/_plan.py: the runtime keys and .link files of a call, the MTU floors and the devices an MTU change drags."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _guard
from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _plan as _planner

from .nics import BRIDGED, J, LINKS, MGMT, MLX, NO_ROUTE, VETH, network, plan_one


@pytest.mark.parametrize("settings, obs, changes", [
    ({"mtu": 9000}, VETH, [("nic:data0:mtu", 1500, 9000)]),
    ({"mtu": 1500}, VETH, []),
    ({"rings": {"rx": 8192}}, MLX, [("nic:ens1f0np0:ring.rx", 1024, 8192)]),
    ({"channels": {"combined": 16}}, MLX, [("nic:ens1f0np0:channel.combined", 63, 16)]),
    ({"channels": {"rx": 2}}, VETH, [("nic:data0:channel.rx", 1, 2)]),
    ({"coalesce": {"rx_usecs": 0, "adaptive_rx": False}}, MLX,
     [("nic:ens1f0np0:coalesce.adaptive_rx", True, False), ("nic:ens1f0np0:coalesce.rx_usecs", 8, 0)]),
])
def test_plan_runtime(settings, obs, changes):
    out = plan_one(settings, obs)
    assert [(c.key, c.before, c.after) for c in out["plan"]] == changes


@pytest.mark.parametrize("settings, obs, message", [
    ({"mtu": 10000}, MLX, r"ens1f0np0 mtu=10000 is outside what the device allows \(68..9978\)"),
    ({"mtu": 60}, VETH, r"outside what the device allows \(68..65535\)"),
    ({"rings": {"rx": 16384}}, MLX, "rings.rx=16384 is above the hardware maximum 8192; use 8192 or less"),
    ({"rings": {"rx": 0}}, MLX, r"rings.rx=0 is invalid; allowed: 1..8192"),
    ({"rings": {"rx_jumbo": 1024}}, MLX, "rings.rx_jumbo is not supported by driver mlx5_core"),
    ({"rings": {"rx": 512}}, VETH, r"rings not supported by driver veth \(ethtool -g: Operation not supported\)"),
    ({"channels": {"combined": 64}}, MLX, "channels.combined=64 is above the hardware maximum 63"),
    ({"channels": {"combined": 2}}, VETH, "channels.combined is not supported by driver veth"),
    ({"coalesce": {"rx_usecs": -1}}, MLX, "coalesce.rx_usecs=-1 is negative; allowed: 0 or more"),
    ({"coalesce": {"rx_usecs": 8}}, VETH, "coalesce not supported by driver veth"),
    ({"coalesce": {"tx_usecs": -3}}, VETH, "coalesce.tx_usecs=-3 is negative"),
])
def test_plan_refuses_beyond_capabilities(settings, obs, message):
    with pytest.raises(ValueError, match=message):
        plan_one(settings, obs)


def test_cap_lowers_to_maximum_and_reports_it():
    out = plan_one({"rings": {"rx": 65536, "tx": 4096}}, MLX, cap=True)
    assert [(c.key, c.after) for c in out["plan"]] == [("nic:ens1f0np0:ring.rx", 8192), ("nic:ens1f0np0:ring.tx", 4096)]
    assert out["capped"] == [{"interface": "ens1f0np0", "setting": "rings.rx", "requested": 65536, "applied": 8192}]


def test_management_interface_is_refused_unless_allowed():
    mgmt = _guard.management_path(LINKS, [_guard.Endpoint("192.168.122.10", "controller", "management_address")],
                                  NO_ROUTE)
    assert list(mgmt.protected) == ["eth0"] and mgmt.determined
    with pytest.raises(ValueError, match="eth0 carries the Ansible connection; changing mtu could cut it off"):
        plan_one({"mtu": 9000}, MGMT, mgmt=mgmt)
    assert len(plan_one({"mtu": 9000}, MGMT, mgmt=mgmt, allow=True)["plan"]) == 1
    # no change planned for it: nothing to refuse
    assert len(plan_one({"mtu": 1500}, MGMT, mgmt=mgmt)["plan"]) == 0
    # persist-only never touches the live link
    assert [c.domain for c in plan_one({"mtu": 9000}, MGMT, mgmt=mgmt, mode="persist")["plan"]] == ["file"]


# ---------------------------------------------------------------------- MTU floors

@pytest.mark.parametrize("mtu, obs, kw, message", [
    (1000, dict(VETH, addresses=VETH["addresses"] + [{"family": "inet6", "local": "fe80::1", "prefixlen": 64}]), {},
     r"data0 mtu=1000 is below 1280, the IPv6 minimum MTU \(RFC 8200\), and data0 has IPv6 configured "
     r"\(fe80::1\): the kernel would drop its IPv6 addresses"),
    (500, VETH, {}, r"data0 mtu=500 is below 576, .*set allow_low_mtu: true"),
    (100, VETH, {"mode": "persist"}, "below 576"),     # input, checked in every mode
])
def test_low_mtu_is_refused_naming_the_reason(mtu, obs, kw, message):
    with pytest.raises(ValueError, match=message):
        plan_one({"mtu": mtu}, obs, **kw)


def test_low_mtu_allowed_where_nothing_breaks():
    v6 = dict(VETH, addresses=[{"family": "inet6", "local": "fe80::1", "prefixlen": 64}])
    assert [c.after for c in plan_one({"mtu": 500}, VETH, allow_low_mtu=True)["plan"]] == [500]
    assert [c.after for c in plan_one({"mtu": 1279}, VETH)["plan"]] == [1279]          # IPv4 only
    # persist only: this node's addresses say nothing about the node the file boots on
    assert [c.domain for c in plan_one({"mtu": 1000}, v6, mode="persist")["plan"]] == ["file"]
    with pytest.raises(ValueError, match="IPv6 minimum"):
        plan_one({"mtu": 1000}, v6, allow_low_mtu=True)


# ---------------------------------------------------------------------- devices stacked on a tuned NIC

VLANS = network("ip-link.vlan.json")


def _obs(name, net, **kw):
    return dict(net[name], driver=net[name].get("kind") or "mlx5_core", rings=None, channels=None, coalesce=None, **kw)


def test_lowering_a_nic_journals_the_vlan_it_drags_down():
    out = _planner.plan({"ens1f0np0": {"mtu": 4000}}, {"ens1f0np0": _obs("ens1f0np0", VLANS)}, "runtime", False, [],
                        False, {}, J, net=VLANS)
    assert [(c.key, c.before, c.after) for c in out["plan"]] == [
        ("nic:ens1f0np0.100:mtu", 9000, 4000), ("nic:ens1f0np0:mtu", 9000, 4000)]
    assert out["previous"]["nic:ens1f0np0.100:mtu"] == 9000
    assert out["dragged"] == {"ens1f0np0": ["ens1f0np0.100"]}
    # raising it drags nothing (the kernel never raises a VLAN's MTU)
    out = _planner.plan({"bond0": {"mtu": 9000}}, {"bond0": _obs("bond0", VLANS)}, "runtime", False, [], False, {}, J,
                        net=VLANS)
    assert [c.key for c in out["plan"]] == [] and out["dragged"] == {}


def test_macvlan_on_a_veth_is_dragged_too():
    net = dict(BRIDGED, mv0=dict(BRIDGED["mv0"], mtu=9000))
    out = _planner.plan({"v0": {"mtu": 1500}}, {"v0": _obs("v0", net)}, "runtime", False, [], False, {}, J, net=net)
    assert [(c.key, c.after) for c in out["plan"]] == [("nic:mv0:mtu", 1500), ("nic:v0:mtu", 1500)]


def test_stacked_mtu_order_holds_while_applying_and_rolling_back():
    net = dict(VLANS, **{"ens1f0np0.100": dict(VLANS["ens1f0np0.100"], mtu=1500),
                         "ens1f0np0": dict(VLANS["ens1f0np0"], mtu=1500)})
    chosen = {"ens1f0np0.100": {"mtu": 9000}, "ens1f0np0": {"mtu": 9000}}
    observed = dict((n, _obs(n, net)) for n in chosen)
    out = _planner.plan(chosen, observed, "runtime", False, [], False, {}, J, net=net)
    # up: the lower device first (a VLAN cannot exceed it); rollback replays in reverse, VLAN first
    assert [c.key for c in out["plan"]] == ["nic:ens1f0np0:mtu", "nic:ens1f0np0.100:mtu"]
    observed = dict((n, _obs(n, VLANS)) for n in chosen)
    chosen = {"ens1f0np0.100": {"mtu": 1500}, "ens1f0np0": {"mtu": 1500}}
    out = _planner.plan(chosen, observed, "runtime", False, [], False, {}, J, net=VLANS)
    assert [c.key for c in out["plan"]] == ["nic:ens1f0np0.100:mtu", "nic:ens1f0np0:mtu"]


def test_stacked_devices_refuse_what_the_kernel_would():
    chosen = {"ens1f0np0.100": {"mtu": 9000}, "ens1f0np0": {"mtu": 4000}}
    observed = dict((n, _obs(n, VLANS)) for n in chosen)
    with pytest.raises(ValueError, match=r"ens1f0np0.100 mtu=9000 is above 4000, the MTU of ens1f0np0, the vlan's "
                                         r"lower device \(after this call\)"):
        _planner.plan(chosen, observed, "runtime", False, [], False, {}, J, net=VLANS)
    v6 = dict(VLANS, **{"ens1f0np0.100": dict(VLANS["ens1f0np0.100"], addresses=[
        {"family": "inet6", "local": "fd00:100::5", "prefixlen": 64}])})
    with pytest.raises(ValueError, match=r"ens1f0np0 mtu=1200 is below 1280, the IPv6 minimum MTU \(RFC 8200\), and "
                                         r"ens1f0np0.100 \(vlan on ens1f0np0, which the kernel lowers with it\) has "
                                         r"IPv6 configured \(fd00:100::5\)"):
        _planner.plan({"ens1f0np0": {"mtu": 1200}}, {"ens1f0np0": _obs("ens1f0np0", v6)}, "runtime", False, [], False,
                      {}, J, net=v6)


def test_a_device_given_its_own_mtu_is_not_dragged_nor_what_sits_on_it():
    """NIC 9000 -> 4000, macvlan on it 9000 -> 2000 (its own), VLAN on the macvlan 9000: the VLAN
    follows the macvlan (2000), planned once, topmost first."""
    net = {
        "eth1": dict(VLANS["ens1f0np0"], name="eth1", mtu=9000),
        "mv1": dict(VLANS["ens1f0np0.100"], name="mv1", kind="macvlan", link="eth1", mtu=9000),
        "mv1.7": dict(VLANS["ens1f0np0.100"], name="mv1.7", kind="vlan", link="mv1", mtu=9000),
    }
    chosen = {"eth1": {"mtu": 4000}, "mv1": {"mtu": 2000}}
    observed = dict((n, _obs(n, net)) for n in chosen)
    out = _planner.plan(chosen, observed, "runtime", False, [], False, {}, J, net=net)
    assert [(c.key, c.after) for c in out["plan"]] == [
        ("nic:mv1.7:mtu", 2000), ("nic:mv1:mtu", 2000), ("nic:eth1:mtu", 4000)]
    assert out["dragged"] == {"mv1": ["mv1.7"]}
