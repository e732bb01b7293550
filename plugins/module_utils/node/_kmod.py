# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""kmod's tools: the argv tables of ``modprobe`` and ``rmmod`` (one module per call).

They print nothing to parse; ``_rdma`` (the ``kmod:`` domain) judges their exit codes and
messages (``rmmod`` of a module in use is a refusal, not an error).  The module metadata files
depmod writes are parsed in ``_kmodfiles``.
"""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._runner import Tool

MODPROBE = Tool("modprobe", {"load": ["{name}"]})
RMMOD = Tool("rmmod", {"unload": ["{name}"]})
