# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fixtures of the reliability suite (helpers in rlib.py)."""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from typing import Any, Iterator

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rlib import make_node  # noqa: E402


@pytest.fixture
def work(tmp_path: Any) -> Iterator[str]:
    """A temp dir on tmpfs (/dev/shm) when there is one, else pytest's tmp_path: the kill test
    fsyncs a few thousand times, which a disk turns from seconds into minutes."""
    shm = "/dev/shm"
    if os.path.isdir(shm) and os.access(shm, os.W_OK):
        path = tempfile.mkdtemp(prefix="hpcnet-reliability-", dir=shm)
        try:
            yield path
        finally:
            shutil.rmtree(path, ignore_errors=True)
    else:
        yield str(tmp_path)


@pytest.fixture
def pristine(work: str) -> str:
    """A template node tree; tests copy it (copytree keeps modes) for each run."""
    root = os.path.join(work, "template")
    make_node(root)
    return root
