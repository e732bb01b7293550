# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""python3 manifest.py ROOT OUT.json: path -> sha256 (or "-> target" for a symlink) of every file
under ROOT/etc and ROOT/usr/local, the parts of the image a bake may write.  create.yml records
one before and one after the bake; tests_rollback/ compares the VM against the first."""
from __future__ import annotations

import hashlib
import json
import os
import sys


def manifest(root: str) -> dict:
    out = {}
    for top in ("etc", "usr/local"):
        for d, _dirs, names in os.walk(os.path.join(root, top)):
            for n in names:
                full = os.path.join(d, n)
                rel = "/" + os.path.relpath(full, root)
                if os.path.islink(full):
                    out[rel] = "-> " + os.readlink(full)
                elif os.path.isfile(full):
                    with open(full, "rb") as f:
                        out[rel] = hashlib.sha256(f.read()).hexdigest()
    return out


if __name__ == "__main__":
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(manifest(sys.argv[1]), f, indent=1, sort_keys=True)
