# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""IRQ affinity: cpulists, /proc/interrupts, sysfs discovery, policies, the module and the boot applier."""
from __future__ import annotations

import json
import os

import pytest
import yaml

from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _applier
from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _module as _irqmodule
from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _domain as _irq
from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _plan as _irqplan
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.modules import irq_affinity, tuning_state

from ....conftest import Failed, FakeModule, fixture

TWO_NUMA = fixture("interrupts.mlx5_ice.2numa.txt")
VIRTIO = fixture("interrupts.virtio_net.captured.txt")


@pytest.mark.parametrize("text, cpus", [
    ("0-3,8,10-11", [0, 1, 2, 3, 8, 10, 11]), ("5", [5]), ("", []), (" 0-1 ", [0, 1]),
    ("0-15:4", [0, 4, 8, 12]), ("3,1,1", [1, 3]),
])
def test_parse_cpulist(text, cpus):
    assert _irq.parse_cpulist(text) == cpus


@pytest.mark.parametrize("text", ["a", "1-", "3-1", "0-3,,5", "-1", "0x3", "1 2"])
def test_malformed_cpulist(text):
    with pytest.raises(ValueError, match="reserved_cpus: .* (is not a cpulist|is empty)"):
        _irq.parse_cpulist(text, "reserved_cpus")


@pytest.mark.parametrize("cpus, text", [([0, 1, 2, 3, 8, 10, 11], "0-3,8,10-11"), ([7], "7"), ([], ""), ([2, 0, 1], "0-2")])
def test_format_cpulist(cpus, text):
    assert _irq.format_cpulist(cpus) == text


@pytest.mark.parametrize("mask, cpus", [("3", [0, 1]), ("00000000,0000ff00", list(range(8, 16))), ("0", []), ("80000000,00000000", [63])])
def test_mask_to_cpus(mask, cpus):
    assert _irq.mask_to_cpus(mask) == cpus


def test_parse_interrupts_recorded():
    virtio = _irq.parse_interrupts(VIRTIO)
    assert virtio[38]["name"] == "virtio2-input.0" and len(virtio[38]["counts"]) == 2
    assert virtio[37]["name"] == "virtio2-config"
    two = _irq.parse_interrupts(TWO_NUMA)
    assert two[121]["name"] == "mlx5_comp0@pci:0000:3b:00.0" and len(two[121]["counts"]) == 16
    assert two[208]["name"] == "ice-ens2f0-TxRx-7"
    assert "NMI" not in str(list(two))


@pytest.mark.parametrize("name, queue", [
    ("mlx5_comp3@pci:0000:3b:00.0", True), ("mlx5_async0@pci:0000:3b:00.0", False), ("ice-ens2f0-TxRx-5", True),
    ("ice-0000:5e:00.0:misc", False), ("virtio1-input.0", True), ("virtio1-output.3", True),
    ("virtio1-config", False), ("eth0-rx-0", True), ("bnxt_en-TxRx-2", True), ("ttyS0", False),
])
def test_queue_irqs(name, queue):
    assert _irq.is_queue_irq(name) is queue


class Tree(object):
    """A fake node: /proc/interrupts, /proc/irq/N and the NIC's sysfs (msi_irqs, numa_node, local_cpulist)."""

    def __init__(self, node, interrupts, online):
        self.node = node
        node.write("/proc/interrupts", interrupts)
        node.write("/sys/devices/system/cpu/online", online + "\n")
        for irq, info in _irq.parse_interrupts(interrupts).items():
            node.write("/proc/irq/%d/smp_affinity_list" % irq, online + "\n")
            node.write("/proc/irq/%d/effective_affinity_list" % irq, online.split("-")[0] + "\n")
            node.write("/proc/irq/%d/affinity_hint" % irq, "0\n")

    def nic(self, ifname, pci, irqs, numa, local, parent=False):
        dev = "/sys/devices/pci0000:00/%s" % pci
        for irq in irqs:
            self.node.write("%s/msi_irqs/%d" % (dev, irq), "msix\n")
        self.node.write(dev + "/numa_node", "%d\n" % numa)
        self.node.write(dev + "/local_cpulist", local + "\n")
        target = dev + ("/virtio2" if parent else "")
        os.makedirs(self.node.path(target), exist_ok=True)
        os.makedirs(self.node.path("/sys/class/net/%s" % ifname), exist_ok=True)
        os.symlink(self.node.path(target), self.node.path("/sys/class/net/%s/device" % ifname))


