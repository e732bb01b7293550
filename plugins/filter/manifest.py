# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filter ``hpcnet.rdma.fleet_manifest``: the group's verify_info results to the fleet manifest.

The logic lives in ``plugins/module_utils/health/_manifest.py`` (pure; the node check reads its own
attributes with the same function).  Documentation: ``fleet_manifest.yml``.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

from ansible.errors import AnsibleFilterError

from ansible_collections.hpcnet.rdma.plugins.module_utils.health import _manifest


def fleet_manifest(results: Dict[str, Any], hosts: Optional[List[str]] = None) -> Dict[str, Any]:
    if not isinstance(results, dict):
        raise AnsibleFilterError("fleet_manifest: the input must be a mapping host -> verify_info result, not %s"
                                 % type(results).__name__)
    order = list(hosts) if hosts is not None else list(results)
    usable = dict((h, _manifest.attributes(r)) for h, r in results.items()
                  if isinstance(r, dict) and not r.get("failed") and isinstance(r.get("fabric"), dict))
    return _manifest.learn(usable, order)


class FilterModule(object):
    def filters(self) -> Dict[str, Callable[..., Any]]:
        return {"fleet_manifest": fleet_manifest}
