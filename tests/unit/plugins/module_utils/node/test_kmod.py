# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/node/_kmod.py: the modprobe and rmmod argv tables, through the runner."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _kmod
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError

from ....conftest import host_answering


@pytest.mark.parametrize("tool, action, values, argv", [
    (_kmod.MODPROBE, "load", {"name": "rdma_rxe"}, ["modprobe", "rdma_rxe"]),
    (_kmod.RMMOD, "unload", {"name": "rdma_rxe"}, ["rmmod", "rdma_rxe"]),
])
def test_argv_table(tool, action, values, argv):
    assert tool.argv(action, **values) == argv


@pytest.mark.parametrize("tool, action, err, message", [
    (_kmod.MODPROBE, "load", "modprobe: FATAL: Module nope not found in directory /lib/modules/6.1.0-28-amd64\n",
     "modprobe nope failed (rc=1): modprobe: FATAL: Module nope not found in directory /lib/modules/6.1.0-28-amd64"),
    (_kmod.RMMOD, "unload", "rmmod: ERROR: Module nope is not currently loaded\n",
     "rmmod nope failed (rc=1): rmmod: ERROR: Module nope is not currently loaded"),
])
def test_failure_names_tool_and_argv(tmp_path, tool, action, err, message):
    host, rec = host_answering(tmp_path, 1, "", err)
    with pytest.raises(HostError) as e:
        tool.call(host, action, name="nope")
    assert str(e.value) == message
    assert rec.calls == [["/usr/sbin/" + tool.name, "nope"]]
