# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/nic/_domain.py: a NIC knob is one record, and everything that names knobs
(the module's options, the ethtool parsers, the .link file) follows the table."""
from __future__ import annotations

import os
import re

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _domain as _nic
from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _linkfile
from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _module
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _ethtool
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host

from ....conftest import fixture

# the journal key prefix of each group's settings (nic:IF:ring.rx): part of the on-disk format
PREFIX = {"rings": "ring", "channels": "channel", "coalesce": "coalesce"}


@pytest.mark.parametrize("knob", _nic.KNOBS, ids=lambda k: k.name)
def test_every_knob_has_all_its_fields(knob):
    assert knob.group in _nic.GROUPS
    assert knob.name == "%s.%s" % (PREFIX[knob.group], knob.field)
    assert re.match(r"^[a-z]+(-[a-z]+)*$", knob.ethtool), knob
    assert re.match(r"^[A-Z][A-Za-z]+$", knob.link_key), knob
    assert knob.kind in ("int", "bool")
    assert all(getattr(knob, f) for f in knob._fields)


def test_knobs_are_unique():
    names = [k.name for k in _nic.KNOBS]
    assert len(set(names)) == len(names) == len(_nic.KNOB)
    assert len(set(k.link_key for k in _nic.KNOBS) | {_nic.MTU_LINK_KEY}) == len(names) + 1
    for group in _nic.GROUPS:
        args = [k.ethtool for k in _nic.KNOBS if k.group == group]
        assert len(set(args)) == len(args)


@pytest.mark.parametrize("where", ["interfaces", "defaults"])
def test_the_module_offers_exactly_the_knobs_of_the_table(where):
    spec = _module.ARGUMENT_SPEC[where]["options"]
    assert set(spec) & {"mtu", "rings", "channels", "coalesce"} == {"mtu"} | set(_nic.GROUPS)
    assert spec["mtu"] == {"type": "int"}
    offered = set((group, field, opt["type"]) for group in _nic.GROUPS for field, opt in spec[group]["options"].items())
    assert offered == set((k.group, k.field, k.kind) for k in _nic.KNOBS)


@pytest.mark.parametrize("group, capture", [("rings", "ethtool-g.mlx5_core.txt"), ("channels", "ethtool-l.mlx5_core.txt"),
                                            ("coalesce", "ethtool-c.mlx5_core.txt")])
def test_the_parsers_name_every_knob_of_their_group(group, capture):
    parsed = {"rings": _ethtool.parse_ethtool_rings, "channels": _ethtool.parse_ethtool_channels,
              "coalesce": _ethtool.parse_ethtool_coalesce}[group](fixture(capture))
    fields = set(parsed if group == "coalesce" else parsed["max"])
    assert set(_nic.fields(group)) <= fields


def test_the_link_file_writes_each_knob_under_its_key():
    values = dict((k.name, True if k.kind == "bool" else 8) for k in _nic.KNOBS)
    values["mtu"] = 9000
    text = _linkfile.render_link("data0", {}, values, "/var/lib/hpcnet-rdma", ["OriginalName=data0"])
    keys = [line.split("=", 1)[0] for line in text.split("[Link]\n", 1)[1].splitlines()[1:]]
    assert keys == [_nic.MTU_LINK_KEY] + [k.link_key for k in _nic.KNOBS]


def test_fields_keep_the_table_order():
    assert _nic.fields("rings") == ("rx", "rx_mini", "rx_jumbo", "tx")
    assert _nic.fields("channels") == ("rx", "tx", "other", "combined")
    assert _nic.fields("coalesce", "bool") == ("adaptive_rx", "adaptive_tx")
    assert _nic.fields("coalesce", "int") == ("rx_usecs", "tx_usecs", "rx_frames", "tx_frames")


def test_observe_identity_and_shared_paths(tmp_path):
    root = tmp_path / "root"

    def put(path, text):
        full = root / path.lstrip("/")
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(text)

    put("/run/udev/data/n2", "I:1234\nE:ID_NET_DRIVER=mlx5_core\nE:ID_PATH=pci-0000:3b:00.0\nE:ID_PATH_TAG=pci-0000_3b_00_0\n")
    put("/sys/devices/pci0000:3a/0000:3b:00.0/driver-target", "")
    for name, dev in (("ens1f0np0", "0000:3b:00.0"), ("pf0vf0", "0000:3b:00.0"), ("ens2", "0000:5e:00.0")):
        put("/sys/class/net/%s/addr_assign_type" % name, "0\n")
        put("/sys/class/net/%s/address" % name, "b8:ce:f6:00:00:01\n")
        os.symlink("../../../devices/pci0000:3a/" + dev, str(root / "sys/class/net" / name / "device"))
    os.makedirs(str(root / "sys/bus/pci/drivers/mlx5_core"))
    os.symlink("../../../../bus/pci/drivers/mlx5_core", str(root / "sys/devices/pci0000:3a/0000:3b:00.0/driver"))
    put("/sys/class/net/data0/addr_assign_type", "1\n")          # veth: random address, no device
    host = Host(root=str(root), environ={})
    ident = _nic.observe_identity(host, "ens1f0np0", 2)
    assert ident == {"udev_path": "pci-0000:3b:00.0", "device_driver": "mlx5_core", "permanent_mac": "b8:ce:f6:00:00:01"}
    assert _nic.observe_identity(host, "data0", 9) == {"udev_path": None, "device_driver": None, "permanent_mac": None}
    observed = {"ens1f0np0": dict(ident), "ens2": {}}
    _nic.mark_shared_paths(host, observed, {"ens1f0np0": {}, "pf0vf0": {}, "ens2": {}, "data0": {}})
    assert observed["ens1f0np0"]["path_unique"] is False and observed["ens2"]["path_unique"] is True
