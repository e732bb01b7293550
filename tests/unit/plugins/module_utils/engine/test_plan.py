# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Change, Plan, render_diff, render_value


@pytest.mark.parametrize("before, after, added", [
    ("1", "2", True),
    ("1", "1", False),
    (None, {"content": "x", "mode": "0644"}, True),
    ({"content": "x", "mode": "0644"}, {"content": "x", "mode": "0644"}, False),
    ({"content": "x", "mode": "0644"}, {"content": "x", "mode": "0600"}, True),
    (True, False, True),
])
def test_plan_adds_only_differences(before, after, added):
    p = Plan()
    assert p.add("k:x", before, after) is added
    assert len(p) == (1 if added else 0)
    assert bool(p) is added


def test_plan_refuses_a_key_twice():
    p = Plan()
    p.add("sysctl:a", "1", "2")
    with pytest.raises(ValueError, match="sysctl:a planned twice"):
        p.add("sysctl:a", "2", "3")


def test_change_parts_and_reverse():
    c = Change("nic:eth0:ring.rx", 512, 4096)
    assert (c.domain, c.target) == ("nic", "eth0:ring.rx")
    assert c.reverse() == Change("nic:eth0:ring.rx", 4096, 512)


@pytest.mark.parametrize("value, text", [(None, "(absent)"), (True, "on"), (False, "off"), (9000, "9000"),
                                         ("4096 87380 6291456", "4096 87380 6291456"), ([1, 2], "[1, 2]")])
def test_render_value(value, text):
    assert render_value(value) == text


def test_render_diff_has_runtime_block_first_and_one_entry_per_file():
    p = Plan()
    p.add("file:/etc/sysctl.d/90-hpcnet-rdma.conf", None, {"content": "a = 1\n", "mode": "0644"})
    p.add("sysctl:net.ipv4.tcp_sack", "1", "0")
    p.add("nic:eth0:mtu", 1500, 9000)
    p.add("file:/etc/old.conf", {"content": "old\n", "mode": "0644"}, None)
    d = render_diff(p)
    assert d[0] == {"before_header": "runtime (before)", "after_header": "runtime (after)",
                    "before": "net.ipv4.tcp_sack = 1\neth0:mtu = 1500\n",
                    "after": "net.ipv4.tcp_sack = 0\neth0:mtu = 9000\n"}
    assert d[1] == {"before_header": "/etc/sysctl.d/90-hpcnet-rdma.conf (absent)",
                    "after_header": "/etc/sysctl.d/90-hpcnet-rdma.conf", "before": "", "after": "a = 1\n"}
    assert d[2]["after_header"] == "/etc/old.conf (absent)" and d[2]["before"] == "old\n" and d[2]["after"] == ""
    assert render_diff(Plan()) == []
