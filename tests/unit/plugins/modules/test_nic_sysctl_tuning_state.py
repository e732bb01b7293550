# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The modules' run() on a fake node tree: check mode, idempotence, revert, rollback, bad input."""
from __future__ import annotations

import os

import pytest

from ansible_collections.hpcnet.rdma.plugins.modules import nic_tuning, sysctl_tuning, tuning_state

from ...conftest import Failed, FakeModule, mlx5, veth

SYSCTLS = {"net.ipv4.tcp_rmem": [4096, 87380, 268435456], "net.ipv4.tcp_sack": 0, "vm.swappiness": 10}
NICS = [{"driver": "mlx5_core", "mtu": 9000, "rings": {"rx": 4096, "tx": 4096}, "channels": {"combined": 16},
         "coalesce": {"adaptive_rx": False, "rx_usecs": 4}},
        {"subnet": "10.77.0.0/24", "mtu": 9000}]


@pytest.fixture
def lab(node):
    node.sysctl("net.ipv4.tcp_rmem", "4096\t131072\t6291456")
    node.sysctl("net.ipv4.tcp_sack", "1")
    node.sysctl("vm.swappiness", "60")
    node.write("/etc/sysctl.d/90-hpcnet-rdma.conf", "# a file that was here before\nvm.swappiness = 30\n", 0o640)
    node.add_nic(mlx5())
    node.add_nic(veth(addresses=[("10.77.0.1", 24)]))
    return node


def sysctl(node, check=False, **params):
    params.setdefault("sysctls", SYSCTLS)
    params.setdefault("context", "host")
    return sysctl_tuning.run(FakeModule(sysctl_tuning.ARGUMENT_SPEC, params, check_mode=check), node.host())


def nic(node, check=False, **params):
    params.setdefault("interfaces", NICS)
    # the fake node has no connection to guard (the guard itself: tests/unit/plugins/module_utils/nic/test_guard.py)
    params.setdefault("management_connection", "none")
    return nic_tuning.run(FakeModule(nic_tuning.ARGUMENT_SPEC, params, check_mode=check), node.host())


def state(node, check=False, **params):
    return tuning_state.run(FakeModule(tuning_state.ARGUMENT_SPEC, params, check_mode=check), node.host())


@pytest.mark.parametrize("call", [sysctl, nic])
def test_check_mode_predicts_exactly_and_writes_nothing(lab, call):
    before = lab.snapshot()
    predicted = call(lab, check=True)
    assert lab.snapshot() == before
    assert not any(c[1].startswith("-") and c[1].isupper() for c in lab.calls)  # no -G/-L/-C setter ran
    assert predicted["changed"] is True
    real = call(lab)
    assert real["changes"] == predicted["changes"]
    assert real["current"] == predicted["current"]
    again = call(lab)
    assert again["changed"] is False and again["changes"] == []


def test_values_are_read_back_from_the_node(lab):
    sysctl(lab)
    nic(lab)
    assert lab.read("/proc/sys/net/ipv4/tcp_rmem") == "4096 87380 268435456"
    m = lab.nics["ens1f0np0"]
    assert (m.mtu, m.rings["current"]["rx"], m.channels["current"]["combined"]) == (9000, 4096, 16)
    assert (m.coalesce["adaptive_rx"], m.coalesce["rx_usecs"]) == (False, 4)
    assert lab.nics["data0"].mtu == 9000
    assert "MTUBytes=9000\n" in lab.read("/etc/systemd/network/10-hpcnet-rdma-data0.link")


def test_rollback_all_restores_the_node_exactly(lab):
    pristine = lab.snapshot()
    sysctl(lab)
    nic(lab)
    sysctl(lab, sysctls={"net.ipv4.tcp_sack": 1, "vm.swappiness": 5})   # a second tune of the same keys
    assert lab.snapshot() != pristine
    predicted = state(lab, check=True, action="rollback")
    assert predicted["changed"] is True
    done = state(lab, action="rollback")
    assert done["changes"] == predicted["changes"]
    after = lab.snapshot()
    jdir = lab.path("/var/lib/hpcnet-rdma")
    pristine_files = dict((k, v) for k, v in pristine["files"].items() if not k.startswith(jdir))
    assert dict((k, v) for k, v in after["files"].items() if not k.startswith(jdir)) == pristine_files
    assert after["nics"] == pristine["nics"]
    assert state(lab, action="status")["tuned"] == {}
    assert state(lab, action="rollback")["changed"] is False


def test_rollback_last_undoes_one_generation(lab):
    sysctl(lab)
    sysctl(lab, sysctls={"net.ipv4.tcp_sack": 1, "vm.swappiness": 5})
    assert lab.read("/proc/sys/vm/swappiness") == "5"
    state(lab, action="rollback", scope="last")
    assert lab.read("/proc/sys/vm/swappiness") == "10"
    assert lab.read("/proc/sys/net/ipv4/tcp_sack") == "0"
    status = state(lab, action="status")
    assert [g["id"] for g in status["generations"]] == [1]
    assert status["tuned"]["sysctl:vm.swappiness"] == {"original": "60", "current": "10"}


