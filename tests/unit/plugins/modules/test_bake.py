# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""An image bake without a VM: every concern's module in mode persist (the tuning role's
``rdma_mode: bake``) against an image tree with no data NIC, the exact set of files written, nothing
live touched (no /proc write, no command that changes the node), and ``tuning_state rollback``
returning the tree to what it was, byte for byte."""
from __future__ import annotations

import os

from ansible_collections.hpcnet.rdma.plugins.modules import (
    irq_affinity, nic_tuning, rdma_stack, roce_qos, sysctl_tuning, tuning_state)

from ...conftest import FakeModule, FakeNode

J = "/var/lib/hpcnet-rdma"
KVER = "6.1.0-99-amd64"

# What a bake of the lab VM's data NIC asks for (molecule/vm/vars/bake.yml bakes the same into vm2's disk).
CALLS = [
    (sysctl_tuning, {"sysctls": {"net.core.rmem_max": 268435456, "net.core.wmem_max": 268435456,
                                 "net.ipv4.tcp_rmem": "4096 87380 268435456"}}),
    (nic_tuning, {"interfaces": [{"name": "data0", "match": "path", "match_value": "pci-0000:00:10.0",
                                  "mtu": 9000, "rings": {"rx": 1024, "tx": 256}}],
                  "management_connection": "none"}),
    (irq_affinity, {"interfaces": [{"name": "data0"}], "irqbalance": "ban"}),
    (rdma_stack, {"modules": ["ib_umad", "rdma_ucm"], "soft_roce": [{"netdev": "data0", "name": "rxe0"}],
                  "memlock": {"group": "rdma"}, "kernel_release": KVER,
                  "device_access": {"group": "rdma", "mode": "0660", "devices": ["uverbs", "rdma_cm", "umad"]}}),
    (roce_qos, {"interfaces": [{"name": "data0"}], "pfc": [3], "dscp_map": {26: 3}, "tos": 106, "roce_mode": "v2"}),
]


# Everything a bake leaves in the image: what the first boot applies, and nothing else.
BOOT_FILES = {
    "etc/sysctl.d/90-hpcnet-rdma.conf",                                   # sysctls (systemd-sysctl)
    "etc/systemd/network/10-hpcnet-rdma-data0.link",                      # MTU, rings (udev, Path=)
    "etc/hpcnet-rdma/irq-policy.json",                                    # IRQ pinning: the policy,
    "usr/local/lib/hpcnet-rdma/hpcnet_irq.py",                            # the applier
    "etc/systemd/system/hpcnet-rdma-irq.service",                         # and its unit, enabled
    "etc/systemd/system/multi-user.target.wants/hpcnet-rdma-irq.service",
    "etc/default/irqbalance",                                             # irqbalance banned from them
    "usr/local/lib/hpcnet-rdma/irqbalance-policy",
    "etc/hpcnet-rdma/irqbalance-banned",
    "etc/modules-load.d/hpcnet-rdma.conf",                                # RDMA modules
    "etc/systemd/system/hpcnet-rdma-rxe.service",                         # soft-RoCE rxe0 on data0
    "etc/systemd/system/multi-user.target.wants/hpcnet-rdma-rxe.service",
    "etc/security/limits.d/90-hpcnet-rdma.conf",                          # memlock
    "etc/udev/rules.d/92-hpcnet-rdma-access.rules",                       # /dev/infiniband access
    "usr/local/lib/hpcnet-rdma/roce-qos.sh",                              # RoCE QoS: the boot applier
    "etc/systemd/system/hpcnet-rdma-qos.service",                         # that finds data0 at boot,
    "etc/systemd/system/multi-user.target.wants/hpcnet-rdma-qos.service",  # and its unit, enabled
}


def image(root: str) -> FakeNode:
    """A minimal image tree: the kernel's module tree, an empty /etc - and no NIC, no /proc, no /sys."""
    node = FakeNode(root)
    os.makedirs(root)
    base = "/lib/modules/%s/" % KVER
    mods = ("ib_core", "ib_uverbs", "ib_umad", "rdma_cm", "rdma_ucm", "rdma_rxe")
    node.write(base + "modules.dep", "".join("kernel/drivers/infiniband/%s.ko:\n" % m for m in mods))
    node.write(base + "modules.builtin", "")
    node.write("/etc/hostname", "image\n")
    node.write("/etc/group", "root:x:0:\nrdma:x:998:\n")
    node.write("/usr/sbin/irqbalance", "", 0o755)            # installed, not running (no systemd in a chroot)
    node.write("/etc/default/irqbalance", "#IRQBALANCE_BANNED_CPULIST=\n")
    return node


def run(node: FakeNode, module, params, check=False):
    params = dict(params, mode="persist", journal_dir=node.path(J), journal_run="bake-1")
    return module.run(FakeModule(module.ARGUMENT_SPEC, params, check_mode=check), node.host())


def tree(node: FakeNode):
    return dict((os.path.relpath(p, node.root), v) for p, v in node.snapshot()["files"].items()
                if J.lstrip("/") not in p)   # the journal (its directory is under the root as given)


def test_bake_without_a_data_nic_writes_only_boot_files_and_rolls_back_exactly(tmp_path):
    node = image(str(tmp_path / "image"))
    pristine = tree(node)
    results = []
    for module, params in CALLS:
        before = tree(node)
        predicted = run(node, module, params, check=True)
        assert tree(node) == before                        # check mode writes nothing
        out = run(node, module, params)
        assert out["changed"], module.__name__
        assert [c["key"] for c in out["changes"]] == [c["key"] for c in predicted["changes"]]
        results.append(out)
    now = tree(node)
    written = sorted(p for p in now if pristine.get(p) != now[p])
    assert not [p for p in written if p.startswith(("proc/", "sys/", "run/"))]
    assert [p for p in written if not p.startswith(("etc/", "usr/"))] == []
    # nothing live: the only commands are reads (ip -j link/addr for the NIC selection)
    assert [c for c in node.calls if c[:2] != ["ip", "-j"] and c[0] != "getent"] == [], node.calls
    link = node.read("/etc/systemd/network/10-hpcnet-rdma-data0.link")
    assert link.split("[Match]\n", 1)[1] == ("Path=pci-0000:00:10.0\n\n[Link]\nName=data0\nMTUBytes=9000\n"
                                             "RxBufferSize=1024\nTxBufferSize=256\n")
    assert "net.core.rmem_max = 268435456" in node.read("/etc/sysctl.d/90-hpcnet-rdma.conf")
    qos = node.read("/usr/local/lib/hpcnet-rdma/roce-qos.sh")       # data0 and rxe0 are found at boot
    assert "\nselect_nics name data0\nfor nic in $nics; do\n    qos_nic \"$nic\"\ndone\n" in qos
    assert "put \"rdmacm:$dev:$p:tos\" 106 " in qos
    assert written == sorted(BOOT_FILES)
    rollback = {"action": "rollback", "scope": "all", "journal_dir": node.path(J)}
    state = tuning_state.run(FakeModule(tuning_state.ARGUMENT_SPEC, rollback), node.host())
    assert state["changed"]
    assert tree(node) == pristine
