# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/node/_kmodfiles.py: modules.dep, modules.builtin and modules.softdep parsers
against files captured on Debian 12 (tests/unit/fixtures/README.md), and the module closure
_rdma computes from them."""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _kmodfiles
from ansible_collections.hpcnet.rdma.plugins.module_utils.stack import _domain as _rdma

from ....conftest import fixture


# ---------------------------------------------------------------- kernel module metadata (captured, Debian 6.1)
def test_modules_dep_captured_and_closure():
    dep = _kmodfiles.parse_modules_dep(fixture("modules.dep.6.1.0-57-amd64.captured.txt"))
    assert dep["rdma_rxe"] == ["ib_uverbs", "ib_core", "ip6_udp_tunnel", "udp_tunnel"]
    assert dep["ib_core"] == []
    tree = {"dep": dep, "builtin": set(_kmodfiles.parse_modules_builtin(fixture("modules.builtin.6.1.0-57-amd64.captured-head.txt"))),
            "softdep": _kmodfiles.parse_modules_softdep(fixture("modules.softdep.6.1.0-57-amd64.captured.txt"))}
    assert "unix" in tree["builtin"] and "ib_core" not in tree["builtin"]
    order = _rdma.closure(tree, ["ib_umad", "rdma_ucm"])
    assert order[0] == "ib_core" and order[-1] == "rdma_ucm"
    assert set(order) == {"ib_core", "ib_umad", "configfs", "ib_cm", "iw_cm", "rdma_cm", "ib_uverbs", "rdma_ucm"}
    for name in order:
        assert all(order.index(d) < order.index(name) for d in dep[name])
    assert _rdma.unknown_modules(tree, ["ib_umad", "unix", "rdma_rxee"]) == ["rdma_rxee"]


def test_softdep_and_module_names():
    soft = _kmodfiles.parse_modules_softdep("# comment\nsoftdep mlx4_core post: mlx4_en\nsoftdep ext4 pre: crc32c-intel\n")
    assert soft == {"mlx4_core": {"pre": [], "post": ["mlx4_en"]}, "ext4": {"pre": ["crc32c_intel"], "post": []}}
    assert _kmodfiles.kmod_name("kernel/drivers/infiniband/core/ib_core.ko.zst") == "ib_core"
    assert _kmodfiles.kmod_name("ib-umad") == "ib_umad"
    tree = {"dep": {"mlx4_core": [], "mlx4_en": ["mlx4_core"], "mlx4_ib": ["mlx4_core"]}, "builtin": set(),
            "softdep": soft}
    assert _rdma.closure(tree, ["mlx4_ib"]) == ["mlx4_core", "mlx4_en", "mlx4_ib"]
