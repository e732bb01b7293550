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
      - Whoever can write the journal steers what rollback does as root, so the directory and every
        directory above it must be owned by root (or the user running the module) and not be writable
        by group or others; a directory above it may be world-writable only with the sticky bit (like
        C(/tmp)), which keeps others from replacing the root-owned entry below it. The journal and its
        lock must be regular files (never symbolic links) of root that only root can write, and every
        key and value of the journal is checked when it is read. Anything else fails the task before
        the node changes, and the journal is left as it is.
    type: path
    default: /var/lib/hpcnet-rdma
notes:
  - The first time a key is changed its original value (or file) is recorded in the journal; later
    runs never overwrite an original. Concurrent runs on one node serialize on the journal lock.
  - If applying any change fails, the changes this call already made are reverted and the task
    fails naming the key.
"""
