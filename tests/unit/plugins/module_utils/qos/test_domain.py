# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/qos/_domain.py: the value forms the dcb and rdmacm domains compare."""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _domain as _qos


def test_domain_value_forms():
    assert _qos._from_list([]) is None
    assert _qos._from_list([3]) == 3
    assert _qos._from_list([5, 3, 5]) == [3, 5]
    assert _qos.DCB.same([3], 3) and _qos.DCB.same(None, []) and not _qos.DCB.same(3, [3, 5])
    assert _qos.DCB.same("dscp  pcp", "dscp pcp")
    assert _qos.RDMACM.same(106, "106\n") and not _qos.RDMACM.same(None, 0)
    assert _qos.ecn_path("eth9", "roce_rp.3") == "/sys/class/net/eth9/ecn/roce_rp/enable/3"
    assert _qos.ecn_path("eth9", "cnp_dscp") == "/sys/class/net/eth9/ecn/roce_np/cnp_dscp"
