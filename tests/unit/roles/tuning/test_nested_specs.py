# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The tuning role's nested inputs are typed like the modules they feed (issue 29): rdma_interfaces
entries as nic_tuning's interfaces, rdma_roce_qos as roce_qos' options - derived here from the
modules' own ARGUMENT_SPECs, so the role's meta/argument_specs.yml cannot drift from them - and a
bad nested value fails in the role's argument validation on the controller, naming the field.
(tests/unit/roles/tuning/test_playbooks.py runs the same bad value through the real play.)"""
from __future__ import annotations

import glob
import os
from typing import Any, Dict

import pytest
import yaml

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

import ansible_collections.hpcnet.rdma as collection
from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _module as nic
from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _module as qos

ROOT = list(collection.__path__)[0]
with open(os.path.join(ROOT, "roles", "tuning", "meta", "argument_specs.yml"), encoding="utf-8") as _f:
    SPEC = yaml.safe_load(_f)["argument_specs"]["main"]["options"]

# roce_qos options the role sets itself (mode, journal, run) - not the user's; and the role's own
# rdma_roce_qos keys for the NCCL/UCX/Open MPI files (fabric_app_config), which roce_qos does not take.
QOS_SET_BY_THE_ROLE = {"mode", "journal_dir", "journal_run", "release_scope"}
QOS_ROLE_ONLY = {"app_config", "hcas", "netdevs", "gid_index"}


def shape(options: Dict[str, Any]) -> Dict[str, Any]:
    """What decides whether a value is accepted: type, elements, choices and the suboptions, per option."""
    return dict((name, (o.get("type", "str"), o.get("elements"), sorted(str(c) for c in o.get("choices") or []),
                        shape(o["options"]) if o.get("options") else None))
                for name, o in options.items())


def errors(value: Dict[str, Any]):
    return ArgumentSpecValidator(SPEC).validate(value, validate_role_argument_spec=True).error_messages


def test_rdma_interfaces_entries_are_nic_tuning_interfaces():
    assert shape(SPEC["rdma_interfaces"]["options"]) == shape(nic.ARGUMENT_SPEC["interfaces"]["options"])


def test_rdma_roce_qos_is_roce_qos_options():
    module = dict((k, v) for k, v in qos.ARGUMENT_SPEC.items() if k not in QOS_SET_BY_THE_ROLE)
    role = dict((k, v) for k, v in SPEC["rdma_roce_qos"]["options"].items() if k not in QOS_ROLE_ONLY)
    assert shape(role) == shape(module)
    assert QOS_ROLE_ONLY <= set(SPEC["rdma_roce_qos"]["options"])


def _nested(options: Dict[str, Any], path: str = ""):
    for name, o in options.items():
        yield path + name, o
        yield from _nested(o.get("options") or {}, path + name + ".")


@pytest.mark.parametrize("var", ["rdma_interfaces", "rdma_roce_qos"])
def test_nested_options_have_no_defaults_or_requirements(var):
    """The profile's nic and qos sections give the defaults (the role merges them): a role default
    would only mislead the docs, and roce_qos' required interfaces are optional here (no QoS)."""
    for path, option in _nested(SPEC[var]["options"]):
        assert "default" not in option and not option.get("required"), path
        assert option.get("description"), path


@pytest.mark.parametrize("value, field", [
    ({"rdma_interfaces": [{"name": "data0", "mtu": "jumbo"}]}, "'mtu' is of type str found in 'rdma_interfaces'"),
    ({"rdma_interfaces": [{"name": "data0", "rings": {"rx": "big"}}]}, "'rx' is of type str found in 'rdma_interfaces -> rings'"),
    ({"rdma_interfaces": [{"name": "data0", "coalesce": {"adaptive_rx": "maybe"}}]}, "'adaptive_rx'"),
    ({"rdma_interfaces": [{"name": "data0", "speed": 100}]}, "rdma_interfaces.speed. Supported parameters include"),
    ({"rdma_interfaces": [{"name": "data0", "match": "serial"}]}, "match"),
    ({"rdma_roce_qos": {"interfaces": [{"nam": "data0"}]}}, "rdma_roce_qos.interfaces.nam. Supported parameters"),
    ({"rdma_roce_qos": {"interfaces": [{"name": "data0"}], "cnp": {"dscp": "af41"}}}, "'dscp' is of type str found in "
     "'rdma_roce_qos -> cnp'"),
    ({"rdma_roce_qos": {"interfaces": [{"name": "data0"}], "ecn": {"np": "sometimes", "priorities": [3]}}}, "'np'"),
])
def test_a_bad_nested_value_fails_naming_the_field(value, field):
    assert any(field in e for e in errors(value)), errors(value)


def _found(data: Any):
    """Every mapping in a YAML document that sets rdma_interfaces or rdma_roce_qos (group vars, a play's
    vars, a Molecule scenario's inventory), as the variables it sets."""
    if isinstance(data, dict):
        given = dict((k, data[k]) for k in ("rdma_interfaces", "rdma_roce_qos") if k in data)
        if given:
            yield given
        for v in data.values():
            yield from _found(v)
    elif isinstance(data, list):
        for v in data:
            yield from _found(v)


def _given(path: str):
    with open(path, encoding="utf-8") as f:
        return list(_found(yaml.safe_load(f)))


GIVEN = [p for p in sorted(glob.glob(os.path.join(ROOT, "inventories", "*", "group_vars", "*.yml"))
                           + glob.glob(os.path.join(ROOT, "examples", "project", "inventory", "group_vars", "*.yml"))
                           + glob.glob(os.path.join(ROOT, "molecule", "*", "*.yml"))
                           + glob.glob(os.path.join(ROOT, "molecule", "*", "vars", "*.yml")))
         if _given(p)]


@pytest.mark.parametrize("path", GIVEN, ids=lambda p: os.path.relpath(p, ROOT))
def test_the_shipped_inventories_pass(path):
    for given in _given(path):
        assert errors(given) == [], given


def test_some_shipped_values_were_checked():
    assert len(GIVEN) >= 8
