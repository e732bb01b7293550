# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Each role's README variable table equals what scripts/role_docs.py generates from its
meta/argument_specs.yml (the one contract), and the generator renders what the specs say."""
from __future__ import annotations

import importlib.util
import os

import pytest

import ansible_collections.hpcnet.rdma as collection

ROOT = list(collection.__path__)[0]
_spec = importlib.util.spec_from_file_location("role_docs", os.path.join(ROOT, "scripts", "role_docs.py"))
role_docs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(role_docs)

ROLES = ["fabric_app_config", "rdma_bench", "rdma_core", "rdma_health", "rdma_metrics", "rdma_topology", "rdma_verify", "tuning"]


def test_every_role_with_argument_specs_is_covered():
    assert [os.path.basename(r) for r in role_docs.role_dirs(ROOT)] == ROLES


@pytest.mark.parametrize("role", ROLES)
def test_readme_table_matches_argument_specs(role):
    assert not role_docs.stale(os.path.join(ROOT, "roles", role)), (
        "roles/%s/README.md disagrees with its meta/argument_specs.yml: run python3 scripts/role_docs.py" % role)


@pytest.mark.parametrize("role", ROLES)
def test_every_option_has_a_row(role):
    specs, _path, readme = role_docs.load(os.path.join(ROOT, "roles", role))
    options = specs["argument_specs"]["main"]["options"]
    block = readme.split(role_docs.BEGIN, 1)[1].split(role_docs.END, 1)[0]
    for name in options:
        assert "| `%s` |" % name in block, name


SPECS = {"argument_specs": {"main": {"options": {
    "x_mode": {"type": "str", "choices": ["live", "bake"], "default": "live", "description": "C(live) or C(bake)."},
    "x_list": {"type": "list", "elements": "dict", "default": [], "description": ["One.", "Two | three."]},
    "x_req": {"type": "str", "required": True, "description": "Needed; see M(hpcnet.rdma.tuning_state)."},
    "x_opt": {"type": "dict", "description": "I(Optional).", "options": {"sub": {"type": "int", "description": "B(n)."}}},
}}}}


@pytest.mark.parametrize("row", [
    '| `x_list` | list of dict | `[]` |  | One. Two \\| three. |',
    '| `x_mode` | str | `"live"` | `"live"`, `"bake"` | `live` or `bake`. |',
    '| `x_opt` | dict | unset |  | *Optional*. |',
    '| `x_opt.sub` | int | unset |  | **n**. |',
    '| `x_req` | str | required |  | Needed; see `hpcnet.rdma.tuning_state`. |',
])
def test_rows_render_the_spec(row):
    assert row in role_docs.table(SPECS).splitlines()


@pytest.mark.parametrize("readme, expected_head, expected_tail", [
    ("# r\n\nintro\n\n%s\nold table\n%s\n\n## After\n" % (role_docs.BEGIN, role_docs.END), "# r\n\nintro\n\n", "\n\n## After\n"),
    ("# r\n\nno markers yet\n", "# r\n\nno markers yet\n\n## Variables\n\n", "\n"),
])
def test_render_replaces_only_between_the_markers(readme, expected_head, expected_tail):
    out = role_docs.render(readme, SPECS)
    assert out.startswith(expected_head + role_docs.BEGIN)
    assert out.endswith(role_docs.END + expected_tail)
    assert "old table" not in out
    assert role_docs.render(out, SPECS) == out


def test_check_fails_on_a_stale_readme(tmp_path):
    role = tmp_path / "r"
    (role / "meta").mkdir(parents=True)
    (role / "meta" / "argument_specs.yml").write_text(
        "argument_specs:\n  main:\n    options:\n      r_a: {type: bool, default: true, description: A.}\n")
    (role / "README.md").write_text("# r\n\n%s\n%s\n" % (role_docs.BEGIN, role_docs.END))
    assert role_docs.main(["--check", str(role)]) == 1
    assert role_docs.main([str(role)]) == 0
    assert role_docs.main(["--check", str(role)]) == 0
    assert "| `r_a` | bool | `true` |  | A. |" in (role / "README.md").read_text()
