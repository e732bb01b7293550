# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Render a role's task arguments with Ansible's own Templar, as a play would: the role tests'
one helper (loading the role's YAML, trusting strings as templates, the task's action name)."""
from __future__ import annotations

import json
import os
from typing import Any, Dict

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

import ansible_collections.hpcnet.rdma as collection

try:   # ansible-core 2.19 renders only strings trusted as templates (what it loads from playbooks)
    from ansible.template import trust_as_template
except ImportError:   # older ansible-core trusts every string
    def trust_as_template(value: str) -> str:
        return value

ROOT = list(collection.__path__)[0]
LOADER = DataLoader()


def role_dir(role: str) -> str:
    return os.path.join(ROOT, "roles", role)


def load(role: str, path: str) -> Any:
    """A YAML file of the role (``tasks/main.yml``, ``defaults/main.yml``, ...)."""
    return LOADER.load_from_file(os.path.join(role_dir(role), path))


def trusted(value: Any) -> Any:
    if isinstance(value, str):
        return trust_as_template(value)
    if isinstance(value, dict):
        return dict((k, trusted(v)) for k, v in value.items())
    if isinstance(value, list):
        return [trusted(v) for v in value]
    return value


def action(task: Dict[str, Any]) -> str:
    return next(k for k in task if k.startswith(("hpcnet.", "ansible.")))


def render(value: Any, variables: Dict[str, Any]) -> Any:
    """``value`` templated with ``variables``, as plain JSON data."""
    return json.loads(json.dumps(Templar(loader=LOADER, variables=variables).template(trusted(value))))
