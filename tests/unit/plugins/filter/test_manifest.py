# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""hpcnet.rdma.fleet_manifest: verify_info results of a group -> the majority per attribute, odd hosts named."""
from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.hpcnet.rdma.plugins.filter.manifest import fleet_manifest


def info(mtu, kernel="6.1.0-28-amd64", fw="28.39.1002"):
    return {"fabric": {"devices": {"mlx5_0": {"driver": "mlx5_core", "fw_ver": fw, "ports": {}}},
                       "netdevs": {"ens1f0np0": {"mtu": mtu, "driver": "mlx5_core"}}},
            "data_interfaces": ["ens1f0np0"], "kernel": kernel, "rdma_core": {"version": "44.0-2"}}


def test_the_majority_with_the_odd_hosts_named_and_failed_hosts_not_voting():
    results = {"a": info(9000), "b": info(9000), "c": info(1500, fw="28.38.1000"), "d": {"failed": True, "msg": "x"}}
    m = fleet_manifest(results, ["a", "b", "c", "d"])
    assert m["hosts"] == ["a", "b", "c"]
    assert m["items"]["mtu"] == {"value": 9000, "hosts": 2, "of": 3, "tie": False, "odd": {"c": 1500}}
    assert m["items"]["firmware"]["odd"] == {"c": "28.38.1000"}
    assert m["items"]["rdma_devices"]["value"] == ["mlx5_0"] and m["items"]["rdma_core"]["value"] == "44.0-2"


def test_not_a_mapping_is_a_clear_error():
    with pytest.raises(AnsibleFilterError, match="host -> verify_info result"):
        fleet_manifest(["a"])
