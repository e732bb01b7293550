# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The domain contract (_domain), the engine's per-module domains and the one Refused type."""
from __future__ import annotations

import ast
import json
import importlib
import os
import subprocess
import sys
from typing import Any, Dict, List, Set

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _domain
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _apply
from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _domain as _irq
from ansible_collections.hpcnet.rdma.plugins.module_utils.stack import _domain as _rdma
from ansible_collections.hpcnet.rdma.plugins.module_utils.tuning import _concerns as _registry
from ansible_collections.hpcnet.rdma.plugins.module_utils.sysctl import _domain as _sysctl
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Plan

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGINS = os.path.join(HERE, "..", "..", "..", "..", "..", "plugins")
MU = "ansible_collections.hpcnet.rdma.plugins.module_utils"
ALL_PREFIXES = ["dcb", "devnode", "dir", "ecn", "file", "irq", "kmod", "mlnx_qos", "nic", "pkg", "rdma",
                "rdmacm", "rxe", "service", "sysctl"]


def _domain_files() -> Dict[str, Any]:
    """Every module_utils file that defines a DOMAINS map, imported."""
    out = {}
    top = os.path.join(PLUGINS, "module_utils")
    for folder, _dirs, names in sorted(os.walk(top)):
        for name in sorted(names):
            if name.endswith(".py") and name != "__init__.py":
                rel = os.path.relpath(os.path.join(folder, name[:-3]), top).replace(os.sep, ".")
                mod = importlib.import_module("%s.%s" % (MU, rel))
                if isinstance(getattr(mod, "DOMAINS", None), dict):
                    out[rel] = mod
    return out


def test_every_domain_conforms_and_rollback_knows_it():
    files = _domain_files()
    assert sorted(files) == ["engine._files", "irq._domain", "nic._domain", "qos._domain", "services._domain", "stack._domain",
                             "stack._pkg", "sysctl._domain"]
    registered = [id(m) for m in _registry.all_maps()]
    for name, mod in files.items():
        assert id(mod.DOMAINS) in registered, "%s.DOMAINS is not in _registry.all_maps(): rollback cannot restore it" % name
        for prefix, domain in mod.DOMAINS.items():
            assert all(callable(getattr(domain, f, None)) for f in _domain.CONTRACT), "%s:%s does not conform" % (name, prefix)
    assert _apply.Domains(*_registry.all_maps()).prefixes() == ALL_PREFIXES


def test_the_registry_names_every_prefix_of_every_domain_file():
    files = _domain_files()
    assert sorted(_registry.FILES) == sorted(files)
    assert _registry.PREFIXES == dict((prefix, name) for name, mod in files.items() for prefix in mod.DOMAINS)


@pytest.mark.parametrize("keys, files", [
    (["sysctl:net.core.rmem_max", "file:/etc/sysctl.d/90-x.conf"], ["engine._files", "sysctl._domain"]),
    (["nic:data0:mtu", "irq:41", "service:irqbalance.service"], ["nic._domain", "irq._domain", "services._domain"]),
    (["dcb:data0:pfc", "kmod:rdma_rxe"], ["stack._domain", "qos._domain"]),
    ([], []),
    (["sysctl:a", "bogus:x"], list(_registry.FILES)),    # an unknown prefix: every map (the error names them all)
])
def test_for_keys_gives_the_maps_of_the_keys_domains_only(keys, files):
    mods = _domain_files()
    assert [id(m) for m in _registry.for_keys(keys)] == [id(mods[name].DOMAINS) for name in files]


def test_for_keys_imports_only_the_domain_files_it_needs():
    """The no-change rerun's in-sync check compiles no domain file it does not read (a fresh interpreter:
    this process has imported them all)."""
    code = ("import json, sys\n"
            "from %s.tuning import _concerns\n"
            "_concerns.for_keys(['sysctl:a', 'file:/b'])\n"
            "print(json.dumps(sorted(n[len('%s.'):] for n in sys.modules if n.startswith('%s.'))))" % (MU, MU, MU))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    loaded = set(json.loads(out.stdout))
    assert {"engine._files", "sysctl._domain"} <= loaded
    assert not loaded & {"nic._domain", "irq._domain", "services._domain", "stack._pkg", "stack._domain", "qos._domain"}


def test_an_engine_knows_its_modules_domains_and_files_and_dirs():
    domains = _apply.Domains(_sysctl.DOMAINS)
    assert domains.prefixes() == ["dir", "file", "sysctl"]
    with pytest.raises(HostError, match=r"journal key 'nic:eth0:mtu' belongs to no known domain \(dir, file, sysctl\)"):
        domains.of("nic:eth0:mtu")
    assert _apply.Domains().prefixes() == ["dir", "file"]


def test_two_domains_may_not_claim_one_prefix():
    with pytest.raises(ValueError, match="two domains claim the journal key prefix 'sysctl'"):
        _apply.Domains(_sysctl.DOMAINS, {"sysctl": _rdma.KMOD})


class Memory(object):
    """A domain that keeps values in a dict; ``refuse`` and ``broken`` targets fail their write."""

    def __init__(self, values: Dict[str, Any], refuse: Set[str], broken: Set[str]) -> None:
        self.values = values
        self.refuse = refuse
        self.broken = broken

    def read_value(self, host: Any, target: str) -> Any:
        return self.values.get(target)

    def write_value(self, host: Any, target: str, value: Any) -> None:
        if target in self.refuse:
            raise _domain.Refused("%s: the node says no" % target)
        if target in self.broken:
            raise HostError("%s: write failed" % target)
        self.values[target] = value

    def same(self, actual: Any, wanted: Any) -> bool:
        return actual == wanted


