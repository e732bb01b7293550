# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lab/lablib/inventory.py and the two inventories rendered with it (containers, VMs).

The expected texts are what lab/labctl.py and lab/vm.py wrote before the lab became a package;
the empty ones are the committed inventories/lab*/hosts.yml, which `down` must leave unchanged."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from lablib import containers, inventory, vmrun, vmstate

ROOT = Path(__file__).resolve().parents[2]

CONTAINER_NODES = [
    {"name": "hpcnet-lab-node1", "hostname": "node1", "data0": "10.77.0.1/24", "peer": "node2"},
    {"name": "hpcnet-lab-node2", "hostname": "node2", "data0": "10.77.0.2/24", "peer": "node1"},
    {"name": "hpcnet-lab-node3", "hostname": "node3", "data0": None, "peer": None},
]
CONTAINER_INVENTORY = """---
# Written by `lab/labctl.py up`; reset by `lab/labctl.py down`. Do not edit by hand.
# lab run: 20260101000000abcdef
all:
  children:
    rdma_nodes:
      vars:
        ansible_connection: community.docker.docker
        ansible_python_interpreter: /usr/bin/python3
      hosts:
        node1:
          ansible_host: hpcnet-lab-node1
          lab_data0_address: 10.77.0.1/24
          lab_data0_peer: node2
        node2:
          ansible_host: hpcnet-lab-node2
          lab_data0_address: 10.77.0.2/24
          lab_data0_peer: node1
        node3:
          ansible_host: hpcnet-lab-node3
"""

VM_STATE = {"started": "2026-01-01T00:00:00", "nodes": [
    {"name": "vm1", "ssh_port": 40001, "metrics_port": 41001, "peer": "vm2", "data0": "10.77.0.1/24"},
    {"name": "vm2", "ssh_port": 40002, "metrics_port": 41002, "peer": "vm1", "data0": "10.77.0.2/24"},
    {"name": "vm3", "ssh_port": 40003, "peer": None, "data0": None},  # a run recorded before lab_metrics_port
]}
VM_INVENTORY = """---
# Written by `lab/labctl.py vm up`; reset by `lab/labctl.py vm down`. Do not edit by hand.
# lab VM run: 2026-01-01T00:00:00
all:
  children:
    rdma_nodes:
      vars:
        ansible_connection: ssh
        ansible_host: 127.0.0.1
        ansible_user: root
        ansible_ssh_private_key_file: KEY
        ansible_ssh_common_args: >-
          -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR
        ansible_python_interpreter: /usr/bin/python3
      hosts:
        vm1:
          ansible_port: 40001
          lab_metrics_port: 41001
          lab_data0_address: 10.77.0.1/24
          lab_data0_peer: vm2
        vm2:
          ansible_port: 40002
          lab_metrics_port: 41002
          lab_data0_address: 10.77.0.2/24
          lab_data0_peer: vm1
        vm3:
          ansible_port: 40003
"""


@pytest.mark.parametrize("command, label, note, group_vars, hosts, expected", [
    ("up", "lab run", "none", [("a", "b")], [],
     "---\n# Written by `lab/labctl.py up`; reset by `lab/labctl.py down`. Do not edit by hand.\n"
     "# lab run: none\nall:\n  children:\n    rdma_nodes:\n      hosts: {}\n"),
    ("vm up", "lab VM run", "t0", [("k", 1), ("f", inventory.Folded("x y"))], [("h1", []), ("h2", [("p", 2)])],
     "---\n# Written by `lab/labctl.py vm up`; reset by `lab/labctl.py vm down`. Do not edit by hand.\n"
     "# lab VM run: t0\nall:\n  children:\n    rdma_nodes:\n      vars:\n        k: 1\n        f: >-\n          x y\n"
     "      hosts:\n        h1:\n        h2:\n          p: 2\n"),
])
def test_render(command: str, label: str, note: str, group_vars: Any, hosts: Any, expected: str) -> None:
    assert inventory.render(command, label, note, group_vars, hosts) == expected


