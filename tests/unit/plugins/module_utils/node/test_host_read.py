# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Host.read reads with os.open/os.read (the health check reads a node file by file) and gives what
open()'s text mode gave: universal newlines, undecodable bytes kept as surrogates, None for a missing
file, HostError naming the path for anything else."""
from __future__ import annotations

import os

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host


@pytest.mark.parametrize("data", [
    b"", b"4: ACTIVE\n", b"a\r\nb\rc\n", b"fe80:0000:0000:0000:5054:00ff:fea1:0001\n", b"\xff\xfe bad utf-8\n",
    b"x" * 200000,                                       # more than one os.read
])
def test_read_gives_what_text_mode_open_gave(tmp_path, data):
    (tmp_path / "f").write_bytes(data)
    with open(str(tmp_path / "f"), "r", encoding="utf-8", errors="surrogateescape") as f:
        expected = f.read()
    assert Host(root=str(tmp_path)).read("/f") == expected


def test_a_missing_file_is_none_and_a_directory_is_an_error_naming_it(tmp_path):
    host = Host(root=str(tmp_path))
    assert host.read("/missing") is None
    (tmp_path / "d").mkdir()
    with pytest.raises(HostError, match="cannot read /d: Is a directory"):
        host.read("/d")


def test_no_descriptor_is_left_open(tmp_path):
    (tmp_path / "f").write_text("1\n")
    host = Host(root=str(tmp_path))
    before = len(os.listdir("/proc/self/fd"))
    for _attempt in range(50):
        host.read("/f")
        with pytest.raises(HostError):
            host.read("/")
    assert len(os.listdir("/proc/self/fd")) == before
