# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

# Pure text -> dict parsers for the output of ethtool and iproute2.
#
# Nothing here runs a command or touches the system: every function takes the text a
# tool printed and returns plain Python data, or raises ParseError.
#
# Parsing is by field name ("RX:", "Combined:", "rx-usecs:" ...), never by column or line
# position, so the ioctl-era layout (ethtool < 5.6), the netlink layout of ethtool 5.x/6.1
# and the tab-aligned layout of newer ethtool 6.x all parse the same way.  Lines a parser
# does not know are ignored (ring extras are kept under "extra"), so newer tool versions
# do not break it.

import re
from typing import Dict, List, Optional

from ansible_collections.hpcnet.rdma.plugins.module_utils._parsing import (  # noqa: F401
    NA as _NA, ParseError, int_or_none as _int_or_none, is_not_supported, split_lines as _lines,
    load_json_list, load_json_object as _load_json_object, snake as _snake, split_field as _split_field)

__all__ = [
    "ParseError",
    "is_not_supported",
]


# --------------------------------------------------------------------------- DCB / RoCE tools
#
# iproute2 `dcb -j` prints one JSON object per command (dcb/dcb_pfc.c, dcb_app.c,
# dcb_apptrust.c): booleans for on/off values (json_print's print_on_off), arrays for the
# per-priority maps.  `mlnx_qos -i IF` (NVIDIA mlnx-tools, python/mlnx_qos) has no JSON mode; it
# is parsed by its labels ("Priority trust state:", "PFC configuration:", "prio:N dscp:...").
# `ibv_devinfo` (rdma-core) is parsed by its "name: value" labels as well.

__all__ += [
]

# IB MTU enum (enum ib_mtu / ibv_mtu) -> bytes

# --------------------------------------------------------------------------- RDMA stack and fabric facts
#
# rdma-core's ``ibv_devinfo -v`` and infiniband-diags' ``ibstat`` print "label: value" lines;
# iproute2's ``rdma -j link`` prints JSON; ``nvidia-smi topo -m`` prints a tab-separated matrix;
# /proc/net/softnet_stat is hex columns, /proc/net/snmp header/value line pairs.  Package tools:
# ``apt-cache policy``, ``apt-get -s install``, ``apt-cache depends``, ``dpkg-query -W`` and dnf's
# transaction table.  Kernel module metadata: modules.dep, modules.builtin, modules.softdep.

__all__ += [
    "kmod_name",
    "parse_modules_builtin",
    "parse_modules_dep",
    "parse_modules_softdep",
]

# --------------------------------------------------------------------------- kernel modules
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