@pytest.fixture
def two_numa(node):
    t = Tree(node, TWO_NUMA, "0-15")
    t.nic("ens1f0np0", "0000:3b:00.0", range(120, 137), 1, "8-15")
    t.nic("ens2f0", "0000:5e:00.0", range(200, 209), 0, "0-7")
    os.makedirs(node.path("/sys/class/net/veth0"))
    return node


@pytest.fixture
def virtio(node):
    t = Tree(node, VIRTIO, "0-1")
    t.nic("eth0", "0000:00:03.0", [37, 38, 39], -1, "0-1", parent=True)
    node.write("/proc/irq/38/affinity_hint", "3\n")
    node.write("/proc/irq/39/affinity_hint", "3\n")
    return node


def test_discovery_two_numa(two_numa):
    interrupts = _irq.parse_interrupts(TWO_NUMA)
    mlx = _irq.nic_irqs(two_numa.host(), "ens1f0np0", interrupts)
    assert [i["irq"] for i in mlx["irqs"]] == list(range(121, 137))    # async vector 120 left alone
    assert (mlx["numa_node"], mlx["local_cpus"]) == (1, list(range(8, 16)))
    ice = _irq.nic_irqs(two_numa.host(), "ens2f0", interrupts)
    assert [i["name"] for i in ice["irqs"]][:2] == ["ice-ens2f0-TxRx-0", "ice-ens2f0-TxRx-1"]
    assert len(ice["irqs"]) == 8 and ice["numa_node"] == 0


def test_discovery_virtio_uses_the_parent_pci_device(virtio):
    nic = _irq.nic_irqs(virtio.host(), "eth0", _irq.parse_interrupts(VIRTIO))
    assert [i["name"] for i in nic["irqs"]] == ["virtio2-input.0", "virtio2-output.0"]
    assert nic["local_cpus"] == [0, 1]


def _assign(node, ifname, **policy):
    planned = _applier.plan_all(node.host(), [dict(policy, interface=ifname)])
    return planned[ifname]["assign"]


MLX = "mlx5_comp%d@pci:0000:3b:00.0"


@pytest.mark.parametrize("ifname, policy, expected", [
    ("ens1f0np0", {"policy": "spread-local"}, dict((MLX % q, str(8 + q % 8)) for q in range(16))),
    ("ens1f0np0", {"policy": "spread-local", "reserved_cpus": "8-9"},
     dict((MLX % q, str(10 + q % 6)) for q in range(16))),
    ("ens2f0", {"policy": "spread-local", "reserved_cpus": "0"},
     dict(("ice-ens2f0-TxRx-%d" % q, str(1 + q % 7)) for q in range(8))),
    ("ens2f0", {"policy": "single"}, dict(("ice-ens2f0-TxRx-%d" % q, "0") for q in range(8))),
    ("ens2f0", {"policy": "single", "cpu": 12}, dict(("ice-ens2f0-TxRx-%d" % q, "12") for q in range(8))),
    ("ens2f0", {"policy": "explicit", "explicit": {"*-TxRx-[0-3]": "2-3", "*-TxRx-*": "4,6"}},
     dict(("ice-ens2f0-TxRx-%d" % q, "2-3" if q < 4 else "4,6") for q in range(8))),
])
def test_policies(two_numa, ifname, policy, expected):
    assert _assign(two_numa, ifname, **policy) == expected


