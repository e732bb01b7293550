# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/nic/_select.py: which interfaces an interfaces list selects, with what settings."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _select

from .nics import LINKS


@pytest.mark.parametrize("entries, selected", [
    ([{"name": "data0"}], ["data0"]),
    ([{"glob": "ens*"}], ["ens1f0np0"]),
    ([{"glob": "*"}], ["data0", "ens1f0np0", "eth0"]),
    ([{"driver": "mlx5_core"}], ["ens1f0np0"]),
    ([{"subnet": "10.77.0.0/24"}], ["data0"]),
    ([{"subnet": "10.0.0.0/8"}], ["data0", "ens1f0np0"]),
    ([{"driver": "veth"}, {"name": "ens1f0np0"}], ["data0", "ens1f0np0"]),
])
def test_select(entries, selected):
    assert sorted(_select.select(entries, LINKS)) == selected


def test_later_entries_override_per_setting():
    chosen = _select.select([{"glob": "*", "mtu": 9000, "rings": {"rx": 4096, "tx": 4096}},
                             {"name": "ens1f0np0", "rings": {"rx": 8192, "tx": None}}], LINKS)
    assert chosen["ens1f0np0"]["mtu"] == 9000
    assert chosen["ens1f0np0"]["rings"] == {"rx": 8192, "tx": 4096}
    assert chosen["ens1f0np0"]["selected_by"] == ["glob=*", "name=ens1f0np0"]


def test_defaults_apply_to_every_selection_and_entries_override_them():
    chosen = _select.select([{"driver": "veth"}, {"name": "ens1f0np0", "mtu": 4200, "rings": {"tx": 512}}], LINKS,
                            {"mtu": 9000, "rings": {"rx": 4096, "tx": 4096}})
    assert (chosen["data0"]["mtu"], chosen["data0"]["rings"]) == (9000, {"rx": 4096, "tx": 4096})
    assert (chosen["ens1f0np0"]["mtu"], chosen["ens1f0np0"]["rings"]) == (4200, {"rx": 4096, "tx": 512})


@pytest.mark.parametrize("entries, defaults, observed, kept, dropped", [
    # veth offers channels but no coalescing: the profile's coalescing is skipped, its mtu stays
    ([{"name": "data0"}], {"mtu": 9000, "coalesce": {"adaptive_rx": True}},
     {"driver": "veth", "coalesce": None, "channels": {"max": {"rx": 2}, "current": {"rx": 1}}},
     {"mtu": 9000}, ["coalesce.adaptive_rx"]),
    # a field the driver lacks (maximum 0) goes, the other stays
    ([{"name": "data0"}], {"channels": {"rx": 2, "combined": 4}},
     {"driver": "veth", "channels": {"max": {"rx": 2, "combined": 0}, "current": {"rx": 1, "combined": 0}}},
     {"channels": {"rx": 2}}, ["channels.combined"]),
    # a coalesce field the driver does not report
    ([{"name": "data0"}], {"coalesce": {"adaptive_rx": True, "rx_usecs": 8}},
     {"driver": "veth", "coalesce": {"rx_usecs": 3}}, {"coalesce": {"rx_usecs": 8}}, ["coalesce.adaptive_rx"]),
    # given in the entry too: not the defaults' alone, so it stays (and desired_values refuses it)
    ([{"name": "data0", "coalesce": {"adaptive_rx": True}}], {"coalesce": {"adaptive_rx": True}},
     {"driver": "veth", "coalesce": None}, {"coalesce": {"adaptive_rx": True}}, []),
    # everything supported: nothing dropped
    ([{"name": "data0"}], {"mtu": 9000, "rings": {"rx": 1024}},
     {"driver": "virtio_net", "rings": {"max": {"rx": 1024}, "current": {"rx": 256}}},
     {"mtu": 9000, "rings": {"rx": 1024}}, []),
])
def test_defaults_apply_where_the_nic_allows(entries, defaults, observed, kept, dropped):
    chosen = _select.select(entries, LINKS, defaults)
    out = _select.drop_unsupported_defaults(chosen, {"data0": observed})
    assert [d["setting"] for d in out] == dropped
    assert all(d["interface"] == "data0" and observed["driver"] in d["reason"] for d in out)
    assert dict((k, v) for k, v in chosen["data0"].items() if k not in ("selected_by", "from_defaults")) == kept


@pytest.mark.parametrize("entries, message", [
    ([{"name": "eth9"}], r"interfaces\[0\].name: unknown interface 'eth9'; present: data0 \(veth\)"),
    ([{"driver": "ice"}], r"interfaces\[0\]: selector driver='ice' matched no interface"),
    ([{"glob": "ib*"}], "selector glob='ib\\*' matched no interface"),
    ([{"subnet": "172.16.0.0/12"}], "matched no interface"),
    ([{"subnet": "not-a-net"}], "is not an IPv4/IPv6 network"),
    ([{"name": "data0", "driver": "veth"}], r"give exactly one of name, glob, driver, subnet \(got name, driver\)"),
    ([{"mtu": 9000}], r"\(got none\)"),
])
def test_select_errors(entries, message):
    with pytest.raises(ValueError, match=message):
        _select.select(entries, LINKS)


# ---------------------------------------------------------------------- one interface, two entries

@pytest.mark.parametrize("entries, message", [
    ([{"name": "data0", "mtu": 9000}, {"name": "data0", "mtu": 1500}],
     r"interfaces\[0\] \(name=data0\) and interfaces\[1\] \(name=data0\) both select data0 with a different mtu "
     r"\(9000, then 1500\)"),
    ([{"glob": "*", "mtu": 9000}, {"driver": "veth", "mtu": 1500}],
     r"interfaces\[0\] \(glob=\*\) and interfaces\[1\] \(driver=veth\) both select data0 with a different mtu"),
    ([{"name": "data0", "rings": {"rx": 512}}, {"subnet": "10.77.0.0/24", "rings": {"rx": 256}}],
     r"interfaces\[0\] \(name=data0\) and interfaces\[1\] \(subnet=10.77.0.0/24\) both select data0 with a "
     r"different rings.rx \(512, then 256\)"),
    ([{"driver": "veth", "coalesce": {"adaptive_rx": True}}, {"glob": "data*", "coalesce": {"adaptive_rx": False}}],
     "different coalesce.adaptive_rx"),
])
def test_one_interface_given_conflicting_values_names_both_entries(entries, message):
    with pytest.raises(ValueError, match=message):
        _select.select(entries, LINKS)


def test_agreeing_entries_and_name_refinements_are_fine():
    chosen = _select.select([{"name": "data0", "mtu": 9000}, {"glob": "data*", "mtu": 9000, "rings": {"rx": 1}}], LINKS)
    assert (chosen["data0"]["mtu"], chosen["data0"]["rings"]) == (9000, {"rx": 1})
    chosen = _select.select([{"glob": "*", "mtu": 9000}, {"name": "data0", "mtu": 1500},
                             {"driver": "mlx5_core", "mtu": 9000}], LINKS)
    assert [chosen[n]["mtu"] for n in ("data0", "ens1f0np0", "eth0")] == [1500, 9000, 9000]