def test_failed_apply_reverts_this_call_and_names_the_key(lab):
    before = lab.snapshot()
    lab.fail_on = "-C ens1f0np0 rx-usecs"
    with pytest.raises(Failed) as e:
        nic(lab)
    assert "nic:ens1f0np0:coalesce.rx_usecs" in e.value.msg
    # 4 earlier NIC/file changes + the 2 directories the .link file needed (/etc/systemd, .../network)
    assert "changed nothing" in e.value.msg and "reverted 6 earlier change(s)" in e.value.msg
    assert not os.path.isdir(lab.path("/etc/systemd"))
    after = lab.snapshot()
    assert after["nics"] == before["nics"]
    jdir = lab.path("/var/lib/hpcnet-rdma")
    assert dict((k, v) for k, v in after["files"].items() if not k.startswith(jdir)) == before["files"]
    assert state(lab, action="status")["generations"] == []


def _unwritable_journal(node):
    node.write("/var/lib/notadir", "a file where the journal directory should go\n")
    return {"journal_dir": "/var/lib/notadir/journal"}


BAD_INPUT = [
    (sysctl, {"sysctls": {"net.ipv4.tcp_rmme": 1}}, "unknown key 'net.ipv4.tcp_rmme'"),
    (sysctl, {"sysctls": {"vm.swappiness": "high"}}, "vm.swappiness: value 'high' is not numeric; allowed: one integer"),
    (sysctl, {"sysctls": {"vm.swappiness": 1}, "context": "container"}, "not settable here: vm.swappiness"),
    (sysctl, {"mode": "sometimes"}, "value of mode must be one of: runtime, persist, both"),
    (nic, {"interfaces": [{"name": "data0", "mtu": 70000}]}, r"data0 mtu=70000 is outside what the device allows \(68..65535\)"),
    (nic, {"interfaces": [{"driver": "mlx5_core", "rings": {"rx": 9000}}]}, "rings.rx=9000 is above the hardware maximum 8192"),
    (nic, {"interfaces": [{"name": "ib0", "mtu": 4092}]}, "unknown interface 'ib0'"),
    (nic, {"interfaces": [{"driver": "ice", "mtu": 9000}]}, "selector driver='ice' matched no interface"),
    (nic, {"interfaces": [{"driver": "mlx5_core", "coalesce": {"tx_usecs": -5}}]}, "coalesce.tx_usecs=-5 is negative"),
    (nic, {"interfaces": [{"name": "data0", "rings": {"rx": "big"}}]}, "rings"),
    (sysctl, "journal", "journal_dir: /var/lib/notadir/journal cannot hold the journal"),
    (nic, "journal", "journal_dir: /var/lib/notadir/journal cannot hold the journal"),
]


@pytest.mark.parametrize("call, params, message", BAD_INPUT)
@pytest.mark.parametrize("check", [False, True])
def test_bad_input_fails_clearly_and_leaves_the_node_untouched(lab, call, params, message, check):
    if params == "journal":
        params = _unwritable_journal(lab)
    before = lab.snapshot()
    with pytest.raises(Failed, match=message):
        call(lab, check=check, **params)
    assert lab.snapshot() == before


def test_management_interface_needs_opt_in(lab):
    lab.environ["SSH_CONNECTION"] = "192.168.1.2 51000 10.77.0.1 22"
    with pytest.raises(Failed, match="data0 carries the Ansible connection"):
        nic(lab, interfaces=[{"name": "data0", "mtu": 9000}])
    assert nic(lab, interfaces=[{"name": "data0", "mtu": 9000}], allow_management_interface=True)["changed"]


def test_unsettable_in_container_is_a_named_result(lab):
    out = sysctl(lab, context="container", on_unsettable="warn")
    assert [u["key"] for u in out["unsettable"]] == ["vm.swappiness"]
    assert lab.read("/proc/sys/vm/swappiness") == "60\n"
    assert "vm.swappiness = 10\n" in lab.read("/etc/sysctl.d/90-hpcnet-rdma.conf")


def test_boot_override_warning(lab):
    lab.write("/etc/sysctl.d/99-site.conf", "net.ipv4.tcp_sack = 1\n")
    m = FakeModule(sysctl_tuning.ARGUMENT_SPEC, {"sysctls": SYSCTLS, "context": "host"})
    sysctl_tuning.run(m, lab.host())
    assert any("99-site.conf sets '1' and is applied after" in w for w in m.warnings)


def test_corrupt_journal_blocks_every_module(lab):
    lab.write("/var/lib/hpcnet-rdma/journal.json", "{ half a journal")
    before = lab.snapshot()
    for call in (sysctl, nic):
        with pytest.raises(Failed, match="is corrupt"):
            call(lab)
    with pytest.raises(Failed, match="is corrupt"):
        state(lab, action="rollback")
    assert lab.snapshot() == before