def test_hint_policy(virtio):
    assert _assign(virtio, "eth0", policy="hint") == {"virtio2-input.0": "0-1", "virtio2-output.0": "0-1"}


@pytest.mark.parametrize("ifname, policy, message", [
    ("ens1f0np0", {"reserved_cpus": "8,31"}, r"reserved_cpus: CPU 31 is not online \(online: 0-15\)"),
    ("ens1f0np0", {"reserved_cpus": "8-x"}, "reserved_cpus: '8-x' is not a cpulist"),
    ("ens1f0np0", {"reserved_cpus": "8-15"}, "leaves no CPU local to ens1f0np0 \\(NUMA node 1: 8-15\\)"),
    ("ens2f0", {"policy": "explicit", "explicit": {"mlx5_*": "1"}}, "pattern 'mlx5_\\*' matches no queue IRQ of ens2f0"),
    ("ens2f0", {"policy": "explicit", "explicit": {"*": "14-17"}}, "has CPUs that are not online \\(16-17\\)"),
    ("ens2f0", {"policy": "single", "cpu": 99}, "cpu: CPU 99 is not online"),
    ("ens2f0", {"policy": "hint"}, "gives no affinity_hint for ice-ens2f0-TxRx-0"),
    ("veth0", {}, "veth0 has no MSI/MSI-X interrupts"),
    ("ib0", {}, "unknown interface 'ib0'"),
])
def test_bad_policies(two_numa, ifname, policy, message):
    with pytest.raises(ValueError, match=message):
        _assign(two_numa, ifname, **policy)


# ---------------------------------------------------------------- the module on a fake node
def irq(node, check=False, **params):
    params.setdefault("interfaces", [{"name": "ens1f0np0"}, {"name": "ens2f0", "policy": "single"}])
    return irq_affinity.run(FakeModule(irq_affinity.ARGUMENT_SPEC, params, check_mode=check), node.host())


def rollback(node, check=False):
    return tuning_state.run(FakeModule(tuning_state.ARGUMENT_SPEC, {"action": "rollback"}, check_mode=check), node.host())


@pytest.fixture
def with_irqbalance(two_numa):
    two_numa.write("/usr/sbin/irqbalance", "", 0o755)
    two_numa.write("/etc/default/irqbalance", "# irqbalance defaults\n#IRQBALANCE_ONESHOT=\nIRQBALANCE_ARGS=\"--hintpolicy=ignore\"\n")
    return two_numa


def test_check_apply_idempotent_rollback_exact(with_irqbalance):
    node = with_irqbalance
    pristine = node.snapshot()
    predicted = irq(node, check=True)
    assert node.snapshot() == pristine
    real = irq(node)
    assert real["changes"] == predicted["changes"]
    assert node.read("/proc/irq/121/smp_affinity_list") == "8"
    assert node.read("/proc/irq/136/smp_affinity_list") == "15"
    assert node.read("/proc/irq/201/smp_affinity_list") == "0"
    assert real["irqs"]["ens1f0np0"]["assignments"][MLX % 0] == {"irq": 121, "cpus": "8", "effective": "0"}
    defaults = node.read("/etc/default/irqbalance")
    assert 'IRQBALANCE_ARGS="--hintpolicy=ignore --policyscript=/usr/local/lib/hpcnet-rdma/irqbalance-policy"' in defaults
    assert "#IRQBALANCE_ONESHOT=\n" in defaults
    banned = node.read(_irqplan.BANNED_FILE).split()
    assert len(banned) == 24 and MLX % 5 in banned and "mlx5_async0@pci:0000:3b:00.0" not in banned
    # the boot applier is the same planner: _domain.py's text, then _applier.py's
    assert node.read(_irqplan.APPLIER) == _irqmodule.applier_source()
    with open(_irq.__file__, encoding="utf-8") as f:
        assert node.read(_irqplan.APPLIER).startswith(f.read().rstrip("\n"))
    assert os.readlink(node.path(_irqplan.UNIT_LINK)) == _irqplan.UNIT_FILE
    assert "ExecStart=/usr/bin/python3 /usr/local/lib/hpcnet-rdma/hpcnet_irq.py /etc/hpcnet-rdma/irq-policy.json" \
        in node.read(_irqplan.UNIT_FILE)
    assert irq(node)["changed"] is False
    assert rollback(node, check=True)["changed"] is True
    rollback(node)
    jdir = node.path("/var/lib/hpcnet-rdma")
    after = node.snapshot()
    assert dict((k, v) for k, v in after["files"].items() if not k.startswith(jdir)) == pristine["files"]


