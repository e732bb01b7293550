# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/node/_getent.py: the getent argv table and the group-entry parser."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _getent
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError

from ....conftest import host_answering


def test_argv_table():
    assert _getent.GETENT.argv("group", name="rdma") == ["getent", "group", "rdma"]


@pytest.mark.parametrize("text, gid", [
    ("rdma:x:997:alice,bob\n", 997),
    ("rdma:x:997:\nrdma:x:1001:\n", 997),      # NSS may answer from two sources: the first wins
    ("", None),
    ("rdma:x::\n", None),                       # no numeric gid
    ("rdma\n", None),
])
def test_parse_group_gid(text, gid):
    assert _getent.parse_group_gid(text) == gid


def test_call_parses_and_failure_names_argv(tmp_path):
    host, rec = host_answering(tmp_path, 0, "rdma:x:997:\n")
    assert _getent.GETENT.call(host, "group", name="rdma") == 997
    assert rec.calls == [["/usr/sbin/getent", "group", "rdma"]]
    host, _rec = host_answering(tmp_path, 2, "", "")
    with pytest.raises(HostError, match=r"^getent group nope failed \(rc=2\): $"):
        _getent.GETENT.call(host, "group", name="nope")
