# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations


class ModuleDocFragment(object):
    # Modules that change the node (hpcnet.rdma.attributes).  A module adds only what is its own,
    # as the attribute's details (what its diff shows); the module's keys win over these.
    DOCUMENTATION = r"""
options: {}
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
    details: Predicts exactly the changes a real run makes and writes nothing.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: full
  platform:
    description: Target OS/families that can be operated against.
    support: N/A
    platforms: linux
"""

    # Read-only modules (hpcnet.rdma.attributes.info).
    INFO = r"""
options: {}
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
    details: This action does not modify state.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: none
    details: This action does not modify state.
  platform:
    description: Target OS/families that can be operated against.
    support: N/A
    platforms: linux
"""

    # Actions that run on the controller and change no node (hpcnet.rdma.attributes.controller);
    # a module adds what its check mode does as check_mode's details.
    CONTROLLER = r"""
options: {}
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: none
    details: This action does not modify any node.
  platform:
    description: Target OS/families that can be operated against.
    support: N/A
    platforms: linux
"""
