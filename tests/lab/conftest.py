# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of the lab tooling (lab/, scripts/): `lablib` is importable as labctl.py imports it."""
from __future__ import annotations

import sys
from pathlib import Path

LAB = Path(__file__).resolve().parents[2] / "lab"
if str(LAB) not in sys.path:
    sys.path.insert(0, str(LAB))
