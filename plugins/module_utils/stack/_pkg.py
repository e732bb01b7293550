# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ``pkg`` domain: distro packages the collection installed (``pkg:NAME``).

Values: ``installed``, ``absent``, ``config-files`` (Debian: removed, configuration kept).  Only
packages that were not installed before get a key, so rollback removes exactly what the
collection added: ``dpkg --purge`` / ``rpm -e`` of that one package, which refuses (and names the
dependent) rather than cascading into packages something else installed later.

The plan holds every package the install pulls in (the package manager's own simulation), in
dependency order: dependencies first, so applying installs one package per key and rollback, which
replays in reverse, removes dependents before what they depend on.
"""
from __future__ import annotations

import sys

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _pkgtools
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Plan
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import lazy_re

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Tuple

NAME_RE = lazy_re(r"^[A-Za-z0-9][A-Za-z0-9+._-]*$")
# where each package manager's tools live (stock paths; resolved under the Host root for tests)
MANAGERS = (("apt", ("/usr/bin/apt-get", "/usr/bin/dpkg-query")), ("dnf", ("/usr/bin/dnf", "/usr/bin/rpm")))


def manager(host: Host) -> str:
    """``apt`` or ``dnf``; HostError when the node has neither."""
    for name, tools in MANAGERS:
        if all(host.exists(t) for t in tools):
            return name
    raise HostError("no supported package manager on the node (need apt-get + dpkg-query, or dnf + rpm)")


# ---------------------------------------------------------------------- reading
def read_states(host: Host, names: List[str]) -> Dict[str, str]:
    """installed / absent / config-files (or another dpkg status, e.g. half-installed) per name."""
    if not names:
        return {}
    if manager(host) == "apt":
        # dpkg's own database, where dpkg-query reads it (a tool run less: 0.19 s of the health check's drift
        # stage on a lab VM); dpkg-query itself while dpkg has updates not yet folded into the status file
        text = None if host.listdir(_pkgtools.DPKG_UPDATES) else host.read(_pkgtools.DPKG_STATUS)
        if text:
            found = _pkgtools.parse_dpkg_status_states(text, names)
        else:
            _rc, out, _err = _pkgtools.DPKG_QUERY.run(host, "status", names=names)
            found = _pkgtools.parse_dpkg_query_status(out)
        states = {}
        for n in names:
            status = found.get(n, "not-installed")
            states[n] = "absent" if status == "not-installed" else status
        return states
    states = {}
    for n in names:
        rc, _out, _err = _pkgtools.RPM.run(host, "query", name=n)
        states[n] = "installed" if rc == 0 else "absent"
    return states


def read_value(host: Host, name: str) -> str:
    return read_states(host, [name])[name]


def read_values(host: Host, names: List[str]) -> Dict[str, Any]:
    """read_value of each package with one package manager query for all (dpkg-query takes many names)."""
    try:
        return dict(read_states(host, names))
    except HostError as e:
        return dict((n, e) for n in names)


def write_value(host: Host, name: str, value: Any) -> None:
    if read_value(host, name) == value:
        return
    apt = manager(host) == "apt"
    if value == "installed":
        if apt:
            _pkgtools.APT_NONINTERACTIVE.call(host, "install", name=name)
        else:
            _pkgtools.DNF.call(host, "install", name=name)
    elif value == "absent":
        if apt:
            _pkgtools.APT_NONINTERACTIVE.call(host, "purge", name=name)
        else:
            _pkgtools.RPM.call(host, "erase", name=name)
    elif value == "config-files" and apt:
        _pkgtools.APT_NONINTERACTIVE.call(host, "remove", name=name)
    else:
        raise HostError("package %s: cannot bring it to state %r" % (name, value))


def same(actual: Any, wanted: Any) -> bool:
    return actual == wanted


# the domain contract (_domain.Domain): this file's read_value, write_value and same
DOMAINS = {"pkg": sys.modules[__name__]}


# ---------------------------------------------------------------------- planning
def validate_names(names: List[str]) -> None:
    bad = [n for n in names if not NAME_RE.match(n or "")]
    if bad:
        raise ValueError("packages: %s is not a package name (letters, digits and + . _ -; no versions "
                         "or paths)" % ", ".join(repr(b) for b in bad))


def topo_order(names: List[str], deps: Dict[str, List[str]]) -> List[str]:
    """``names`` with every package after its dependencies (among ``names``); otherwise stable."""
    members = set(names)
    done: List[str] = []
    seen = set()

    def visit(n: str, stack: Tuple[str, ...]) -> None:
        if n in seen or n in stack:  # a dependency cycle keeps the package manager's order
            return
        for d in deps.get(n, []):
            if d in members:
                visit(d, stack + (n,))
        seen.add(n)
        done.append(n)

    for n in names:
        visit(n, ())
    return done


def resolve(host: Host, missing: List[str], recommends: bool, distro: str) -> List[str]:
    """Every package installing ``missing`` would add, dependencies first.

    ValueError (nothing changed) when a package is unknown or has no candidate, or when the
    install would upgrade or remove an installed package: rollback could not undo that.
    """
    if not missing:
        return []
    if manager(host) == "apt":
        _rc, out, _err = _pkgtools.APT_CACHE.run(host, "policy", names=missing)
        policy = _pkgtools.parse_apt_cache_policy(out)
        unknown = [n for n in missing if not (policy.get(n) or {}).get("candidate")]
        if unknown:
            raise ValueError("packages: %s not available for %s (apt-cache policy shows no candidate; a "
                             "misspelt name, another distribution's name, or stale package lists: "
                             "update_cache: true runs apt-get update)" % (", ".join(unknown), distro))
        flag = "--install-recommends" if recommends else "--no-install-recommends"
        rc, out, err = _pkgtools.APT_GET.run(host, "simulate", recommends=flag, names=missing)
        if rc != 0:
            raise ValueError("packages: apt-get cannot install %s on %s: %s"
                             % (", ".join(missing), distro, " ".join((err or out).split())[-400:]))
        sim = _pkgtools.parse_apt_simulate(out)
        order = [i["name"] for i in sim["install"]]
        _rc, dep_out, _err = _pkgtools.APT_CACHE.run(host, "depends", names=order) if order else (0, "", "")
        deps = _pkgtools.parse_apt_cache_depends(dep_out)
        upgrades = ["%s %s -> %s" % (u["name"], u["from"], u["version"]) for u in sim["upgrade"]]
        removals = [r["name"] for r in sim["remove"]]
    else:
        rc, out, err = _pkgtools.DNF.run(host, "names", names=missing)
        known = set(out.split())
        unknown = [n for n in missing if n not in known]
        if unknown:
            raise ValueError("packages: %s not available for %s (dnf repoquery finds no such package in the "
                             "enabled repositories)" % (", ".join(unknown), distro))
        weak = "True" if recommends else "False"
        _rc, out, err = _pkgtools.DNF.run(host, "simulate", weak=weak, names=missing)
        sim = _pkgtools.parse_dnf_transaction(out)
        if not sim["install"]:
            raise ValueError("packages: dnf cannot install %s on %s: %s"
                             % (", ".join(missing), distro, " ".join((err or out).split())[-400:]))
        order = sim["install"]
        deps = {}
        for n in order:
            _rc, req, _err = _pkgtools.DNF.run(host, "requires", name=n)
            deps[n] = req.split()
        upgrades, removals = sim["upgrade"], sim["remove"]
    if upgrades or removals:
        raise ValueError("packages: installing %s would %s; rollback could not restore those, so nothing "
                         "was changed (update the node first, then tune)"
                         % (", ".join(missing), "; ".join(
                             (["upgrade " + ", ".join(upgrades)] if upgrades else [])
                             + (["remove " + ", ".join(removals)] if removals else []))))
    return topo_order(order, deps)


def plan(host: Host, requested: List[str], recommends: bool, distro: str) -> Tuple[Plan, Dict[str, Any], Dict[str, Any]]:
    """(plan, previous, facts): one ``pkg:NAME`` change per package the install adds."""
    validate_names(requested)
    states = read_states(host, requested)
    missing = [n for n in requested if states[n] != "installed"]
    order = resolve(host, missing, recommends, distro)
    extra = [n for n in order if n not in states]
    states.update(read_states(host, extra))
    p = Plan()
    previous: Dict[str, Any] = {}
    for n in order:
        previous["pkg:" + n] = states.get(n, "absent")
        p.add("pkg:" + n, previous["pkg:" + n], "installed")
    for n in requested:
        previous.setdefault("pkg:" + n, states[n])
    facts = {"already_installed": [n for n in requested if states[n] == "installed"],
             "to_install": list(order), "dependencies": [n for n in order if n not in requested]}
    return p, previous, facts


def distro_name(host: Host) -> str:
    """``debian 12`` from /etc/os-release, for messages."""
    info: Dict[str, str] = {}
    for line in (host.read("/etc/os-release") or "").splitlines():
        key, sep, value = line.partition("=")
        if sep:
            info[key.strip()] = value.strip().strip('"')
    name = info.get("ID", "this distribution")
    return ("%s %s" % (name, info["VERSION_ID"])) if info.get("VERSION_ID") else name


def update_cache(host: Host) -> None:
    if manager(host) == "apt":
        _pkgtools.APT_NONINTERACTIVE.call(host, "update")
    else:
        _pkgtools.DNF.call(host, "makecache")
