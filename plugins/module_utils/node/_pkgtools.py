# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The package tools: their argv tables (apt-get, apt-cache, dpkg-query, dpkg, dnf, rpm) and the
parsers of their output: ``apt-cache policy``, ``apt-get -s install``, ``apt-cache depends``,
``dpkg-query -W`` and dnf 4's transaction table.

These parsers are lenient (lines they do not know are skipped, empty output is an empty answer):
the ``pkg`` domain (``_pkg.py``) runs the commands through the tables and judges the exit codes.
Argv tokens go through ``str.format``: the literal braces of ``${Package}`` and ``%{name}`` are
written ``{{ }}``.
"""
from __future__ import annotations

import re

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import lazy_re, split_field
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._runner import Tool

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Dict, List, Optional


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
        field = split_field(line.strip())
        if current is None or field is None:
            continue
        if field[0] in ("installed", "candidate"):
            current[field[0]] = None if field[1] == "(none)" else field[1]
    return out


_APT_ACTION = lazy_re(r"^(?P<op>Inst|Remv|Purg)\s+(?P<name>\S+)(?:\s+\[(?P<old>[^\]]+)\])?(?:\s+\((?P<new>\S+).*\))?")


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


# dpkg's database: the status file, and the journal of updates dpkg has not yet folded into it (a run cut off)
DPKG_STATUS = "/var/lib/dpkg/status"
DPKG_UPDATES = "/var/lib/dpkg/updates"


def dpkg_stanzas(text: str, package: str) -> List[str]:
    """The stanzas of a dpkg status file that start a line with ``Package: NAME`` (as dpkg writes them),
    found without parsing the file: it holds every package of the node (a few MB, 80 ms to parse whole on a
    lab VM, where the health check reads it)."""
    out = []
    needle = "Package: %s\n" % package
    at = text.find(needle)
    while at >= 0:
        if at == 0 or text[at - 1] == "\n":
            start = text.rfind("\n\n", 0, at)
            end = text.find("\n\n", at)
            out.append(text[start + 2 if start >= 0 else 0:end if end >= 0 else len(text)])
        at = text.find(needle, at + 1)
    return out


def stanza_fields(stanza: str) -> Dict[str, str]:
    fields = {}
    for line in stanza.splitlines():
        if ":" in line and not line.startswith((" ", "\t")):
            k, v = line.split(":", 1)
            fields[k.strip()] = v.strip()
    return fields


def dpkg_package_stanzas(text: str, names: List[str]) -> Dict[str, List[Dict[str, str]]]:
    """``{name: [fields of each stanza of that package]}`` from a dpkg status file, in the file's order (one
    stanza per architecture).  Stanzas are found by :func:`dpkg_stanzas`; the whole file is parsed (once)
    only for a name not found that way (a stanza dpkg did not write itself, ``Package:  name``)."""
    out = {}  # type: Dict[str, List[Dict[str, str]]]
    whole = None  # type: Optional[List[Dict[str, str]]]
    for name in names:
        found = [f for f in (stanza_fields(st) for st in dpkg_stanzas(text, name)) if f.get("Package") == name]
        if not found:
            if whole is None:
                whole = [stanza_fields(st) for st in text.split("\n\n")]
            found = [f for f in whole if f.get("Package") == name]
        out[name] = found
    return out


def parse_dpkg_status_states(text: str, names: List[str]) -> Dict[str, str]:
    """``{name: status}`` from a dpkg status file, as :func:`parse_dpkg_query_status` reads ``dpkg-query -W``
    of the same names: the third word of ``Status:`` (``installed``, ``config-files``, ``half-installed``,
    ``not-installed`` ...), the last stanza winning (one per architecture); a name the file does not hold is
    left out (dpkg-query: no packages found).  The stanzas are :func:`dpkg_package_stanzas`."""
    out = {}  # type: Dict[str, str]
    for name, stanzas in dpkg_package_stanzas(text, names).items():
        for fields in stanzas:
            words = fields.get("Status", "").split()
            if len(words) == 3:
                out[name] = words[2]
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


# --------------------------------------------------------------------------- the tools
# apt and dpkg that change the node run non-interactively: under env(1) with the frontends silenced
APT_ENV = ["DEBIAN_FRONTEND=noninteractive", "APT_LISTCHANGES_FRONTEND=none", "NEEDRESTART_MODE=l"]
APT_OPTS = ["-y", "-q", "-o", "Dpkg::Options::=--force-confdef", "-o", "Dpkg::Options::=--force-confold"]

APT_NONINTERACTIVE = Tool("env", {
    "install": APT_ENV + ["apt-get", "install", "--no-install-recommends"] + APT_OPTS + ["{name}"],
    "update": APT_ENV + ["apt-get", "update", "-q"],
    "purge": APT_ENV + ["dpkg", "--purge", "{name}"],
    "remove": APT_ENV + ["dpkg", "--remove", "{name}"],
})
APT_GET = Tool("apt-get", {"simulate": ["install", "-s", "-q", "{recommends}", "{*names}"]},
               parsers={"simulate": parse_apt_simulate})
APT_CACHE = Tool("apt-cache", {
    "policy": ["policy", "{*names}"],
    "depends": ["depends", "--important", "{*names}"],
}, parsers={"policy": parse_apt_cache_policy, "depends": parse_apt_cache_depends})
DPKG_QUERY = Tool("dpkg-query", {"status": ["-W", "-f", "${{Package}}\\t${{db:Status-Status}}\\n", "{*names}"]},
                  parsers={"status": parse_dpkg_query_status})
DNF = Tool("dnf", {
    "install": ["install", "-y", "-q", "--setopt=install_weak_deps=False", "{name}"],
    "makecache": ["-q", "makecache"],
    "names": ["-q", "repoquery", "--qf", "%{{name}}", "{*names}"],
    "requires": ["-q", "repoquery", "--requires", "--resolve", "--qf", "%{{name}}", "{name}"],
    "simulate": ["install", "--assumeno", "--setopt=install_weak_deps={weak}", "{*names}"],
}, parsers={"simulate": parse_dnf_transaction})
RPM = Tool("rpm", {"query": ["-q", "--quiet", "{name}"], "erase": ["-e", "{name}"]})
