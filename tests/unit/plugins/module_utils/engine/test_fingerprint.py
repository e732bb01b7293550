# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The node fingerprint's RDMA section: which devices, ports and netdevs - stable while the kernel
fills a new soft-RoCE link's GID table, different when a device or its netdev changes."""
from __future__ import annotations

import os

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _fingerprint

IB = "/sys/class/infiniband"


def rxe(node, name="rxe0", netdev="data0", gids=True):
    node.write("%s/%s/parent" % (IB, name), netdev + "\n")
    os.makedirs(node.root + "%s/%s/ports/1/gid_attrs/ndevs" % (IB, name), exist_ok=True)
    if gids:
        node.write("%s/%s/ports/1/gid_attrs/ndevs/0" % (IB, name), netdev + "\n")


def hca(node, name="mlx5_0", netdev="ens1f0np0"):
    os.makedirs(node.root + "%s/%s/device/net/%s" % (IB, name, netdev), exist_ok=True)
    os.makedirs(node.root + "%s/%s/ports/1" % (IB, name), exist_ok=True)


def test_soft_roce_before_and_after_its_gid_table_is_filled(node):
    rxe(node, gids=False)                    # right after `rdma link add`: no GID yet
    before = _fingerprint.fingerprint(node.host())["rdma"]
    rxe(node, gids=True)
    assert _fingerprint.fingerprint(node.host())["rdma"] == before
    assert _fingerprint.rdma(node.host()) == {"rxe0": {"ports": ["1"], "netdevs": ["data0"]}}


def test_an_hca_names_its_netdevs_from_device_net(node):
    hca(node)
    assert _fingerprint.rdma(node.host()) == {"mlx5_0": {"ports": ["1"], "netdevs": ["ens1f0np0"]}}


def test_a_new_device_or_another_netdev_changes_it(node):
    rxe(node)
    first = _fingerprint.fingerprint(node.host())
    rxe(node, netdev="data1")
    second = _fingerprint.fingerprint(node.host())
    assert _fingerprint.differences(first, second) == ["rdma"]
    hca(node)
    assert _fingerprint.differences(second, _fingerprint.fingerprint(node.host())) == ["rdma"]
