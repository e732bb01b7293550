# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations


class ModuleDocFragment(object):
    # The spec is _spec.MODE in plugins/module_utils/engine/_spec.py.
    DOCUMENTATION = r"""
options:
  mode:
    description:
      - C(runtime) changes the running node only (kernel, NIC and device values); C(persist) writes only
        what applies the settings at boot and changes no live value (an image bake); C(both) does both.
      - The module's description says which boot-time files it writes.
    type: str
    choices: [runtime, persist, both]
    default: both
"""