def test_boot_applier_reapplies_by_name_after_the_numbers_changed(two_numa):
    irq(two_numa, mode="persist", irqbalance="leave")
    assert two_numa.read("/proc/irq/121/smp_affinity_list") == "0-15\n"     # persist: nothing live
    policy = json.loads(two_numa.read(_irqplan.POLICY_FILE))
    assert policy["interfaces"][0] == {"interface": "ens1f0np0", "policy": "spread-local", "reserved_cpus": "",
                                       "cpu": None, "explicit": {}}
    # "reboot": the driver now gets IRQs 300-316 instead of 120-136
    text = two_numa.read("/proc/interrupts").replace(" 120:", " 300:")
    for q in range(16):
        text = text.replace(" %d:" % (121 + q), " %d:" % (301 + q))
    two_numa.write("/proc/interrupts", text)
    pci = "/sys/devices/pci0000:00/0000:3b:00.0/msi_irqs"
    for n in os.listdir(two_numa.path(pci)):
        os.unlink(two_numa.path(pci + "/" + n))
    for n in range(300, 317):
        two_numa.write("%s/%d" % (pci, n), "msix\n")
        two_numa.write("/proc/irq/%d/smp_affinity_list" % n, "0-15\n")
    assert _applier.main(["hpcnet_irq.py", _irqplan.POLICY_FILE], root=two_numa.root) == 0
    assert two_numa.read("/proc/irq/301/smp_affinity_list") == "8"
    assert two_numa.read("/proc/irq/316/smp_affinity_list") == "15"
    assert two_numa.read("/proc/irq/201/smp_affinity_list") == "0"
    # the names it pinned at this boot, for irqbalance's policy script (a baked image has none in
    # its persistent ban list: no NIC was present at bake time)
    interrupts = _irq.parse_interrupts(two_numa.read("/proc/interrupts"))
    pinned = sorted(interrupts[n]["name"] for n in range(301, 317))
    run_banned = two_numa.read(_irq.RUN_BANNED).splitlines()
    assert set(pinned) <= set(run_banned) and run_banned == sorted(run_banned)
    assert set(run_banned) <= set(i["name"] for i in interrupts.values())   # every policy interface's IRQs
    script = _irqplan._POLICY_SH.format(banned=_irqplan.BANNED_FILE, run_banned=_irq.RUN_BANNED)
    assert "cat %s %s" % (_irqplan.BANNED_FILE, _irq.RUN_BANNED) in script


def test_refused_irq_is_a_named_result_not_a_failure(two_numa, monkeypatch):
    host = two_numa.host()
    real = host.write_proc

    def managed(path, value):
        if path == "/proc/irq/125/smp_affinity_list":
            raise HostError("cannot write %r to %s: Input/output error" % (value, path))
        real(path, value)

    monkeypatch.setattr(host, "write_proc", managed)
    params = {"interfaces": [{"name": "ens1f0np0"}], "irqbalance": "leave", "mode": "runtime"}
    out = irq_affinity.run(FakeModule(irq_affinity.ARGUMENT_SPEC, params), host)
    assert [r["key"] for r in out["refused"]] == ["irq:" + MLX % 4]
    assert len(out["changes"]) == 15
    status = tuning_state.run(FakeModule(tuning_state.ARGUMENT_SPEC, {"action": "status"}), two_numa.host())
    assert "irq:" + MLX % 4 not in status["tuned"] and "irq:" + MLX % 5 in status["tuned"]


