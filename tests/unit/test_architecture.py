# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The rules docs/architecture.md states, checked on the tree: which layer may import which.

Layers, bottom up (plugins/module_utils/): node (the host, the runner, parsing, the tool files) ->
engine (engine, journal, plan, the domain contract, the file domain) -> the concerns (sysctl, nic,
irq, qos, stack, services, files) -> what reads or runs over all of them (facts, bench, tuning, health,
topology).
A file imports from its own layer and the layers below it, never above.  Controller code
(action plugins, plugin_utils, filters) never imports the node layer; node code never imports
controller code.  irq/_domain.py and irq/_applier.py, joined, are also the boot-time applier on the
node: they import nothing of the collection there.  No file of module_utils or plugin_utils is over
400 lines.
"""
from __future__ import annotations

import ast
import os
from typing import Dict, List, Tuple

import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
PLUGINS = os.path.join(ROOT, "plugins")
MU_DIR = os.path.join(PLUGINS, "module_utils")
COLL = "ansible_collections.hpcnet.rdma.plugins"
MU = COLL + ".module_utils"

CONCERNS = ("sysctl", "nic", "irq", "qos", "stack", "services", "files")
# package -> the packages it may import from (its own included)
MAY_IMPORT = dict(
    [("node", {"node"}), ("engine", {"node", "engine"})]
    + [(c, {"node", "engine"} | set(CONCERNS)) for c in CONCERNS]
    + [(top, {"node", "engine", "facts", "bench", "tuning", "health", "topology"} | set(CONCERNS))
       for top in ("facts", "bench", "tuning", "health", "topology")])
CONTROLLER = ("action", "plugin_utils", "filter", "callback", "lookup", "test")
STANDALONE = ("irq/_domain.py", "irq/_applier.py")   # installed on the node as one file, run by python3 alone


def _py_files(top: str) -> List[str]:
    out = []
    for folder, _dirs, names in os.walk(top):
        out += [os.path.join(folder, n) for n in names if n.endswith(".py")]
    return sorted(out)


def _imports(path: str) -> List[Tuple[int, str]]:
    """(line, dotted name under ansible_collections.hpcnet.rdma.plugins) of every import of this
    collection in a file, lazy ones too; ``from pkg import _file`` counts as pkg._file."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and (n.module or "").startswith(COLL + "."):
            rel = n.module[len(COLL) + 1:]
            out += [(n.lineno, rel + "." + a.name) for a in n.names]
        elif isinstance(n, ast.Import):
            out += [(n.lineno, a.name[len(COLL) + 1:]) for a in n.names if a.name.startswith(COLL + ".")]
    return out


def _layer_of(dotted: str) -> str:
    """plugin_utils._x -> plugin_utils; module_utils.node._host(.Host) -> node."""
    parts = dotted.split(".")
    return parts[1] if parts[0] == "module_utils" and len(parts) > 1 else parts[0]


def test_every_module_utils_file_is_in_a_known_package():
    loose = [os.path.relpath(p, MU_DIR) for p in _py_files(MU_DIR)
             if os.path.relpath(p, MU_DIR).split(os.sep)[0] not in MAY_IMPORT and not p.endswith("__init__.py")]
    assert loose == [], "module_utils files outside the layer packages (%s): %s" % (", ".join(sorted(MAY_IMPORT)), loose)


@pytest.mark.parametrize("package", sorted(MAY_IMPORT))
def test_a_layer_imports_only_itself_and_the_layers_below(package):
    wrong = []
    for path in _py_files(os.path.join(MU_DIR, package)):
        for line, dotted in _imports(path):
            layer = _layer_of(dotted)
            if not dotted.startswith("module_utils.") or layer not in MAY_IMPORT[package]:
                wrong.append("%s:%d imports %s" % (os.path.relpath(path, PLUGINS), line, dotted))
    assert wrong == [], "%s/ may import only %s:\n%s" % (package, ", ".join(sorted(MAY_IMPORT[package])), "\n".join(wrong))


def test_controller_code_never_imports_the_node_layer():
    wrong = []
    for kind in CONTROLLER:
        for path in _py_files(os.path.join(PLUGINS, kind)):
            wrong += ["%s:%d imports %s" % (os.path.relpath(path, PLUGINS), line, d)
                      for line, d in _imports(path) if d.startswith("module_utils.node.")]
    assert wrong == []


def test_modules_import_only_module_utils():
    """A module runs on the node: nothing of the controller side (plugin_utils, action) can be in its payload."""
    wrong = []
    for path in _py_files(os.path.join(PLUGINS, "modules")) + _py_files(MU_DIR):
        wrong += ["%s:%d imports %s" % (os.path.relpath(path, PLUGINS), line, d)
                  for line, d in _imports(path) if not d.startswith("module_utils.")]
    assert wrong == []


