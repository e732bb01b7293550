# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filter ``hpcnet.rdma.resolve_profile``: a tuning profile name to its resolved values.

The logic lives in ``plugins/plugin_utils/_profiles.py`` (pure, tested without Ansible); this file
only turns its ``ProfileError`` into ``AnsibleFilterError``.  Documentation: ``resolve_profile.yml``.
"""
from __future__ import annotations

from typing import Any, Callable, Dict

from ansible.errors import AnsibleFilterError

from ansible_collections.hpcnet.rdma.plugins.plugin_utils._profiles import ProfileError, resolve


def resolve_profile(name: Any, builtin: Any, user: Any = None) -> Dict[str, Any]:
    try:
        return resolve(name, builtin, user)
    except ProfileError as e:
        raise AnsibleFilterError(str(e))


class FilterModule(object):
    def filters(self) -> Dict[str, Callable[..., Any]]:
        return {"resolve_profile": resolve_profile}
