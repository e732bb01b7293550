# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Argument-spec pieces several modules share, written once.

Each piece is a mapping of option name to its spec; :func:`argument_spec` adds the pieces a
module uses to its own options.  Their documentation lives in the doc fragments of the same
name (``plugins/doc_fragments/journal.py``, ``mode.py``, ``interfaces.py``);
``tests/unit/plugins/modules/test_docs.py`` checks every module's spec against its resolved docs.
"""
from __future__ import annotations

import copy

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._journal_file import DEFAULT_DIR

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict
    Spec = Dict[str, Dict[str, Any]]

MODES = ("runtime", "persist", "both")

# The ways one interface entry can select NICs (_link checks that an entry gives exactly one).
SELECTORS = ("name", "glob", "driver", "subnet")

# Where the on-node journal lives (doc fragment hpcnet.rdma.journal).
JOURNAL_DIR: Spec = {"journal_dir": {"type": "path", "default": DEFAULT_DIR}}

# The run a call belongs to and its release scope (doc fragment hpcnet.rdma.run; _engine reads them).
RUN: Spec = {"journal_run": {"type": "str"}, "release_scope": {"type": "str"}}

# Live values, boot-time files, or both (doc fragment hpcnet.rdma.mode).
MODE: Spec = {"mode": {"type": "str", "choices": list(MODES), "default": "both"}}

# node_tuning's summary option: what the action plugin (plugins/action/node_tuning.py) needs, on the
# controller, to summarize a call that found the node in sync (the tuning role's fast path).
SUMMARY: Spec = {"summary": {"type": "dict", "options": {
    "profile": {"type": "str"},
    "digest": {"type": "str"},
    "rdma_mode": {"type": "str", "choices": ["live", "bake"]},
    "run": {"type": "str"},
    "scopes": {"type": "list", "elements": "str", "default": []},
    "stats_key": {"type": "str", "default": "rdma_tuning", "no_log": False},
}}}

# The suboptions of one interface selection; _link checks that an entry gives exactly one.
SELECTOR: Spec = dict((name, {"type": "str"}) for name in SELECTORS)


def argument_spec(options: Spec, *shared: Spec) -> Spec:
    """``options`` plus each shared piece, copied, so no module changes another's spec.

    Also builds suboptions (``options=argument_spec(SELECTOR, settings)``).  A name defined
    twice is a programming error and raises ``ValueError``.
    """
    spec: Spec = {}
    for piece in (options,) + shared:
        for name, option in piece.items():
            if name in spec:
                raise ValueError("option %r is defined twice" % name)
            spec[name] = copy.deepcopy(option)
    return spec
