# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every module's resolved documentation names what it needs on the node (``requirements``) and
the platform it operates against (attribute ``platform``: linux), as ansible-doc shows them."""
from __future__ import annotations

import pytest

from .test_docs import MODULES, resolved_doc


@pytest.mark.parametrize("name", MODULES)
def test_module_names_its_requirements_and_platform(name):
    doc = resolved_doc(name)
    requirements = doc.get("requirements")
    assert isinstance(requirements, list) and requirements and all(isinstance(r, str) and r for r in requirements), \
        "%s: DOCUMENTATION needs a non-empty requirements list (the tools it runs on the node)" % name
    platform = doc.get("attributes", {}).get("platform", {})
    assert platform.get("platforms") == "linux" and platform.get("support") == "N/A", (name, platform)
