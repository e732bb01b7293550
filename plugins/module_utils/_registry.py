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
its keys (tests/unit/plugins/module_utils/test_engine_domains.py checks every ``DOMAINS`` map in
module_utils is listed, with its prefixes).
"""
from __future__ import annotations

from typing import Iterable, Tuple

from ansible_collections.hpcnet.rdma.plugins.module_utils._domain import DomainMap

# The domain files, in the order their maps are handed to an engine.
FILES = ("_files", "_sysctl", "_link", "_irq", "_service", "_pkg", "_rdma", "_qos")

# Journal key prefix -> the domain file whose DOMAINS map has it.
PREFIXES = {
    "file": "_files", "dir": "_files", "sysctl": "_sysctl", "nic": "_link", "irq": "_irq", "service": "_service",
    "pkg": "_pkg", "kmod": "_rdma", "rxe": "_rdma", "rdma": "_rdma", "devnode": "_rdma",
    "dcb": "_qos", "mlnx_qos": "_qos", "ecn": "_qos", "rdmacm": "_qos",
}


def _load(name: str) -> DomainMap:
    # One import statement per file, written out: AnsiballZ ships the module_utils a module's code names.
    if name == "_files":
        from ansible_collections.hpcnet.rdma.plugins.module_utils import _files as found
    elif name == "_sysctl":
        from ansible_collections.hpcnet.rdma.plugins.module_utils import _sysctl as found
    elif name == "_link":
        from ansible_collections.hpcnet.rdma.plugins.module_utils import _link as found
    elif name == "_irq":
        from ansible_collections.hpcnet.rdma.plugins.module_utils import _irq as found
    elif name == "_service":
        from ansible_collections.hpcnet.rdma.plugins.module_utils import _service as found
    elif name == "_pkg":
        from ansible_collections.hpcnet.rdma.plugins.module_utils import _pkg as found
    elif name == "_rdma":
        from ansible_collections.hpcnet.rdma.plugins.module_utils import _rdma as found
    elif name == "_qos":
        from ansible_collections.hpcnet.rdma.plugins.module_utils import _qos as found
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
