# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One vocabulary across the modules (docs/conventions.md): the fail/warn switch for what the node
cannot do is ``on_unsupported`` everywhere (old names kept as aliases), rollback's is
``on_unrestorable``, and every ``mode`` is ``runtime|persist|both``."""
from __future__ import annotations

from typing import Any, Dict, Iterator, Tuple

import pytest

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from .test_docs import MODULES, resolved_doc, spec_of

SWITCHES = {"on_unsupported", "on_unrestorable"}
# module, old name, the module's other required options
ALIASES = [
    ("sysctl_tuning", "on_unsettable", {"sysctls": {"vm.swappiness": "10"}}),
    ("rdma_stack", "on_not_possible", {}),
]


def options(spec: Dict[str, Any], where: str = "") -> Iterator[Tuple[str, Dict[str, Any]]]:
    for name, opt in spec.items():
        yield where + name, opt
        if opt.get("options"):
            yield from options(opt["options"], where + name + ".")


@pytest.mark.parametrize("name", MODULES)
def test_fail_warn_switches_and_modes_use_one_vocabulary(name):
    bad = []
    for path, opt in options(spec_of(name)):
        leaf = path.rsplit(".", 1)[-1]
        if sorted(opt.get("choices") or []) == ["fail", "warn"] and leaf not in SWITCHES:
            bad.append("%s: a fail/warn switch is called on_unsupported (or on_unrestorable for rollback)" % path)
        if leaf == "mode" and opt.get("choices") and opt["choices"] != ["runtime", "persist", "both"]:
            bad.append("%s: modes are runtime|persist|both, got %s" % (path, opt["choices"]))
    assert bad == []


@pytest.mark.parametrize("name, alias, required", ALIASES)
def test_old_switch_name_is_a_documented_alias(name, alias, required):
    spec = spec_of(name)
    assert alias in spec["on_unsupported"].get("aliases", [])
    assert alias in resolved_doc(name)["options"]["on_unsupported"].get("aliases", [])
    params = dict(required, **{alias: "warn"})
    result = ArgumentSpecValidator(spec).validate(params)
    assert result.error_messages == []
    assert result.validated_parameters["on_unsupported"] == "warn"
