# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""examples/packer/rdma-node.pkr.hcl passes the tuning role what its contract allows: every
role variable in the provisioner's extra vars is one of roles/tuning/meta/argument_specs.yml, fed
from a Packer variable of the same name and a matching type, whose default the role accepts; and
the build is a bake.  The HCL is read with a small parser of the subset the template uses (no HCL
library in the venv): variable blocks and the provisioner's extra_arguments."""
from __future__ import annotations

import json
import os
import re
from typing import Any, Dict, List, Tuple

import pytest
import yaml

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
TEMPLATE = os.path.join(ROOT, "examples", "packer", "rdma-node.pkr.hcl")
SPECS = os.path.join(ROOT, "roles", "tuning", "meta", "argument_specs.yml")
HCL_TYPES = {"string": "str", "bool": "bool", "number": "int", "list": "list", "map": "dict", "object": "dict"}


def _strip_comments(text: str) -> str:
    return "\n".join(re.sub(r'\s+#.*$|^\s*#.*$', "", line) for line in text.splitlines())


def _block(text: str, start: int) -> Tuple[str, int]:
    """The text between the brace at ``start`` and its match (strings skipped), and the end."""
    depth, i, in_str = 0, start, False
    while i < len(text):
        c = text[i]
        if in_str:
            if c == "\\":
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "{[(":
            depth += 1
        elif c in "}])":
            depth -= 1
            if depth == 0:
                return text[start + 1:i], i + 1
        i += 1
    raise ValueError("unbalanced braces from %d" % start)


def hcl_value(expr: str) -> Any:
    """A literal HCL value (strings, numbers, bools, lists, objects with ``key = value``) as Python."""
    out = []
    for token in re.findall(r'"(?:\\.|[^"\\])*"|[\[\]{}]|[=,\n]|[^\s\[\]{}=,"]+', expr):
        out.append(token)
    js: List[str] = []
    for i, tok in enumerate(out):
        nxt = next((t for t in out[i + 1:] if t != "\n"), "")
        if tok == "\n":
            prev = js[-1] if js else ""
            if prev not in ("", ",", "[", "{", ":") and nxt not in ("]", "}", ""):
                js.append(",")
            continue
        if tok == "=":
            js.append(":")
        elif nxt == "=" and not tok.startswith('"'):
            js.append(json.dumps(tok))
        elif tok in ("true", "false") or re.match(r"^-?\d+(\.\d+)?$", tok) or tok in "[]{},":
            js.append(tok)
        elif tok.startswith('"'):
            js.append(tok)
        else:
            raise ValueError("not a literal: %r" % tok)
    text = "".join(js)
    text = re.sub(r",\s*([\]}])", r"\1", text)
    return json.loads(text)


def variables(text: str) -> Dict[str, Dict[str, Any]]:
    out = {}
    for m in re.finditer(r'^variable\s+"([^"]+)"\s*{', text, re.M):
        body, _end = _block(text, m.end() - 1)
        var: Dict[str, Any] = {}
        t = re.search(r"^\s*type\s*=\s*([a-z]+)", body, re.M)
        var["type"] = t.group(1) if t else None
        d = re.search(r"^\s*default\s*=\s*", body, re.M)
        if d:
            rest = body[d.end():]
            if rest[0] in "[{":
                inner, end = _block(rest, 0)
                var["default"] = hcl_value(rest[:end])
            else:
                var["default"] = hcl_value(rest.splitlines()[0])
        out[m.group(1)] = var
    return out


def extra_arguments(text: str) -> Tuple[List[str], Dict[str, str]]:
    """The plain string arguments and the jsonencode({key = var.name}) map of extra_arguments."""
    m = re.search(r"extra_arguments\s*=\s*\[", text)
    body, _end = _block(text, m.end() - 1)
    plain = re.findall(r'^\s*((?:"[^"]*",?\s*)+)$', body, re.M)
    strings = [s for line in plain for s in re.findall(r'"([^"]*)"', line)]
    enc = re.search(r"jsonencode\(\s*{", body)
    mapping: Dict[str, str] = {}
    if enc:
        inner, _e = _block(body, enc.end() - 1)
        for key, var in re.findall(r"^\s*([a-z_]+)\s*=\s*var\.([a-z_]+)\s*$", inner, re.M):
            mapping[key] = var
    return strings, mapping


with open(TEMPLATE, encoding="utf-8") as _f:
    TEXT = _strip_comments(_f.read())
with open(SPECS, encoding="utf-8") as _f:
    OPTIONS = yaml.safe_load(_f)["argument_specs"]["main"]["options"]
VARS = variables(TEXT)
ARGS, PASSED = extra_arguments(TEXT)


@pytest.mark.parametrize("expr, value", [
    ('"mpi"', "mpi"),
    ("true", True),
    ("[]", []),
    ("{}", {}),
    ('[\n  { driver = "mlx5_core", match = "driver", mtu = 9000 }\n]',
     [{"driver": "mlx5_core", "match": "driver", "mtu": 9000}]),
    ('{\n  a = "1"\n  b = 2\n}', {"a": "1", "b": 2}),
])
def test_the_small_hcl_parser(expr, value):
    assert hcl_value(expr) == value


def test_the_build_is_a_bake():
    assert ["-e", "rdma_mode=bake"] == ARGS[:2]
    assert "bake" in OPTIONS["rdma_mode"]["choices"]
    assert PASSED, "no role variables passed"


@pytest.mark.parametrize("key", sorted(PASSED))
def test_each_passed_role_variable_is_in_the_contract_with_its_packer_variable(key):
    assert key in OPTIONS, "%s is not a variable of the tuning role" % key
    assert PASSED[key] == key, "the role variable %s comes from var.%s" % (key, PASSED[key])
    var = VARS[key]
    assert HCL_TYPES[var["type"]] == OPTIONS[key]["type"], (key, var["type"], OPTIONS[key]["type"])


def test_every_rdma_packer_variable_is_passed():
    assert sorted(v for v in VARS if v.startswith("rdma_")) == sorted(PASSED)


def test_the_defaults_pass_the_role_argument_spec():
    spec = dict((k, dict((f, v) for f, v in o.items() if f in ("type", "choices", "elements", "default")))
                for k, o in OPTIONS.items())
    params = dict((k, VARS[k]["default"]) for k in PASSED if "default" in VARS[k])
    params["rdma_mode"] = "bake"
    result = ArgumentSpecValidator(spec).validate(params)
    assert result.error_messages == []
    assert params["rdma_nic_match"] != "mac"


def test_the_default_interfaces_can_be_baked_without_the_nics():
    from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _linkfile, _plan, _select
    for i, entry in enumerate(VARS["rdma_interfaces"]["default"]):
        kind = [s for s in ("name", "driver") if s in entry]
        assert kind, "interfaces[%d] selects by name or driver (glob/subnet need the NICs)" % i
        match = entry.get("match", VARS["rdma_nic_match"]["default"])
        assert match in _linkfile.MATCHES and match not in ("auto", "mac")
        absent: Dict[str, Any] = {}
        _select.select([entry], {}, {}, absent)
        out = _plan.plan({}, {}, "persist", False, [], False, {}, "/var/lib/hpcnet-rdma", absent=absent, match=match)
        assert [c.key for c in out["plan"]][0].startswith("file:/etc/systemd/network/")
