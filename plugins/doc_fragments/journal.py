# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  journal_dir:
    description:
      - Directory of the on-node journal that records the original of every key the collection
        changes, so M(hpcnet.rdma.tuning_state) can roll it back, also after a reboot.
      - Must be a writable local directory; it is created with mode 0700 when missing.
    type: path
    default: /var/lib/hpcnet-rdma
notes:
  - The first time a key is changed its original value (or file) is recorded in the journal; later
    runs never overwrite an original. Concurrent runs on one node serialize on the journal lock.
  - If applying any change fails, the changes this call already made are reverted and the task
    fails naming the key.
"""
