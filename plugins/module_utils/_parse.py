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
    "parse_apt_cache_depends",
    "parse_apt_cache_policy",
    "parse_apt_simulate",
    "parse_dnf_transaction",
    "parse_dpkg_query_status",
    "parse_modules_builtin",
    "parse_modules_dep",
    "parse_modules_softdep",
]

# --------------------------------------------------------------------------- packages
def parse_apt_cache_policy(text: str) -> Dict[str, Dict[str, Optional[str]]]:
    """Parse ``apt-cache policy NAME...`` into ``{name: {"installed", "candidate"}}`` (None for
    ``(none)``).  apt prints nothing for a name it does not know, so absent keys are unknown."""
    out = {}  # type: Dict[str, Dict[str, Optional[str]]]
    current = None  # type: Optional[Dict[str, Optional[str]]]
    for line in (text or "").splitlines():
        if line and not line[0].isspace() and line.rstrip().endswith(":"):
            current = {"installed": None, "candidate": None}
            out[line.rstrip()[:-1]] = current
            continue
        field = _split_field(line.strip())
        if current is None or field is None:
            continue
        if field[0] in ("installed", "candidate"):
            current[field[0]] = None if field[1] == "(none)" else field[1]
    return out


_APT_ACTION = re.compile(r"^(?P<op>Inst|Remv|Purg)\s+(?P<name>\S+)(?:\s+\[(?P<old>[^\]]+)\])?(?:\s+\((?P<new>\S+).*\))?")


def parse_apt_simulate(text: str) -> Dict[str, List[Dict[str, Optional[str]]]]:
    """Parse ``apt-get -s install ...`` into ``{"install": [{"name", "version"}], "upgrade":
    [{"name", "from", "version"}], "remove": [{"name", "version"}]}`` in apt's order
    (``Inst X [old] (new ...)`` is an upgrade; ``Remv``/``Purg`` a removal)."""
    out = {"install": [], "upgrade": [], "remove": []}  # type: Dict[str, List[Dict[str, Optional[str]]]]
    for line in (text or "").splitlines():
        m = _APT_ACTION.match(line.strip())
        if not m:
            continue
        name = m.group("name")
        if m.group("op") != "Inst":
            out["remove"].append({"name": name, "version": m.group("old")})
        elif m.group("old"):
            out["upgrade"].append({"name": name, "from": m.group("old"), "version": m.group("new")})
        else:
            out["install"].append({"name": name, "version": m.group("new")})
    return out


def parse_apt_cache_depends(text: str) -> Dict[str, List[str]]:
    """Parse ``apt-cache depends --important NAME...`` into ``{name: [Depends/PreDepends]}``
    (alternatives' providers, the deeper-indented lines, are left out)."""
    out = {}  # type: Dict[str, List[str]]
    current = None  # type: Optional[List[str]]
    for line in (text or "").splitlines():
        if line and not line[0].isspace():
            current = out.setdefault(line.strip(), [])
            continue
        m = re.match(r"^  \|?(?:Pre)?Depends: <?(?P<dep>[^\s>]+)>?", line)
        if m and current is not None:
            current.append(m.group("dep").split(":")[0])
    return out


def parse_dpkg_query_status(text: str) -> Dict[str, str]:
    """Parse ``dpkg-query -W -f '${Package}\\t${db:Status-Status}\\n' NAME...`` into
    ``{name: status}`` (``installed``, ``config-files``, ``not-installed``, ``half-installed``...)."""
    out = {}  # type: Dict[str, str]
    for line in (text or "").splitlines():
        name, sep, status = line.partition("\t")
        if sep and name.strip():
            out[name.strip().split(":")[0]] = status.strip() or "not-installed"
    return out


def parse_dnf_transaction(text: str) -> Dict[str, List[str]]:
    """Parse the transaction table ``dnf install --assumeno NAME...`` prints (dnf 4) into
    ``{"install": [names], "upgrade": [names], "remove": [names]}``; "Nothing to do" is empty."""
    out = {"install": [], "upgrade": [], "remove": []}  # type: Dict[str, List[str]]
    section = None  # type: Optional[str]
    for raw in (text or "").splitlines():
        line = raw.strip()
        lowered = line.lower().rstrip(":")
        if line.endswith(":") and not raw.startswith(" "):
            if lowered.startswith(("installing", "reinstalling")):
                section = "install"
            elif lowered.startswith(("upgrading", "downgrading")):
                section = "upgrade"
            elif lowered.startswith(("removing", "erasing")):
                section = "remove"
            else:
                section = None
            continue
        if lowered.startswith("transaction summary"):
            break
        if section and raw.startswith(" ") and line and not line.startswith(("replacing", "=")):
            out[section].append(line.split()[0])
    return out


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