@pytest.mark.parametrize("params, message", [
    ({"interfaces": [{"name": "ens1f0np0"}], "reserved_cpus": "0,64"}, "CPU 64 is not online"),
    ({"interfaces": [{"name": "ens1f0np0"}], "reserved_cpus": "zero"}, "is not a cpulist"),
    ({"interfaces": [{"name": "ens2f0", "policy": "explicit", "explicit": {"virtio*": "1"}}]}, "matches no queue IRQ"),
    ({"interfaces": [{"name": "veth0"}]}, "veth0 has no MSI/MSI-X interrupts"),
    ({"interfaces": [{"name": "ens2f0", "policy": "sometimes"}]}, "value of policy must be one of"),
])
@pytest.mark.parametrize("check", [False, True])
def test_bad_input_changes_nothing(with_irqbalance, params, message, check):
    before = with_irqbalance.snapshot()
    with pytest.raises(Failed, match=message):
        irq(with_irqbalance, check=check, **params)
    assert with_irqbalance.snapshot() == before


def test_info_reports_irqs_and_distribution(virtio):
    from ansible_collections.hpcnet.rdma.plugins.modules import irq_affinity_info
    out = irq_affinity_info.run(FakeModule(irq_affinity_info.ARGUMENT_SPEC, {}), virtio.host())
    eth0 = out["interfaces"]["eth0"]
    assert [i["name"] for i in eth0["irqs"]] == ["virtio2-input.0", "virtio2-output.0"]
    counts = _irq.parse_interrupts(VIRTIO)
    assert eth0["per_cpu"] == [a + b for a, b in zip(counts[38]["counts"], counts[39]["counts"])]
    assert sum(eth0["per_cpu"]) > 0
    assert eth0["irqs"][0]["hint"] == "3" and out["irqbalance"]["installed"] is False
    with pytest.raises(Failed, match="unknown interface 'nope'"):
        irq_affinity_info.run(FakeModule(irq_affinity_info.ARGUMENT_SPEC, {"interfaces": ["nope"]}), virtio.host())


# ---------------------------------------------------------------- input first, duplicates (issue 16, item 8)
@pytest.mark.parametrize("params, message", [
    ({"interfaces": [{"name": "veth0", "reserved_cpus": "8-x"}]}, r"^reserved_cpus: '8-x' is not a cpulist"),
    ({"interfaces": [{"name": "veth0"}], "reserved_cpus": "1,,2"}, r"^reserved_cpus: '1,,2' is not a cpulist"),
    ({"interfaces": [{"name": "veth0", "policy": "explicit", "explicit": {"*": "3-1"}}]},
     r"^explicit\[\*\]: range '3-1' in '3-1' is empty"),
    ({"interfaces": [{"name": "veth0", "policy": "explicit"}]}, r"^interfaces\[0\].explicit: policy explicit needs"),
    ({"interfaces": [{"name": "veth0", "policy": "single", "cpu": -1}]}, r"^interfaces\[0\].cpu: -1 is not a CPU"),
])
@pytest.mark.parametrize("mode", ["both", "persist"])
def test_bad_cpulist_is_named_even_on_a_nic_without_msix(with_irqbalance, params, message, mode):
    """veth0 has no MSI-X: the syntax error is what the user must hear, not the capability."""
    before = with_irqbalance.snapshot()
    for check in (True, False):
        with pytest.raises(Failed, match=message):
            irq(with_irqbalance, check=check, mode=mode, **params)
    assert with_irqbalance.snapshot() == before


