# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations


class ModuleDocFragment(object):
    # Modules whose interfaces option is a list of selections only (the spec is _spec.SELECTOR).
    # A module adds required or default, and may replace the description; its keys win.
    DOCUMENTATION = r"""
options:
  interfaces:
    description:
      - Interface selections. Each entry holds exactly one of O(interfaces[].name), O(interfaces[].glob),
        O(interfaces[].driver) or O(interfaces[].subnet); an entry that matches no interface fails the task.
    type: list
    elements: dict
    suboptions:
      name:
        description: Exact interface name; it must exist.
        type: str
      glob:
        description: Shell-style pattern of interface names, for example C(ens*f0np0).
        type: str
      driver:
        description: Kernel driver of the interface, for example C(mlx5_core), C(ice), C(virtio_net), C(veth).
        type: str
      subnet:
        description: Select interfaces holding an address inside this network, for example C(10.10.0.0/16).
        type: str
"""
