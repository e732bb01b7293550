# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What every part of the lab shares: where its files are, how it speaks, runs commands and hashes."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

ROOT = Path(__file__).resolve().parents[2]
CACHE_DIR = ROOT / "lab" / "cache"  # images, rootfs tarballs, the VM ssh key (git-ignored)
RUN_DIR = ROOT / "lab" / "run"      # the state of the current lab runs (git-ignored)


@dataclass(frozen=True)
class Log:
    """Messages of one part of the lab tool, each line prefixed with its name ("labctl", "labctl vm")."""

    prefix: str

    def info(self, msg: str) -> None:
        print(f"{self.prefix}: {msg}", flush=True)

    def die(self, msg: str) -> NoReturn:
        print(f"{self.prefix}: error: {msg}", file=sys.stderr, flush=True)
        sys.exit(1)

    def run(self, cmd: list[str], check: bool = True, capture: bool = False, **kw: Any) -> subprocess.CompletedProcess:
        """Run argv; with capture, stdout and stderr come back as text.  A failure (with check) dies
        naming the command and, when captured, its stderr."""
        if capture:
            kw.setdefault("stdout", subprocess.PIPE)
            kw.setdefault("stderr", subprocess.PIPE)
            kw.setdefault("text", True)
        # A Python child block-buffers a piped stdout but not stderr: without this the merged
        # text's order would depend on PYTHONUNBUFFERED in the caller's environment.
        kw["env"] = {**(kw.get("env") or os.environ), "PYTHONUNBUFFERED": "1"}
        res = subprocess.run(cmd, check=False, **kw)
        if check and res.returncode != 0:
            err = (res.stderr or "").strip() if capture else ""
            self.die(f"command failed ({res.returncode}): {' '.join(cmd)}" + (f"\n{err}" if err else ""))
        return res

    def run_merged(self, cmd: list[str], check: bool = True, **kw: Any) -> subprocess.CompletedProcess:
        """Run argv with stdout and stderr as one text (res.stdout); a failure (with check) dies with
        the last 3000 characters of it."""
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.STDOUT)
        kw.setdefault("text", True)
        # A Python child block-buffers a piped stdout but not stderr: without this the merged
        # text's order would depend on PYTHONUNBUFFERED in the caller's environment.
        kw["env"] = {**(kw.get("env") or os.environ), "PYTHONUNBUFFERED": "1"}
        res = subprocess.run(cmd, check=False, **kw)
        if check and res.returncode != 0:
            self.die(f"command failed ({res.returncode}): {' '.join(cmd)}\n{(res.stdout or '')[-3000:]}")
        return res


def digest(data: Any) -> str:
    """12 hex digits of the SHA-256 of `data` as sorted JSON: the name of what a recipe builds.
    Cached images are found by it, so what is hashed (and how) must not change by accident."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:12]


def file_sha(path: Path) -> str:
    """SHA-256 of a file's bytes (hex), read in 1 MiB blocks."""
    sha = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()
