# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What molecule/bake needs of the VM lab: the data NIC at a fixed PCI slot (so a baked .link
file can match it by Path=), and VMs booted from a baked copy of the image's disk (`vm up --disk`)."""
from __future__ import annotations

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
    devices = [argv[i + 1] for i, a in enumerate(argv) if a == "-device" and "netdev=data" in argv[i + 1]]
    assert [d.endswith(",addr=0x10") for d in devices] == ([True] if data_nic else [])
    assert vmrun.DATA_ID_PATH == "pci-0000:00:10.0"


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
    bake = yaml.safe_load((root / "molecule" / "bake" / "vars" / "bake.yml").read_text())
    data0 = [e for e in bake["rdma_interfaces"] if e.get("name") == "data0"]
    assert [(e["match"], e["match_value"]) for e in data0] == [("path", vmrun.DATA_ID_PATH)]
    assert f'DATA_ID_PATH = "{vmrun.DATA_ID_PATH}"' in (root / "molecule" / "bake" / "tests" /
                                                         "test_first_boot.py").read_text()