def test_the_same_interface_twice_with_different_settings_names_both_entries(with_irqbalance):
    before = with_irqbalance.snapshot()
    interfaces = [{"name": "ens2f0"}, {"name": "ens1f0np0"}, {"name": "ens2f0", "policy": "single"}]
    with pytest.raises(Failed, match=r"^interfaces\[0\] and interfaces\[2\] both select ens2f0 with different "
                                     r"settings \(policy spread-local / single\); allowed: each interface once$"):
        irq(with_irqbalance, interfaces=interfaces)
    assert with_irqbalance.snapshot() == before


def test_the_same_interface_twice_with_the_same_settings_is_planned_once(with_irqbalance):
    once = irq(with_irqbalance, check=True, interfaces=[{"name": "ens2f0", "policy": "single"}])
    twice = irq(with_irqbalance, check=True, interfaces=[{"name": "ens2f0", "policy": "single"},
                                                         {"name": "ens2f0", "policy": "single"}])
    assert twice["changes"] == once["changes"]


# ---------------------------------------------------------------- irqbalance: merged ban list, RHEL file (item 7)
def test_a_second_call_merges_its_ban_list_and_boot_policy_with_the_first(with_irqbalance):
    node = with_irqbalance
    pristine = node.snapshot()
    irq(node, interfaces=[{"name": "ens1f0np0"}])
    first = node.read(_irqplan.BANNED_FILE).split()
    assert len(first) == 16 and MLX % 0 in first
    irq(node, interfaces=[{"name": "ens2f0", "policy": "single"}])
    banned = node.read(_irqplan.BANNED_FILE).split()
    assert set(first) <= set(banned) and "ice-ens2f0-TxRx-0" in banned and len(banned) == 24
    assert banned == sorted(banned)
    policy = json.loads(node.read(_irqplan.POLICY_FILE))["interfaces"]
    assert [(e["interface"], e["policy"]) for e in policy] == [("ens1f0np0", "spread-local"), ("ens2f0", "single")]
    # the first interface again, with another policy: its entry is replaced in place, nothing is dropped
    irq(node, interfaces=[{"name": "ens1f0np0", "policy": "single"}])
    policy = json.loads(node.read(_irqplan.POLICY_FILE))["interfaces"]
    assert [(e["interface"], e["policy"]) for e in policy] == [("ens1f0np0", "single"), ("ens2f0", "single")]
    assert node.read(_irqplan.BANNED_FILE).split() == banned
    assert irq(node, interfaces=[{"name": "ens2f0", "policy": "single"}])["changed"] is False
    rollback(node)
    jdir = node.path("/var/lib/hpcnet-rdma")
    assert dict((k, v) for k, v in node.snapshot()["files"].items() if not k.startswith(jdir)) == pristine["files"]


@pytest.fixture
def rhel_irqbalance(two_numa):
    two_numa.write("/usr/sbin/irqbalance", "", 0o755)
    two_numa.write("/etc/os-release", 'NAME="Rocky Linux"\nID="rocky"\nID_LIKE="rhel centos fedora"\n')
    two_numa.write("/usr/lib/systemd/system/irqbalance.service",
                   "[Service]\nEnvironmentFile=/etc/sysconfig/irqbalance\n"
                   "ExecStart=/usr/sbin/irqbalance --foreground $IRQBALANCE_ARGS\n")
    two_numa.write("/etc/sysconfig/irqbalance", "# irqbalance is a daemon process...\n#IRQBALANCE_BANNED_CPULIST=\n"
                   "IRQBALANCE_ARGS=\n", 0o644)
    return two_numa


