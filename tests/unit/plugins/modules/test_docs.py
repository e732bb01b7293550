# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every module's documentation, with its doc fragments resolved the way ansible-doc does, agrees
with its ARGUMENT_SPEC (names, types, elements, choices, defaults, required) at every level, and
the shared pieces (journal_dir, mode, interface selectors, attributes) say the same in docs and spec.
"""
from __future__ import annotations

import copy
import importlib
import importlib.util
import os
from typing import Any, Dict, List, Optional

import pytest
import yaml

from ansible.utils.plugin_docs import get_docstring

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _dcb_parse
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _journal_file
from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _observe as _qosobserve
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _spec

COLLECTION = "hpcnet.rdma"
PKG = "ansible_collections.hpcnet.rdma.plugins"
MODULES_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "plugins", "modules")
MODULES = sorted(f[:-3] for f in os.listdir(MODULES_DIR) if f.endswith(".py") and not f.startswith("_"))


class Fragments(object):
    """The part of ansible's fragment loader that ``add_fragments`` uses: ``get(name)``.

    ``hpcnet.rdma.NAME`` is ``plugins/doc_fragments/NAME.py``; like the real loader it answers None
    for ``hpcnet.rdma.NAME.VAR``, and ``add_fragments`` then asks for ``hpcnet.rdma.NAME`` and
    reads the variable ``VAR``.  Names of other collections are unknown here (None).
    """

    def get(self, name: str) -> Optional[type]:
        prefix = COLLECTION + "."
        short = name[len(prefix):] if name.startswith(prefix) else ""
        if not short or "." in short:
            return None
        try:
            module = importlib.import_module("%s.doc_fragments.%s" % (PKG, short))
        except ImportError:
            return None
        return type("Fragment", (module.ModuleDocFragment,), {"ansible_name": name})


def resolved_doc(name: str) -> Dict[str, Any]:
    doc, _examples, _returns, _meta = get_docstring(os.path.join(MODULES_DIR, name + ".py"), Fragments(),
                                                    collection_name=COLLECTION, is_module=True)
    return doc


def spec_of(name: str) -> Dict[str, Any]:
    """The module's ARGUMENT_SPEC as its source defines it, from a fresh load of the file.

    Not the imported module's: ansible's validator fills suboption defaults into a list default in
    place (roce_qos_info's ``[{glob: "*"}]``), so after other tests ran it the spec reads differently.
    """
    loader_spec = importlib.util.spec_from_file_location("_doc_check_" + name, os.path.join(MODULES_DIR, name + ".py"))
    module = importlib.util.module_from_spec(loader_spec)
    loader_spec.loader.exec_module(module)
    return module.ARGUMENT_SPEC


def differences(spec: Dict[str, Any], docs: Dict[str, Any], where: str) -> List[str]:
    """What differs between argument-spec options and documented options, recursively."""
    out = []
    for missing in sorted(set(spec) - set(docs)):
        out.append("%s%s: in the argument_spec, not documented" % (where, missing))
    for extra in sorted(set(docs) - set(spec)):
        out.append("%s%s: documented, not in the argument_spec" % (where, extra))
    for name in sorted(set(spec) & set(docs)):
        s, d = spec[name], docs[name]
        for field, fallback in (("type", "str"), ("elements", None), ("choices", None), ("default", None),
                                ("required", False)):
            in_spec, in_docs = s.get(field, fallback), d.get(field, fallback)
            if in_spec != in_docs:
                out.append("%s%s.%s: spec %r, docs %r" % (where, name, field, in_spec, in_docs))
        out.extend(differences(s.get("options") or {}, d.get("suboptions") or {}, "%s%s." % (where, name)))
    return out


@pytest.mark.parametrize("spec, docs, expected", [
    ({"a": {"type": "int"}}, {"a": {"type": "int"}}, []),
    ({"a": {}}, {"a": {"type": "str"}}, []),
    ({"a": {"type": "int"}}, {}, ["a: in the argument_spec, not documented"]),
    ({}, {"a": {"type": "int"}}, ["a: documented, not in the argument_spec"]),
    ({"a": {"default": "x"}}, {"a": {"default": "y"}}, ["a.default: spec 'x', docs 'y'"]),
    ({"a": {"choices": [1, 2]}}, {"a": {"choices": [1]}}, ["a.choices: spec [1, 2], docs [1]"]),
    ({"a": {"required": True}}, {"a": {}}, ["a.required: spec True, docs False"]),
    ({"a": {"type": "list", "elements": "str"}}, {"a": {"type": "list"}}, ["a.elements: spec 'str', docs None"]),
    ({"a": {"type": "dict", "options": {"b": {"type": "int"}}}},
     {"a": {"type": "dict", "suboptions": {"b": {"type": "bool"}}}}, ["a.b.type: spec 'int', docs 'bool'"]),
])
def test_differences_finds_every_kind_of_mismatch(spec: Dict[str, Any], docs: Dict[str, Any],
                                                  expected: List[str]) -> None:
    assert differences(spec, docs, "") == expected


def test_every_module_is_checked() -> None:
    assert len(MODULES) >= 11 and "tuning_state" in MODULES and "fabric_info" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docs_match_argument_spec(name: str) -> None:
    doc = resolved_doc(name)
    assert doc["module"] == name
    assert differences(spec_of(name), doc["options"], "") == []


# Modules with no state to diff: benchmark servers (processes, nothing persists) and the controller-side
# benchmark actions (a run or report file on the controller, never a node's configuration).
NO_DIFF = ("bench_report", "bench_run", "bench_server", "tuning_summary")


@pytest.mark.parametrize("name", MODULES)
def test_attributes(name: str) -> None:
    attributes = resolved_doc(name)["attributes"]
    assert sorted(attributes) == ["check_mode", "diff_mode", "platform"]
    for attribute in attributes.values():
        assert attribute["description"] and attribute["support"] in ("full", "partial", "none", "N/A")
    assert attributes["check_mode"]["support"] == "full"
    assert attributes["diff_mode"]["support"] == ("none" if name.endswith("_info") or name in NO_DIFF else "full")
    assert attributes["platform"]["platforms"] == "linux"
    if not name.endswith("_info") and name not in NO_DIFF:
        assert attributes["diff_mode"].get("details"), "say what the diff of %s shows" % name


@pytest.mark.parametrize("name", MODULES)
def test_examples_use_documented_options(name: str) -> None:
    _doc, examples, returns, _meta = get_docstring(os.path.join(MODULES_DIR, name + ".py"), Fragments(),
                                                   collection_name=COLLECTION, is_module=True)
    assert returns, "%s documents no return values" % name
    tasks = [t for t in yaml.safe_load(examples) if COLLECTION + "." + name in t]
    assert tasks, "no example calls %s.%s" % (COLLECTION, name)
    spec = spec_of(name)
    for task in tasks:
        args = task[COLLECTION + "." + name] or {}
        assert sorted(set(args) - set(spec)) == [], task.get("name")


def test_shared_journal_dir_is_one_default() -> None:
    docs = resolved_doc("tuning_state")["options"]["journal_dir"]
    assert docs["default"] == _journal_file.DEFAULT_DIR == _spec.JOURNAL_DIR["journal_dir"]["default"]
    users = [m for m in MODULES if "journal_dir" in spec_of(m)]
    assert len(users) >= 8
    for name in users:
        assert spec_of(name)["journal_dir"] == _spec.JOURNAL_DIR["journal_dir"], name


def test_shared_mode_spec() -> None:
    users = [m for m in MODULES if "mode" in spec_of(m)]
    assert len(users) >= 5
    for name in users:
        assert spec_of(name)["mode"] == _spec.MODE["mode"], name
        assert resolved_doc(name)["options"]["mode"]["choices"] == list(_spec.MODES), name


def test_shared_selector() -> None:
    for name in ("nic_tuning", "roce_qos", "roce_qos_info"):
        options = spec_of(name)["interfaces"]["options"]
        for selector, spec in _spec.SELECTOR.items():
            assert options[selector] == spec, (name, selector)


def test_argument_spec_copies_and_refuses_a_name_twice() -> None:
    before = copy.deepcopy(_spec.MODE)
    spec = _spec.argument_spec({"x": {"type": "int"}}, _spec.MODE, _spec.JOURNAL_DIR)
    assert list(spec) == ["x", "mode", "journal_dir"]
    spec["mode"]["choices"].append("never")
    assert _spec.MODE == before
    with pytest.raises(ValueError, match="'mode' is defined twice"):
        _spec.argument_spec({"mode": {"type": "str"}}, _spec.MODE)


def returns_of(name: str) -> Dict[str, Any]:
    return get_docstring(os.path.join(MODULES_DIR, name + ".py"), Fragments(), collection_name=COLLECTION,
                         is_module=True)[2]


def without_version_added(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: without_version_added(v) for k, v in doc.items() if k not in ("version_added", "version_added_collection")}
    if isinstance(doc, list):
        return [without_version_added(v) for v in doc]
    return doc


def test_verify_info_documents_the_qos_interfaces_as_roce_qos_info_does() -> None:
    """verify_info's ``qos`` is roce_qos_info's result: its per-interface keys (ets, buffer, ...) are documented
    in both modules (RETURN has no doc fragments), and the copies must not drift apart."""
    own = returns_of("roce_qos_info")["interfaces"]["contains"]
    copied = returns_of("verify_info")["qos"]["contains"]["interfaces"]["contains"]
    # version_added is each module's own (verify_info's qos came whole in 0.2.0, roce_qos_info's ets and buffer then)
    assert without_version_added(copied) == without_version_added(own)
    assert sorted(returns_of("verify_info")["qos"]["contains"]) == sorted(returns_of("roce_qos_info"))


def test_roce_qos_info_documents_every_ets_and_buffer_key() -> None:
    """Every key ``dcb ets``/``dcb buffer`` and the ``mlnx_qos`` report give, and the unreadable form, is documented."""
    contains = returns_of("roce_qos_info")["interfaces"]["contains"]
    ets = _dcb_parse.parse_dcb_ets("prio-tc 0:0 1:0 2:0 3:3 4:0 5:0 6:0 7:0\ntc-tsa 0:ets 1:strict 2:strict 3:ets 4:strict "
                                   "5:strict 6:strict 7:strict\ntc-bw 0:50 1:0 2:0 3:50 4:0 5:0 6:0 7:0\n")
    buffer = _dcb_parse.parse_dcb_buffer("prio-buffer 0:0 1:0 2:0 3:1 4:0 5:0 6:0 7:0\n"
                                         "buffer-size 0:10Kb 1:10Kb 2:0b 3:0b 4:0b 5:0b 6:0b 7:0b\ntotal-size 1Mb\n")
    mlnx = _qosobserve._mlnx_ets({"tc": {0: {"tsa": "ets", "bw": 100}}, "prio_tc": {0: 0}})
    unreadable = {"readable": False, "reason": "unreadable: x"}
    for key, values in (("ets", (ets, mlnx, unreadable)), ("buffer", (buffer, unreadable))):
        documented = set(contains[key]["contains"])
        for value in values:
            assert set(value) <= documented, (key, sorted(set(value) - documented))
