# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  journal_run:
    description:
      - An id the module calls of one run share (the C(hpcnet.rdma.tuning) role sets one per host and
        run). It is recorded with this call's journal generation, and
        M(hpcnet.rdma.tuning_state) O(hpcnet.rdma.tuning_state#module:scope=last) undoes every
        generation of the newest run as one unit, so a whole profile switch is undone at once.
      - Without it the call's generation is a run of its own.
    type: str
  release_scope:
    description:
      - A name for the set of keys this call manages (the C(hpcnet.rdma.tuning) role uses
        C(tuning.sysctl), C(tuning.nic), ...). Every key this module changed in earlier calls with the
        same O(release_scope) that this call does not manage goes back to its pre-tuning original, in
        this call's generation, so switching profiles does not leave a key at the old profile's value.
      - The originals stay the ones recorded before the first change, however many calls follow.
      - Without it, keys this call does not name are left as they are.
    type: str
"""
