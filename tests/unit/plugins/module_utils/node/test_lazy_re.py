# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""node/_parsing.lazy_re: module patterns compiled on first use (the health check used 26 of the 95 it made
on a lab VM).  It answers as the compiled pattern does, compiles once - and since a pattern that does not
compile would now fail at its first use instead of at import, every module-level one is compiled here."""
from __future__ import annotations

import importlib
import os
import re

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _parsing
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import lazy_re

MODULE_UTILS = os.path.dirname(os.path.dirname(_parsing.__file__))


def test_compiled_on_first_use_and_answers_as_the_compiled_pattern():
    pat = lazy_re(r"^(?P<k>\w+)=(?P<v>\d+)$", re.MULTILINE)
    assert pat.__dict__["_compiled"] is None
    text = "a=1\nb=x\nc=3\n"
    real = re.compile(r"^(?P<k>\w+)=(?P<v>\d+)$", re.MULTILINE)
    assert [m.groupdict() for m in pat.finditer(text)] == [m.groupdict() for m in real.finditer(text)]
    assert pat.search(text).group("v") == "1" and pat.match("zz") is None and pat.sub("-", text) == real.sub("-", text)
    assert pat.pattern == real.pattern and pat.flags == real.flags and pat.groupindex == real.groupindex
    compiled = pat.__dict__["_compiled"]
    pat.findall(text)
    assert pat.__dict__["_compiled"] is compiled and pat.__dict__["search"] == compiled.search   # kept, not again
    assert "lazy_re('^(?P<k>" in repr(pat)


def test_a_bad_pattern_fails_at_its_first_use():
    bad = lazy_re(r"(unclosed")
    with pytest.raises(re.error):
        bad.match("x")


def test_every_module_level_pattern_of_module_utils_compiles():
    found = 0
    for dirpath, _dirs, files in os.walk(MODULE_UTILS):
        for name in sorted(files):
            if not name.endswith(".py") or name == "__init__.py":
                continue
            rel = os.path.relpath(os.path.join(dirpath, name[:-3]), MODULE_UTILS).replace(os.sep, ".")
            mod = importlib.import_module("ansible_collections.hpcnet.rdma.plugins.module_utils." + rel)
            for attr, value in sorted(vars(mod).items()):
                if isinstance(value, lazy_re):
                    assert value.pattern, "%s.%s" % (rel, attr)          # compiles it
                    found += 1
    assert found >= 40
