# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every domain of the collection: what ``tuning_state`` (and node_tuning's in-sync check) needs to
show, compare and restore any journal key any module wrote.

A module that writes keys hands its engine just the ``DOMAINS`` maps of its own domain files, so its
AnsiballZ payload does not carry the others.  Here every domain file is named, and imported only when
a key of its prefix is met (:func:`for_keys`) or everything is needed (:func:`all_maps`): compiling a
domain file from the module's zip costs the node milliseconds per call, and the no-change rerun's
in-sync check meets only the prefixes the node was tuned with.
A new domain file is added here (``FILES``, ``PREFIXES`` and :func:`_load`), or rollback cannot restore
its keys (tests/unit/plugins/module_utils/engine/test_engine_domains.py checks every ``DOMAINS`` map in
module_utils is listed, with its prefixes).
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Iterable, Tuple
    from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._domain import DomainMap

# The domain files, in the order their maps are handed to an engine.
FILES = ("engine._files", "sysctl._domain", "nic._domain", "irq._domain", "services._domain", "stack._pkg", "stack._domain", "qos._domain")

# Journal key prefix -> the domain file whose DOMAINS map has it.
PREFIXES = {
    "file": "engine._files", "dir": "engine._files", "sysctl": "sysctl._domain", "nic": "nic._domain", "irq": "irq._domain", "service": "services._domain",
    "pkg": "stack._pkg", "kmod": "stack._domain", "rxe": "stack._domain", "rdma": "stack._domain", "devnode": "stack._domain",
    "dcb": "qos._domain", "mlnx_qos": "qos._domain", "ecn": "qos._domain", "rdmacm": "qos._domain",
}


def _load(name: str) -> DomainMap:
    # One import statement per file, written out: AnsiballZ ships the module_utils a module's code names.
    if name == "engine._files":
        from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _files as found
    elif name == "sysctl._domain":
        from ansible_collections.hpcnet.rdma.plugins.module_utils.sysctl import _domain as found
    elif name == "nic._domain":
        from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _domain as found
    elif name == "irq._domain":
        from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _domain as found
    elif name == "services._domain":
        from ansible_collections.hpcnet.rdma.plugins.module_utils.services import _domain as found
    elif name == "stack._pkg":
        from ansible_collections.hpcnet.rdma.plugins.module_utils.stack import _pkg as found
    elif name == "stack._domain":
        from ansible_collections.hpcnet.rdma.plugins.module_utils.stack import _domain as found
    elif name == "qos._domain":
        from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _domain as found
    else:
        raise KeyError("no domain file %r" % name)
    return found.DOMAINS


def all_maps() -> Tuple[DomainMap, ...]:
    """Every domain's map (rollback and status of any key)."""
    return tuple(_load(name) for name in FILES)


def for_keys(keys: Iterable[str]) -> Tuple[DomainMap, ...]:
    """The maps of the domains that own these journal keys; every map when a key's prefix is unknown
    (so the error names every prefix there is)."""
    names = set()
    for key in keys:
        name = PREFIXES.get(key.split(":", 1)[0])
        if name is None:
            return all_maps()
        names.add(name)
    return tuple(_load(name) for name in FILES if name in names)