def test_rhel_family_gets_the_ban_in_etc_sysconfig(rhel_irqbalance):
    node = rhel_irqbalance
    pristine = node.snapshot()
    out = irq(node, interfaces=[{"name": "ens2f0"}])
    assert "file:/etc/sysconfig/irqbalance" in [c["key"] for c in out["changes"]]
    text = node.read("/etc/sysconfig/irqbalance")
    assert 'IRQBALANCE_ARGS="--policyscript=/usr/local/lib/hpcnet-rdma/irqbalance-policy"\n' in text
    assert "#IRQBALANCE_BANNED_CPULIST=\n" in text
    assert not os.path.exists(node.path("/etc/default/irqbalance"))
    rollback(node)
    jdir = node.path("/var/lib/hpcnet-rdma")
    assert dict((k, v) for k, v in node.snapshot()["files"].items() if not k.startswith(jdir)) == pristine["files"]


# Debian 12's irqbalance 1.9.2-1 unit, as shipped: upstream's defaults.env first, then Debian's file
DEB_UNIT = ("[Service]\nEnvironmentFile=-/usr/lib/irqbalance/defaults.env\nEnvironmentFile=-/etc/default/irqbalance\n"
            "ExecStart=/usr/sbin/irqbalance --foreground $IRQBALANCE_ARGS\n")
EL_UNIT = "[Service]\nEnvironmentFile=/etc/sysconfig/irqbalance\nExecStart=/usr/sbin/irqbalance $IRQBALANCE_ARGS\n"
DEFAULT, SYSCONFIG = _irqplan.IRQBALANCE_DEFAULTS, _irqplan.IRQBALANCE_SYSCONFIG


@pytest.mark.parametrize("units, existing, os_release, expected", [
    ([None, None, DEB_UNIT], [], None, DEFAULT),                              # Debian's unit in /lib
    ([None, EL_UNIT, None], [], None, SYSCONFIG),                             # EL's unit in /usr/lib
    ([DEB_UNIT, EL_UNIT, None], [], None, DEFAULT),                           # the admin's copy in /etc wins
    ([None, "[Service]\nExecStart=/usr/sbin/irqbalance\n", None], [SYSCONFIG], None, SYSCONFIG),  # no EnvironmentFile
    ([None, None, None], [SYSCONFIG], 'ID=debian\n', SYSCONFIG),              # the file that exists beats os-release
    ([None, None, None], [DEFAULT, SYSCONFIG], None, DEFAULT),
    ([None, None, None], [], 'ID="rocky"\nID_LIKE="rhel centos fedora"\n', SYSCONFIG),
    ([None, None, None], [], 'ID=almalinux\n', SYSCONFIG),
    ([None, None, None], [], 'ID="opensuse-leap"\nID_LIKE="suse opensuse"\n', SYSCONFIG),
    ([None, None, None], [], 'ID=ubuntu\nID_LIKE=debian\n', DEFAULT),
    ([None, None, None], [], None, DEFAULT),
    ([None, "[Service]\nEnvironmentFile=/etc/irqbalance.env\n", None], [], 'ID=arch\n', DEFAULT),  # not ours to edit
])
def test_irqbalance_environment_file(units, existing, os_release, expected):
    assert _irqplan.env_file(units, existing, os_release) == expected


@pytest.mark.parametrize("current, names, expected", [
    (None, ["b", "a"], ["a", "b"]),
    ({"content": "a\nc\n", "mode": "0644"}, ["b"], ["a", "b", "c"]),
    ({"content": "a\n\n  \nb\n", "mode": "0644"}, ["a"], ["a", "b"]),
    ({"content": b"x\n", "mode": "0644"}, [], ["x"]),
])
def test_merged_banned(current, names, expected):
    assert _irqplan.merged_banned(current, names) == expected


def test_module_returns_only_documented_irq_keys(with_irqbalance):
    """irq_affinity's per-interface ``irqs`` (driver, driver_profile, other_irqs ...) is what its RETURN documents."""
    documented = set(yaml.safe_load(irq_affinity.RETURN)["irqs"]["contains"])
    out = irq(with_irqbalance, check=True)["irqs"]
    assert out and all({"driver", "driver_profile", "other_irqs"} <= set(i) == documented for i in out.values())
