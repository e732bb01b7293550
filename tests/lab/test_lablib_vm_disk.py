# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the bake in the vm scenario (molecule/vm/bake.yml) needs of the VM lab: the data NIC at a
fixed PCI slot (so a baked .link file can match it by Path=), one VM stopped with its disk kept and
booted again from it (`vm stop` / `vm start`), and VMs booted from a baked copy of the image's disk
(`vm up --disk`)."""
from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from lablib import vmrun


@pytest.mark.parametrize("index, peer_listens, data_nic", [
    (1, False, True),
    (2, True, True),
    (3, None, False),     # odd count: no data link
])
def test_data_nic_sits_at_the_fixed_slot(index, peer_listens, data_nic):
    node = {"index": index, "name": f"vm{index}", "tag": f"t-vm{index}", "console": "/c", "qmp": "/q",
            "overlay": "/o.qcow2", "ssh_port": 2222, "data_port": 4444}
    argv = vmrun.qemu_argv(node, Path("/img"), [], peer_listens)
    devices = [argv[i + 1] for i, a in enumerate(argv) if a == "-device" and "netdev=data," in argv[i + 1]]
    assert [d.endswith(",addr=0x10") for d in devices] == ([True] if data_nic else [])
    assert vmrun.DATA_ID_PATH == "pci-0000:00:10.0"
    # the second data NIC, another real driver, on every VM (it needs no peer)
    second = [argv[i + 1] for i, a in enumerate(argv) if a == "-device" and "netdev=data1," in argv[i + 1]]
    assert second == [f"e1000e,netdev=data1,mac=52:54:00:a2:00:{index:02x},addr=0x11"]
    assert argv[argv.index(second[0]) - 3:argv.index(second[0]) - 1] == ["-netdev", "user,id=data1,restrict=on"]


@pytest.mark.parametrize("disk, recorded", [
    (None, "/img/disk.img"),
    (Path("/work/baked.img"), "/work/baked.img"),
])
def test_the_run_records_the_disk_its_overlays_are_backed_by(monkeypatch, tmp_path, disk, recorded):
    monkeypatch.setattr(vmrun, "run_dir", lambda run: tmp_path / run)
    state = vmrun.new_state("t", 2, Path("/img"), "tcg", disk)
    assert state["disk"] == recorded
    assert [n["overlay"] for n in state["nodes"]] == [str(tmp_path / "t" / "vm1.qcow2"),
                                                      str(tmp_path / "t" / "vm2.qcow2")]


def test_the_bake_scenario_matches_data0_by_this_slot():
    import yaml
    root = Path(__file__).resolve().parents[2]
    bake = yaml.safe_load((root / "molecule" / "vm" / "vars" / "bake.yml").read_text())
    data0 = [e for e in bake["rdma_interfaces"] if e.get("name") == "data0"]
    assert [(e["match"], e["match_value"]) for e in data0] == [("path", vmrun.DATA_ID_PATH)]
    first_boot = root / "molecule" / "vm" / "tests_bake" / "test_first_boot.py"
    assert f'DATA_ID_PATH = "{vmrun.DATA_ID_PATH}"' in first_boot.read_text()


def _run(monkeypatch, tmp_path):
    """A recorded two-VM run whose QEMUs 'run' (our_qemu true for pids 11, 12); launches recorded."""
    monkeypatch.setattr(vmrun, "run_dir", lambda run: tmp_path / run)
    (tmp_path / "t").mkdir()
    state = vmrun.new_state("t", 2, Path("/img"), "tcg")
    for n, pid in zip(state["nodes"], (11, 12)):
        n["pid"] = pid
        Path(n["overlay"]).write_text("disk")
    saved, stopped, launched = [], [], []
    alive = {11, 12}
    monkeypatch.setattr(vmrun, "load_state", lambda run: state)
    monkeypatch.setattr(vmrun, "save_state", lambda st: saved.append([n["pid"] for n in st["nodes"]]))
    monkeypatch.setattr(vmrun, "our_qemu", lambda pid, tag: pid in alive)
    monkeypatch.setattr(vmrun, "stop_pid", lambda pid, tag, name: (stopped.append(name), alive.discard(pid)))
    monkeypatch.setattr(vmrun, "require_tools", lambda *tools: None)
    monkeypatch.setattr(vmrun, "choose_accel", lambda: ("tcg", []))

    def launch(st, node, image, accel):
        launched.append((node["name"], str(image)))
        node["pid"] = 21
        alive.add(21)

    def wait_ssh(nodes, timeout, t0):
        for n in nodes:
            n["boot_seconds"] = 1.0
    monkeypatch.setattr(vmrun, "launch", launch)
    monkeypatch.setattr(vmrun, "wait_ssh", wait_ssh)
    return state, saved, stopped, launched


def test_stop_then_start_one_vm_keeps_its_disk(monkeypatch, tmp_path):
    state, saved, stopped, launched = _run(monkeypatch, tmp_path)
    vmrun.stop("t", "vm2")
    assert stopped == ["vm2"] and saved[-1] == [11, None]
    assert Path(state["nodes"][1]["overlay"]).read_text() == "disk"      # the disk stays for the bake
    vmrun.start("t", "vm2", 30)
    assert launched == [("vm2", "/img")] and saved[-1] == [11, 21]


@pytest.mark.parametrize("call, message", [
    (lambda: vmrun.stop("t", "vm1"), "vm1 listens for vm2's data link"),
    (lambda: vmrun.stop("t", "vm9"), "no VM vm9 in run 't' (recorded: vm1, vm2)"),
    (lambda: vmrun.start("t", "vm2", 30), "vm2 is running (QEMU pid 12)"),
])
def test_stop_and_start_refuse_what_would_break_the_run(monkeypatch, tmp_path, capsys, call, message):
    _state, _saved, stopped, launched = _run(monkeypatch, tmp_path)
    with pytest.raises(SystemExit):
        call()
    assert message in capsys.readouterr().err and stopped == [] and launched == []


def _launch_setup(monkeypatch, tmp_path, argv):
    monkeypatch.setattr(vmrun, "qemu_argv", lambda node, image, accel, peer_listens: argv)
    monkeypatch.setattr(vmrun, "save_state", lambda state: None)
    node = {"index": 1, "name": "vm1", "tag": "t-vm1", "peer": None, "ssh_port": 2222,
            "qemu_log": str(tmp_path / "vm1.qemu.log")}
    return {"nodes": [node]}, node


def test_launch_waits_until_the_child_is_qemu(monkeypatch, tmp_path):
    """Between fork and exec the child's cmdline is still Python's: launch() returns only once the
    recorded PID is our QEMU, so no later liveness check calls a starting VM "exited"."""
    state, node = _launch_setup(monkeypatch, tmp_path, ["sleep", "5"])
    answers = iter([False, False, True])
    monkeypatch.setattr(vmrun, "our_qemu", lambda pid, tag: next(answers))
    vmrun.launch(state, node, Path("/img"), [])
    assert node["pid"] and next(answers, "used up") == "used up"
    os.kill(node["pid"], signal.SIGKILL)


def test_launch_names_a_qemu_that_exits_at_start(monkeypatch, tmp_path):
    state, node = _launch_setup(monkeypatch, tmp_path, ["false"])
    monkeypatch.setattr(vmrun, "our_qemu", lambda pid, tag: False)
    with pytest.raises(RuntimeError, match=r"vm1: QEMU pid \d+ exited at start \(status 1\); see .*vm1.qemu.log"):
        vmrun.launch(state, node, Path("/img"), [])