def test_drift_of_a_key_that_was_already_right(lab):
    """A key the call found at its value is in no generation; status still reports its drift (against the
    journal's targets of that release scope) - irqbalance moving an IRQ that was already where the profile
    wants it is drift like any other."""
    sysctl(lab, sysctls={"net.ipv4.tcp_sack": 0, "vm.swappiness": 60}, mode="runtime", release_scope="tuning.sysctl")
    status = state(lab, action="status")
    assert "sysctl:vm.swappiness" not in status["tuned"]          # unchanged: no original, no generation
    assert status["drift"] == []
    lab.sysctl("vm.swappiness", "30")
    lab.sysctl("net.ipv4.tcp_sack", "1")
    drift = dict((d["key"], d) for d in state(lab, action="status")["drift"])
    assert drift["sysctl:vm.swappiness"] == {"key": "sysctl:vm.swappiness", "applied": "60", "current": "30",
                                             "scope": "tuning.sysctl"}
    assert drift["sysctl:net.ipv4.tcp_sack"]["since_generation"] == 1   # changed by the call: journal vs live
    assert "scope" not in drift["sysctl:net.ipv4.tcp_sack"]


def test_side_by_side_ethtool_reads_ask_for_json_once_on_an_ethtool_without_it(lab):
    """On the health check's host the nic domain's ethtool runs go side by side - after the first one of a
    group ethtool may print as JSON (rings, coalescing; not channels), which learns that this ethtool (6.1)
    has no --json for -g/-c: the others go straight to the text."""
    from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _domain as _nic
    nic(lab)
    tuned = state(lab, action="status")["tuned"]
    targets = sorted(k[4:] for k in tuned if k.startswith("nic:") and k.rsplit(":", 1)[1] in _nic.KNOB)
    assert set(_nic.KNOB[t.rsplit(":", 1)[1]].group for t in targets) == {"channels", "rings", "coalesce"}
    one_by_one = _nic.read_values(lab.host(), targets)
    lab.calls.clear()
    host = lab.host()
    host.concurrent_reads = True
    assert _nic.read_values(host, targets) == one_by_one
    ethtool = [c[1:] for c in lab.calls if c[0] == "ethtool"]
    assert [c for c in ethtool if "--json" in c] == [ethtool[0]] and len(ethtool) == len(set(map(tuple, ethtool))) > 2


def test_no_target_drift_without_a_release_scope_or_after_rollback(lab):
    sysctl(lab, sysctls={"vm.swappiness": 60}, mode="runtime")
    lab.sysctl("vm.swappiness", "30")
    assert state(lab, action="status")["drift"] == []               # no scope: no targets were stored
    lab.sysctl("vm.swappiness", "60")
    sysctl(lab, sysctls={"vm.swappiness": 60, "net.ipv4.tcp_sack": 0}, mode="runtime", release_scope="tuning.sysctl")
    state(lab, action="rollback", scope="all")
    lab.sysctl("vm.swappiness", "30")
    assert state(lab, action="status")["drift"] == []               # rollback dropped the targets


def test_status_reads_each_interfaces_rings_and_coalescing_with_one_ethtool_run(lab):
    """status (and the node's health check through it) reads every journaled key at once: the nic domain's
    read_values runs ethtool -g / -c once per interface, not once per ring or coalescing key, and finds the
    same values and the same drift as key-by-key reads."""
    from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _apply
    from ansible_collections.hpcnet.rdma.plugins.module_utils.tuning import _concerns as _registry
    nic(lab)
    lab.nics["ens1f0np0"].rings["current"]["tx"] = 512            # drifted behind the collection's back
    lab.ethtool_json = True                                     # one ethtool run per read (no 6.1 fallback)
    lab.calls.clear()
    status = state(lab, action="status")
    reads = [c[1:] for c in lab.calls if c[0] == "ethtool"]
    assert sorted(reads) == [["--json", "-c", "ens1f0np0"], ["--json", "-g", "ens1f0np0"], ["-l", "ens1f0np0"]]
    assert [(d["key"], d["current"]) for d in status["drift"]] == [("nic:ens1f0np0:ring.tx", 512)]
    domains = _apply.Domains(*_registry.all_maps())
    keys = sorted(status["tuned"]) + ["nic:nosuch0:ring.rx", "nic:data0:ring.rx", "nic:nosuch0:mtu", "bogus:key"]
    batch = domains.read_values(lab.host(), keys)
    for key in keys:
        try:
            one = domains.read_value(lab.host(), key)
        except Exception as e:  # pylint: disable=broad-except
            assert type(batch[key]) is type(e) and str(batch[key]) == str(e), key
        else:
            assert batch[key] == one, key
    side_by_side = lab.host()
    side_by_side.concurrent_reads = True                    # as the health check's host: ethtool runs in threads
    assert repr(domains.read_values(side_by_side, keys)) == repr(batch)
