# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the rdma_core role writes, rendered: the role's own rdma_stack task templated by Ansible's
Templar with the role's defaults (and the Molecule scenarios' vars), then run against the fake
node of test_rdma_modules.py.

Issue 16, item 2: the role's default must keep locked memory with the group (limits.d) and the
services named in rdma_core_memlock_services; a systemd-wide DefaultLimitMEMLOCK only on request.
The Molecule expectations (molecule/rdma_core, molecule/vm) are checked against the same render,
so they cannot drift from what the role really writes.
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys
from typing import Any, Dict, List

import pytest

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

import ansible_collections.hpcnet.rdma as collection
from ansible_collections.hpcnet.rdma.plugins.module_utils.stack import _config as _stack_config
from ansible_collections.hpcnet.rdma.plugins.modules import rdma_stack

from ...conftest import FakeModule, veth
from ..role_render import trusted
from ...plugins.modules.test_rdma_stack_packages import RdmaNode, rollback, untouched

ROOT = list(collection.__path__)[0]
ROLE = os.path.join(ROOT, "roles", "rdma_core")
OMIT = "__omit_place_holder__rdma_core_test"


def render(overrides: Dict[str, Any]) -> Dict[str, Any]:
    """The parameters the role's rdma_stack task passes, for its defaults plus ``overrides``."""
    loader = DataLoader()
    tasks = loader.load_from_file(os.path.join(ROLE, "tasks", "main.yml"))
    task = [t for t in tasks if "hpcnet.rdma.rdma_stack" in t][0]
    variables = dict(loader.load_from_file(os.path.join(ROLE, "defaults", "main.yml")))
    variables.update(trusted(overrides))
    variables.update(trusted(task.get("vars") or {}))
    variables["omit"] = OMIT
    args = Templar(loader=loader, variables=variables).template(trusted(task["hpcnet.rdma.rdma_stack"]))
    args = json.loads(json.dumps(args))   # plain dicts and lists, as the module receives them
    return dict((k, v) for k, v in args.items() if v != OMIT)


def play_vars(path: str) -> Dict[str, Any]:
    """The role's variables a Molecule converge sets: its play vars, or (molecule.yml) the
    inventory's group_vars of rdma_nodes, which converge and the switch share."""
    full = os.path.join(ROOT, path)
    if path.endswith("molecule.yml"):
        found = DataLoader().load_from_file(full)["provisioner"]["inventory"]["group_vars"]["rdma_nodes"]
    else:
        found = DataLoader().load_from_file(full)[0]["vars"]
    return dict((k, v) for k, v in found.items() if k.startswith("rdma_core_"))


def molecule_module(path: str, name: str) -> Any:
    full = os.path.join(ROOT, path)
    sys.path.insert(0, os.path.dirname(full))
    try:
        spec = importlib.util.spec_from_file_location(name, full)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(os.path.dirname(full))
    return mod


@pytest.fixture
def rnode(tmp_path):
    n = RdmaNode(str(tmp_path / "root"))
    n.add_nic(veth(addresses=[("10.77.0.1", 24)]))
    n.write("/dev/infiniband/rdma_cm", "", 0o666)
    n.write("/etc/security/limits.d/README", "keep\n")
    return n


def run_role_task(node: RdmaNode, params: Dict[str, Any]) -> Any:
    m = FakeModule(rdma_stack.ARGUMENT_SPEC, params)
    return m, rdma_stack.run(m, node.host())


def written(out: Dict[str, Any]) -> List[str]:
    return [c["key"][5:] for c in out["changes"] if c["key"].startswith("file:")]


def test_the_role_default_keeps_memlock_with_the_group(rnode):
    params = render({})
    assert params["memlock"] == {"group": "rdma", "limit": "unlimited", "systemd": "services", "services": []}
    pristine = rnode.snapshot()
    m, out = run_role_task(rnode, params)
    assert _stack_config.LIMITS_CONF in written(out) and _stack_config.SYSTEMD_MANAGER_DROPIN not in written(out)
    assert not [p for p in written(out) if p.startswith("/etc/systemd/")]       # no service is touched
    assert rnode.read(_stack_config.LIMITS_CONF).endswith("\n@rdma - memlock unlimited\n")
    assert not os.path.exists(rnode.path("/etc/systemd/system.conf.d"))
    assert m.warnings == [] and out["reboot_required"] is False
    rollback(rnode)
    assert untouched(rnode, pristine)


def test_the_role_writes_the_systemd_default_only_when_asked_and_warns(rnode):
    m, out = run_role_task(rnode, render({"rdma_core_memlock_systemd": "global"}))
    assert _stack_config.SYSTEMD_MANAGER_DROPIN in written(out)
    assert rnode.read(_stack_config.SYSTEMD_MANAGER_DROPIN).endswith("[Manager]\nDefaultLimitMEMLOCK=infinity\n")
    assert [w.split(";")[0] for w in m.warnings] == [
        "memlock.systemd: global sets DefaultLimitMEMLOCK=infinity in %s for every systemd service"
        % _stack_config.SYSTEMD_MANAGER_DROPIN]
    assert out["reboot_required"] is True


def test_molecule_rdma_core_expects_exactly_what_the_role_writes(rnode):
    """molecule/rdma_core's converge vars, in a container (the scenario's lab nodes)."""
    rnode.write("/.dockerenv", "")
    _m, out = run_role_task(rnode, render(play_vars("molecule/rdma_core/converge.yml")))
    checks = molecule_module("molecule/rdma_core/tests/test_rdma_core.py", "molecule_rdma_core_checks")
    assert sorted(written(out)) == sorted(checks.FILES)
    assert checks.MANAGER_DROPIN == _stack_config.SYSTEMD_MANAGER_DROPIN and checks.MANAGER_DROPIN not in written(out)
    for path, lines in checks.FILES.items():
        text = rnode.read(path).splitlines()
        assert all(line in text for line in lines), path


def test_molecule_vm_expects_exactly_what_the_role_writes(rnode):
    """molecule/vm's converge vars (molecule.yml's rdma_nodes group_vars, through the tuning role,
    rdma_core_mode live) on a node with data0."""
    _m, out = run_role_task(rnode, render(play_vars("molecule/vm/molecule.yml")))
    checks = molecule_module("molecule/vm/checks_stack.py", "molecule_vm_checks_stack")
    files = [p for p in written(out) if not p.startswith("/etc/systemd/system/multi-user.target.wants/")]
    assert sorted(files) == sorted(checks.STACK_FILES)
    assert checks.MANAGER_DROPIN == _stack_config.SYSTEMD_MANAGER_DROPIN and checks.MANAGER_DROPIN not in written(out)
    assert checks.SSH_DROPIN == _stack_config.SERVICE_DROPIN % "ssh.service"
