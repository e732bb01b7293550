# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every domain of the collection: what ``tuning_state`` needs to show and restore any journal key
any module wrote.

Only ``tuning_state`` imports this file.  A module that writes keys hands its engine just the
``DOMAINS`` maps of its own domain files, so its AnsiballZ payload does not carry the others.
A new domain file is added here, or rollback cannot restore its keys
(tests/unit/plugins/module_utils/test_engine_domains.py checks every ``DOMAINS`` map in module_utils is listed).
"""
from __future__ import annotations

from typing import Tuple

from ansible_collections.hpcnet.rdma.plugins.module_utils import _files, _irq, _link, _pkg, _qos, _rdma, _service, _sysctl
from ansible_collections.hpcnet.rdma.plugins.module_utils._domain import DomainMap

ALL: Tuple[DomainMap, ...] = (
    _files.DOMAINS,
    _sysctl.DOMAINS,
    _link.DOMAINS,
    _irq.DOMAINS,
    _service.DOMAINS,
    _pkg.DOMAINS,
    _rdma.DOMAINS,
    _qos.DOMAINS,
)
