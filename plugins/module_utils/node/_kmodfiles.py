# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parsers of the kernel module metadata files depmod writes under /lib/modules/RELEASE
(modules.dep, modules.builtin, modules.softdep; softdep lines of modprobe.d too), and module
names as modprobe spells them.  Files, not tools: ``_rdma`` reads them through the Host."""
from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Dict, List


def kmod_name(path_or_name: str) -> str:
    """``kernel/drivers/infiniband/core/ib_core.ko.xz`` or ``ib-core`` -> ``ib_core``."""
    base = path_or_name.strip().rsplit("/", 1)[-1]
    base = re.sub(r"\.ko(\.(xz|gz|zst))?$", "", base)
    return base.replace("-", "_")


def parse_modules_dep(text: str) -> Dict[str, List[str]]:
    """Parse modules.dep into ``{module: [direct and indirect dependencies as depmod lists them]}``."""
    out = {}  # type: Dict[str, List[str]]
    for line in (text or "").splitlines():
        target, sep, deps = line.partition(":")
        if not sep or not target.strip():
            continue
        out[kmod_name(target)] = [kmod_name(d) for d in deps.split()]
    return out


def parse_modules_builtin(text: str) -> List[str]:
    """Parse modules.builtin (one ``kernel/.../NAME.ko`` per line) into sorted module names."""
    return sorted(set(kmod_name(line) for line in (text or "").splitlines() if line.strip()))


def parse_modules_softdep(text: str) -> Dict[str, Dict[str, List[str]]]:
    """Parse ``softdep MODULE pre: A B post: C`` lines (modules.softdep, modprobe.d)."""
    out = {}  # type: Dict[str, Dict[str, List[str]]]
    for line in (text or "").splitlines():
        words = line.split("#", 1)[0].split()
        if len(words) < 3 or words[0] != "softdep":
            continue
        entry = out.setdefault(kmod_name(words[1]), {"pre": [], "post": []})
        section = "pre"
        for word in words[2:]:
            if word in ("pre:", "post:"):
                section = word[:-1]
            else:
                entry[section].append(kmod_name(word))
    return out
