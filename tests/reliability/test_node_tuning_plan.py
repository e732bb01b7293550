# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""node_tuning is all-or-nothing for the node (issue 26), as real module runs (AnsibleModule,
fail_json) on a fake root: a bad value in a later step changes nothing - not even the good sysctl step
before it, nor a journal directory or lock - and a later step the node refuses while applying reverts
the sysctl step the call applied before it."""
from __future__ import annotations

import os

from rlib import SYSCTLS, clone, forked, journal_entries, snapshot

MISSING = "hpcnet-nosuch0"   # an interface no host has: nic_tuning reads the host's links (ip -j link), writes nothing


def _sysctl_step() -> dict:
    # mode both: the sysctl.d file is written too (and must be gone again)
    return {"name": "sysctl", "module": "sysctl_tuning", "args": {"sysctls": SYSCTLS, "context": "host"}}


def test_an_unknown_interface_in_the_nic_step_changes_nothing_not_even_the_sysctl_step(pristine, work):
    assert os.geteuid() == 0, "the reliability tier runs as root"
    node = clone(pristine, os.path.join(work, "node"))
    before = snapshot(node, skip=())
    steps = [_sysctl_step(),
             {"name": "nic", "module": "nic_tuning",
              "args": {"interfaces": [{"name": MISSING, "mtu": 9000}], "management_connection": "none"}}]
    status, (result,) = forked(node, [{"module": "node_tuning", "params": {"steps": steps}}], os.path.join(work, "out.json"))
    assert status == 0 and result["rc"] == 1 and result["failed"], result
    assert result["msg"].startswith("nothing was changed: steps[1] nic (hpcnet.rdma.nic_tuning): interfaces[0].name: "
                                    "unknown interface %r; present: " % MISSING), result["msg"]
    assert result["changed"] is False and result["failed_step"]["index"] == 1
    assert snapshot(node, skip=()) == before      # no sysctl, no sysctl.d file, no journal directory or lock
    assert journal_entries(node) == []


def test_a_later_step_the_kernel_refuses_reverts_the_sysctl_step(pristine, work):
    node = clone(pristine, os.path.join(work, "node"))
    with open(os.path.join(node, "proc/sys/vm/dirty_ratio"), "w", encoding="utf-8") as f:
        f.write("20\n")
    before = snapshot(node, skip=())
    steps = [_sysctl_step(),
             {"name": "vm", "module": "sysctl_tuning",
              "args": {"sysctls": {"vm.dirty_ratio": 5}, "mode": "runtime", "context": "host"}}]
    status, (result,) = forked(node, [{"module": "node_tuning", "params": {"steps": steps}}],
                               os.path.join(work, "out.json"), refuse=["/proc/sys/vm/dirty_ratio"])
    assert status == 0 and result["rc"] == 1 and result["failed"], result
    msg = result["msg"]
    assert msg.startswith("steps[1] vm (hpcnet.rdma.sysctl_tuning): sysctl_tuning failed and changed nothing: "), msg
    assert "so the earlier steps of this call were reverted: steps[0] sysctl (" in msg, msg
    assert msg.endswith("- the node is as the call found it"), msg
    assert result["changed"] is False and result["still_applied"] == []
    # the sysctls at their originals, the sysctl.d file as it was, and no journal directory or lock
    assert snapshot(node, skip=()) == before
    assert journal_entries(node) == []