@pytest.mark.parametrize("refuse, broken, keys, verified, refused, error, end", [
    # everything applies
    (set(), set(), ["a", "b", "c"], ["mem:a", "mem:b", "mem:c"], [], None, {"a": 1, "b": 1, "c": 1}),
    # a refusal is a named result, the rest still applies
    ({"b"}, set(), ["a", "b", "c"], ["mem:a", "mem:c"], ["mem:b"], None, {"a": 1, "b": 0, "c": 1}),
    # any other failure reverts what this call applied, newest first, and names the key
    (set(), {"c"}, ["a", "b", "c"], None, None, "mem:c: c: write failed; reverted 2 earlier change", {"a": 0, "b": 0, "c": 0}),
    # a key of a domain this engine was not given fails the same way, naming the key and the known prefixes
    (set(), set(), ["a", "pkg:x"], None, None,
     r"pkg:x: journal key 'pkg:x' belongs to no known domain \(dir, file, mem\); reverted 1", {"a": 0, "b": 0, "c": 0}),
])
def test_apply_plan_refused_and_failures(node, refuse, broken, keys, verified, refused, error, end):
    mem = Memory({"a": 0, "b": 0, "c": 0}, refuse, broken)
    domains = _apply.Domains({"mem": mem})
    plan = Plan()
    for k in keys:
        plan.add(k if ":" in k else "mem:" + k, 0, 1)
    if error:
        with pytest.raises(_apply.ApplyError, match=error) as e:
            _apply.apply_plan(node.host(), plan, domains)
        assert e.value.reverted is True
    else:
        done, no = _apply.apply_plan(node.host(), plan, domains)
        assert [c.key for c in done] == verified
        assert [r["key"] for r in no] == refused
        assert all("the node says no" in r["reason"] for r in no)
    assert mem.values == end


def test_refused_is_one_type_across_domains(node):
    assert issubclass(_domain.Refused, HostError)   # revert and rollback report it like any node error
    assert _irq._refused("managed IRQ").__class__ is _domain.Refused
    node.write("/sys/module/ib_uverbs/initstate", "live\n")
    node.write("/sys/module/ib_uverbs/refcnt", "2\n")
    with pytest.raises(_domain.Refused, match="kernel module ib_uverbs is in use"):
        _rdma.KMOD.write_value(node.host(), "ib_uverbs", "absent")
    assert not hasattr(_rdma, "Refused") or _rdma.Refused is _domain.Refused
    assert not hasattr(_irq, "Refused")


def test_irq_boot_applier_still_runs_alone(tmp_path):
    """The boot applier is _domain.py's and _applier.py's text in one file on the node (what irq_affinity
    installs): no collection to import there, and its main and BootHost are there."""
    from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _module as _irqmodule
    (tmp_path / "hpcnet_irq.py").write_text(_irqmodule.applier_source(), encoding="utf-8")
    code = ("import sys; sys.path.insert(0, %r); import hpcnet_irq as m; loaded = 'ansible_collections' in sys.modules; "
            "print(loaded, type(m._refused('x')).__name__, type(m._host_error('y')).__name__, sorted(m.DOMAINS), "
            "callable(m.main), m.BootHost.__module__)" % str(tmp_path))
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "RuntimeError", "RuntimeError", "['irq']", "True", "hpcnet_irq"]


def _imports(path: str) -> List[str]:
    """module_utils names a file imports from this collection, at any depth (lazy imports too)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and (n.module or "").startswith(MU + "."):
            rel = n.module[len(MU) + 1:]
            if os.path.isdir(os.path.join(PLUGINS, "module_utils", *rel.split("."))):   # from MU.pkg import _file
                out += [rel + "." + a.name for a in n.names]
            else:                                                                        # from MU.pkg._file import name
                out.append(rel)
    return out


def _closure(module: str) -> Set[str]:
    seen: Set[str] = set()
    todo = _imports(os.path.join(PLUGINS, "modules", module + ".py"))
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += _imports(os.path.join(PLUGINS, "module_utils", *name.split(".")) + ".py")
    return seen


@pytest.mark.parametrize("module, never", [
    ("sysctl_tuning", {"tuning._concerns", "qos._domain", "stack._domain", "irq._domain", "stack._pkg"}),
    ("nic_tuning", {"tuning._concerns", "qos._domain", "stack._domain", "irq._domain", "stack._pkg", "sysctl._domain"}),
    ("managed_files", {"tuning._concerns", "qos._domain", "stack._domain", "irq._domain", "stack._pkg", "sysctl._domain"}),
    ("rdma_packages", {"tuning._concerns", "qos._domain", "stack._domain", "irq._domain", "sysctl._domain"}),
    ("irq_affinity", {"tuning._concerns", "qos._domain", "stack._domain", "stack._pkg", "sysctl._domain"}),
    ("rdma_stack", {"tuning._concerns", "qos._domain", "irq._domain", "stack._pkg", "sysctl._domain"}),
    # roce_qos selects interfaces as nic_tuning does (nic._select) but plans no NIC change
    ("roce_qos", {"tuning._concerns", "irq._domain", "stack._pkg", "stack._domain", "sysctl._domain", "nic._plan", "nic._guard",
                  "nic._linkfile"}),
])
def test_a_module_ships_only_the_domains_it_writes(module, never):
    """What AnsiballZ ships follows these imports (scripts/payload_sizes.py measures it)."""
    assert _closure(module) & never == set()
    assert {"engine._engine", "engine._domain", "engine._files"} <= _closure(module)


def test_rollback_ships_every_domain():
    assert {"tuning._concerns", "sysctl._domain", "nic._domain", "irq._domain", "services._domain", "stack._pkg", "stack._domain",
            "qos._domain", "engine._files"} <= _closure("tuning_state")