@pytest.mark.parametrize("rel", STANDALONE)
def test_the_boot_applier_imports_nothing_of_the_collection_when_loaded(rel):
    """Its module level imports only the standard library; inside a function it may name the collection's
    error types, guarded for the node where the collection is not there."""
    with open(os.path.join(MU_DIR, rel), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert [ast.dump(n) for n in top if "ansible" in ast.dump(n)] == []


MAX_LINES = 400
LONG_FILES = ()   # none: the IRQ boot applier is two files joined when installed (irq/_module.applier_source)


def test_no_file_of_module_utils_or_plugin_utils_is_over_400_lines():
    """Issue 26: a file of plugins/module_utils or plugins/plugin_utils holds one concern's piece,
    MAX_LINES at most (plugins/doc_fragments and plugins/modules are mostly documentation: not counted)."""
    long = []
    for kind in ("module_utils", "plugin_utils"):
        for path in _py_files(os.path.join(PLUGINS, kind)):
            rel = os.path.relpath(path, PLUGINS).replace(os.sep, "/")
            with open(path, encoding="utf-8") as f:
                lines = len(f.read().splitlines())
            if lines > MAX_LINES and rel not in LONG_FILES:
                long.append("%s: %d lines" % (rel, lines))
    assert long == [], "split these along their seams (docs/architecture.md):\n%s" % "\n".join(long)


def test_the_rules_hold_against_a_file_that_breaks_them(tmp_path):
    """The checker itself: a node file importing a concern is caught, an engine file importing the node is not."""
    bad = tmp_path / "x.py"
    bad.write_text("from %s.irq import _domain\nfrom %s.node._host import Host\n" % (MU, MU))
    found = [(_layer_of(d)) for _line, d in _imports(str(bad))]
    assert found == ["irq", "node"]
    assert [layer for layer in found if layer not in MAY_IMPORT["node"]] == ["irq"]
    assert [layer for layer in found if layer not in MAY_IMPORT["engine"]] == ["irq"]


def _layers_doc() -> Dict[str, str]:
    with open(os.path.join(ROOT, "docs", "architecture.md"), encoding="utf-8") as f:
        text = f.read()
    return dict((name, text) for name in MAY_IMPORT if ("`%s/`" % name) in text)


def test_the_map_names_every_package():
    """docs/architecture.md has a paragraph per folder: every package is named there as `name/`."""
    assert sorted(_layers_doc()) == sorted(MAY_IMPORT)


def _concern_table() -> List[List[str]]:
    """The rows of docs/architecture.md's "One word per concern" table, cells without backquotes."""
    with open(os.path.join(ROOT, "docs", "architecture.md"), encoding="utf-8") as f:
        text = f.read().split("## One word per concern", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip("|").split("|") for line in text.splitlines() if line.startswith("| ")]
    return [[cell.strip().replace("`", "") for cell in row] for row in rows[1:]]   # less the header


def _tuning_role() -> Tuple[List[str], str, Dict[str, str]]:
    """The tuning role's concern tags, the text its scopes are written in, node_tuning's sections."""
    import yaml
    from ansible_collections.hpcnet.rdma.plugins.module_utils.tuning import _module

    role = os.path.join(ROOT, "roles", "tuning")
    with open(os.path.join(role, "vars", "main.yml"), encoding="utf-8") as f:
        text = f.read()
    with open(os.path.join(role, "tasks", "app_config.yml"), encoding="utf-8") as f:
        text += f.read()
    with open(os.path.join(role, "tasks", "stack.yml"), encoding="utf-8") as f:
        text += f.read()
    return yaml.safe_load(text.split("\n---", 1)[0])["__rdma_concern_tags"], text, dict(_module.SECTIONS)


def test_one_word_per_concern():
    """Each concern's word is its package, its node_tuning section, its role tag, its journal scope and
    its test folder, as the table says; every package and every role tag has its row."""
    rows = _concern_table()
    tags, role_text, sections = _tuning_role()
    assert sorted(r[0] for r in rows) == sorted(set(CONCERNS) | set(tags))
    for word, package, module, tag, scope, tests in rows:
        assert os.path.isdir(os.path.join(MU_DIR, package.rstrip("/"))), (word, package)
        assert os.path.isdir(os.path.join(ROOT, tests.rstrip("/"))), (word, tests)
        if word in CONCERNS:
            assert package == word + "/" and tests.endswith("/%s/" % word), word
        if word in sections:
            assert module.startswith("%s (%s)" % (sections[word], word)), (word, module)
        if tag != "-":
            assert tag == word and tag in tags and scope == "tuning." + word, word
            assert ("tuning." + word) in role_text, word
