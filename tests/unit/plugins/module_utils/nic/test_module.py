# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/nic/_module.py (nic_tuning) on a fake node: the connection guard and the warnings."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.modules import nic_tuning

from ....conftest import Failed, FakeModule, mlx5, veth


# ---------------------------------------------------------------------- the module, on a fake node

def run_nic(node, check=False, **params):
    return nic_tuning.run(FakeModule(nic_tuning.ARGUMENT_SPEC, params, check_mode=check), node.host())


def test_module_refuses_when_the_connection_path_is_unknown(node):
    node.add_nic(veth(addresses=[("10.77.0.1", 24)]))
    before = node.snapshot()
    for check in (True, False):
        with pytest.raises(Failed, match=r"cannot tell which interface carries the Ansible connection \(no "
                                         r"SSH_CONNECTION in the module's environment; no sshd among the module's "
                                         r"parent processes; management_address not given\), so changing mtu of data0"):
            run_nic(node, check=check, interfaces=[{"name": "data0", "mtu": 9000}])
    assert node.snapshot() == before
    out = run_nic(node, interfaces=[{"name": "data0", "mtu": 9000}], management_connection="none")
    assert out["changed"] and node.nics["data0"].mtu == 9000
    assert out["management"] == {"interfaces": {}, "determined": False, "notes": [
        "no SSH_CONNECTION in the module's environment", "no sshd among the module's parent processes",
        "management_address not given"]}


def test_module_protects_what_management_address_names(node):
    node.add_nic(veth(addresses=[("10.77.0.1", 24)]))
    node.add_nic(mlx5(addresses=[("10.10.0.5", 16)]))
    before = node.snapshot()
    with pytest.raises(Failed, match="data0 carries the Ansible connection; changing mtu could cut it off"):
        run_nic(node, interfaces=[{"name": "data0", "mtu": 9000}], management_address="10.77.0.1")
    assert node.snapshot() == before
    out = run_nic(node, interfaces=[{"name": "ens1f0np0", "mtu": 9000}], management_address="10.77.0.1")
    assert out["changed"] and node.nics["ens1f0np0"].mtu == 9000 and node.nics["data0"].mtu == 1500


def test_module_warns_about_an_earlier_link_file(node):
    node.add_nic(veth(addresses=[("10.77.0.1", 24)]))
    node.write("/etc/systemd/network/00-site.link", "[Match]\nOriginalName=data*\n\n[Link]\nMTUBytes=1500\n")
    m = FakeModule(nic_tuning.ARGUMENT_SPEC, {"interfaces": [{"name": "data0", "mtu": 9000}], "mode": "persist"})
    nic_tuning.run(m, node.host())
    assert len(m.warnings) == 1 and m.warnings[0].startswith(
        "/etc/systemd/network/00-site.link sorts before 10-hpcnet-rdma-data0.link and matches data0 (OriginalName=data*)")
    assert "[Match]\nOriginalName=data0\n" in node.read("/etc/systemd/network/10-hpcnet-rdma-data0.link")