@pytest.mark.parametrize("text, committed", [
    (lambda: containers.inventory_text([], None), "inventories/lab/hosts.yml"),
    (lambda: vmrun.inventory_text(None), "inventories/lab-vm/hosts.yml"),
])
def test_down_leaves_the_committed_empty_inventory(text: Any, committed: str) -> None:
    rendered = text()
    assert rendered == (ROOT / committed).read_text()
    assert yaml.safe_load(rendered)["all"]["children"]["rdma_nodes"] == {"hosts": {}}


def test_container_inventory() -> None:
    text = containers.inventory_text(CONTAINER_NODES, "20260101000000abcdef")
    assert text == CONTAINER_INVENTORY
    group = yaml.safe_load(text)["all"]["children"]["rdma_nodes"]
    assert group["hosts"]["node2"] == {"ansible_host": "hpcnet-lab-node2", "lab_data0_address": "10.77.0.2/24",
                                       "lab_data0_peer": "node1"}
    assert group["hosts"]["node3"] == {"ansible_host": "hpcnet-lab-node3"}  # odd one out: no data link


def test_vm_inventory() -> None:
    text = vmrun.inventory_text(VM_STATE)
    assert text == VM_INVENTORY.replace("KEY", str(vmstate.KEY_FILE))
    group = yaml.safe_load(text)["all"]["children"]["rdma_nodes"]
    assert group["vars"]["ansible_ssh_common_args"] == \
        "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
    assert group["hosts"]["vm1"]["ansible_port"] == 40001 and group["hosts"]["vm3"] == {"ansible_port": 40003}


def test_write_creates_the_directory(tmp_path: Path) -> None:
    target = tmp_path / "inventories" / "lab" / "hosts.yml"
    inventory.write(target, CONTAINER_INVENTORY)
    assert target.read_text() == CONTAINER_INVENTORY


@pytest.mark.parametrize("node, forwards", [
    ({"metrics_port": 41001}, ["hostfwd=tcp:127.0.0.1:40001-:22", "hostfwd=tcp:127.0.0.1:41001-:9100"]),
    ({}, ["hostfwd=tcp:127.0.0.1:40001-:22"]),  # a run recorded before the node_exporter forward
])
def test_qemu_forwards_ssh_and_node_exporter(node: dict, forwards: list) -> None:
    node = dict({"index": 1, "name": "vm1", "tag": "t", "ssh_port": 40001, "console": "c", "qmp": "q",
                 "overlay": "o"}, **node)
    argv = vmrun.qemu_argv(node, Path("/img"), [], None)
    netdev = argv[argv.index("-netdev") + 1]
    assert netdev.split(",")[3:] == forwards


def test_new_state_gives_every_vm_its_own_ports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vmrun, "run_dir", lambda run: tmp_path)
    state = vmrun.new_state("t", 4, tmp_path, "tcg")
    ports = [n[k] for n in state["nodes"] for k in ("ssh_port", "metrics_port")]
    assert len(set(ports)) == 8 and all(1024 < p < 65536 for p in ports)
    data = [n["data_port"] for n in state["nodes"]]
    # vm1 listens and vm2 connects on one port, vm3/vm4 on another; none is an ssh or metrics port
    # (a CI run once got vm1's ssh port as its data0 port: the ports were chosen one socket at a time)
    assert data[0] == data[1] and data[2] == data[3] and data[0] != data[2] and not set(data) & set(ports)
    group = yaml.safe_load(vmrun.inventory_text(state))["all"]["children"]["rdma_nodes"]
    assert [group["hosts"]["vm%d" % k]["lab_metrics_port"] for k in range(1, 5)] == \
        [n["metrics_port"] for n in state["nodes"]]


def test_free_ports_are_distinct() -> None:
    ports = vmrun.free_ports(64)
    assert len(set(ports)) == 64 and all(1024 < p < 65536 for p in ports)
