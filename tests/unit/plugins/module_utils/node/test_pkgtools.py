# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/node/_pkgtools.py: the apt, dpkg and dnf output parsers against captured
outputs (tests/unit/fixtures/README.md)."""
from __future__ import annotations

import os

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.stack import _pkg
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _pkgtools
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError

from ....conftest import fixture, host_answering
from ....fixtures.real.loader import real_capture, real_header


# ---------------------------------------------------------------- package tools (captured on Debian 12)
def test_apt_cache_policy_captured():
    policy = _pkgtools.parse_apt_cache_policy(fixture("apt-cache-policy.bookworm.captured.txt"))
    assert policy == {"rdma-core": {"installed": None, "candidate": "44.0-2"},
                      "libibverbs1": {"installed": "44.0-2", "candidate": "44.0-2"}}   # unknown name: no entry


def test_apt_simulate_captured_and_topological_order():
    sim = _pkgtools.parse_apt_simulate(fixture("apt-get-s.rdma.bookworm.captured.txt"))
    names = [i["name"] for i in sim["install"]]
    assert names[:2] == ["rdma-core", "ibverbs-utils"] and len(names) == 10
    assert sim["upgrade"] == [] and sim["remove"] == []
    deps = _pkgtools.parse_apt_cache_depends(fixture("apt-cache-depends.rdma.bookworm.captured.txt"))
    assert deps["libibnetdisc5"] == ["libc6", "libibmad5", "libibumad3"]
    assert deps["rdma-core"][:2] == ["init-system-helpers", "lsb-base"]
    order = _pkg.topo_order(names, deps)
    assert sorted(order) == sorted(names)
    for n in order:   # every package after its dependencies in the set: rollback reverses this
        assert all(order.index(d) < order.index(n) for d in deps.get(n, []) if d in names)


def test_apt_simulate_upgrades_and_removals():
    text = ("Remv libfoo1 [1.0-1]\nInst libbar2 [2.0-1] (2.1-1 Debian:12/stable [amd64])\n"
            "Inst newpkg (3.0 Debian:12/stable [all]) []\nConf newpkg (3.0 Debian:12/stable [all])\n")
    assert _pkgtools.parse_apt_simulate(text) == {
        "install": [{"name": "newpkg", "version": "3.0"}],
        "upgrade": [{"name": "libbar2", "from": "2.0-1", "version": "2.1-1"}],
        "remove": [{"name": "libfoo1", "version": "1.0-1"}]}


def test_dpkg_query_status():
    text = "iproute2\tinstalled\nlibfoo:amd64\tconfig-files\nbar\t\n"
    assert _pkgtools.parse_dpkg_query_status(text) == {
        "iproute2": "installed", "libfoo": "config-files", "bar": "not-installed"}


def test_dnf_transaction():
    sim = _pkgtools.parse_dnf_transaction(fixture("dnf-install-assumeno.rdma.el9.txt"))
    assert sim["install"][:5] == ["infiniband-diags", "libibverbs-utils", "librdmacm-utils", "perftest", "rdma-core"]
    assert sim["install"][5:] == ["libibumad", "libibverbs", "librdmacm", "pciutils-libs", "perl-Getopt-Long"]
    assert sim["upgrade"] == [] and sim["remove"] == []
    assert _pkgtools.parse_dnf_transaction("Dependencies resolved.\nNothing to do.\nComplete!\n")["install"] == []


# ---------------------------------------------------------------- the tools, through the runner
ENV = ["env", "DEBIAN_FRONTEND=noninteractive", "APT_LISTCHANGES_FRONTEND=none", "NEEDRESTART_MODE=l"]
DPKG_OPTS = ["-y", "-q", "-o", "Dpkg::Options::=--force-confdef", "-o", "Dpkg::Options::=--force-confold"]


@pytest.mark.parametrize("tool, action, values, argv", [
    (_pkgtools.APT_NONINTERACTIVE, "install", {"name": "rdma-core"},
     ENV + ["apt-get", "install", "--no-install-recommends"] + DPKG_OPTS + ["rdma-core"]),
    (_pkgtools.APT_NONINTERACTIVE, "update", {}, ENV + ["apt-get", "update", "-q"]),
    (_pkgtools.APT_NONINTERACTIVE, "purge", {"name": "rdma-core"}, ENV + ["dpkg", "--purge", "rdma-core"]),
    (_pkgtools.APT_NONINTERACTIVE, "remove", {"name": "rdma-core"}, ENV + ["dpkg", "--remove", "rdma-core"]),
    (_pkgtools.APT_GET, "simulate", {"recommends": "--no-install-recommends", "names": ["a", "b"]},
     ["apt-get", "install", "-s", "-q", "--no-install-recommends", "a", "b"]),
    (_pkgtools.APT_CACHE, "policy", {"names": ["rdma-core", "libibverbs1"]},
     ["apt-cache", "policy", "rdma-core", "libibverbs1"]),
    (_pkgtools.APT_CACHE, "depends", {"names": ["rdma-core"]}, ["apt-cache", "depends", "--important", "rdma-core"]),
    # str.format: the doubled braces are dpkg-query's own ${...} fields, written as the tool wants them
    (_pkgtools.DPKG_QUERY, "status", {"names": ["rdma-core", "perftest"]},
     ["dpkg-query", "-W", "-f", "${Package}\\t${db:Status-Status}\\n", "rdma-core", "perftest"]),
    (_pkgtools.DNF, "install", {"name": "rdma-core"},
     ["dnf", "install", "-y", "-q", "--setopt=install_weak_deps=False", "rdma-core"]),
    (_pkgtools.DNF, "makecache", {}, ["dnf", "-q", "makecache"]),
    # and dnf's %{name} query format
    (_pkgtools.DNF, "names", {"names": ["rdma-core", "perftest"]},
     ["dnf", "-q", "repoquery", "--qf", "%{name}", "rdma-core", "perftest"]),
    (_pkgtools.DNF, "requires", {"name": "rdma-core"},
     ["dnf", "-q", "repoquery", "--requires", "--resolve", "--qf", "%{name}", "rdma-core"]),
    (_pkgtools.DNF, "simulate", {"weak": "True", "names": ["rdma-core"]},
     ["dnf", "install", "--assumeno", "--setopt=install_weak_deps=True", "rdma-core"]),
    (_pkgtools.RPM, "query", {"name": "rdma-core"}, ["rpm", "-q", "--quiet", "rdma-core"]),
    (_pkgtools.RPM, "erase", {"name": "rdma-core"}, ["rpm", "-e", "rdma-core"]),
])
def test_argv_tables(tool, action, values, argv):
    assert tool.argv(action, **values) == argv


def test_dpkg_query_format_is_literal_text_for_the_tool():
    fmt = _pkgtools.DPKG_QUERY.argv("status", names=[])[3]
    assert fmt == "${Package}" + "\\t" + "${db:Status-Status}" + "\\n"    # backslash escapes dpkg-query expands
    assert "{{" not in fmt and "}}" not in fmt


@pytest.mark.parametrize("tool, action, values, message", [
    (_pkgtools.APT_NONINTERACTIVE, "install", {"name": "nope"},
     "env DEBIAN_FRONTEND=noninteractive APT_LISTCHANGES_FRONTEND=none NEEDRESTART_MODE=l apt-get install "
     "--no-install-recommends -y -q -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold nope "
     "failed (rc=100): E: Unable to locate package nope"),
    (_pkgtools.APT_NONINTERACTIVE, "purge", {"name": "nope"},
     "env DEBIAN_FRONTEND=noninteractive APT_LISTCHANGES_FRONTEND=none NEEDRESTART_MODE=l dpkg --purge nope "
     "failed (rc=100): E: Unable to locate package nope"),
    (_pkgtools.DNF, "makecache", {}, "dnf -q makecache failed (rc=100): E: Unable to locate package nope"),
    (_pkgtools.RPM, "erase", {"name": "nope"}, "rpm -e nope failed (rc=100): E: Unable to locate package nope"),
])
def test_failure_names_tool_and_argv(tmp_path, tool, action, values, message):
    host, rec = host_answering(tmp_path, 100, "", "E: Unable to locate package nope\n", bin_dir="")
    with pytest.raises(HostError) as e:
        tool.call(host, action, **values)
    assert str(e.value) == message
    assert rec.calls == [tool.argv(action, **values)]


def test_parsers_are_declared_with_their_actions(tmp_path):
    host, _rec = host_answering(tmp_path, 0, "rdma-core\tinstalled\nperftest\tconfig-files\n", bin_dir="")
    assert _pkgtools.DPKG_QUERY.call(host, "status", names=["rdma-core", "perftest"]) == {
        "rdma-core": "installed", "perftest": "config-files"}


def test_dpkg_status_states_equal_dpkg_query_for_every_package_of_a_real_status_file():
    """The pkg domain reads the packages' states from dpkg's status file instead of running dpkg-query:
    on this machine's own /var/lib/dpkg/status (Debian 12, a few thousand stanzas, some config-files) the
    reader gives what this machine's dpkg-query -W gives for every package it holds, and for names that are
    a prefix of one or absent (left out by both)."""
    import shutil
    import subprocess
    real = _pkgtools.DPKG_STATUS
    if not os.path.exists(real) or shutil.which("dpkg-query") is None:
        pytest.fail("this test needs a Debian machine (dpkg's status file and dpkg-query)")
    with open(real, encoding="utf-8", errors="surrogateescape") as f:
        text = f.read()
    names = sorted(set(line[9:] for line in text.splitlines() if line.startswith("Package: ")))
    assert len(names) > 100
    names += ["rdma", "no-such-package", names[0][:-1]]
    argv = _pkgtools.DPKG_QUERY.argv("status", names=names)
    run = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False,
                         env=dict(os.environ, LC_ALL="C"))
    assert _pkgtools.parse_dpkg_status_states(text, names) == _pkgtools.parse_dpkg_query_status(run.stdout)


@pytest.mark.parametrize("text, states", [
    ("Package: a\nStatus: install ok installed\nVersion: 1\n\nPackage: b\nStatus: deinstall ok config-files\n", {"a": "installed", "b": "config-files"}),
    ("Package: ab\nStatus: install ok installed\n", {}),                          # "a" is only a prefix
    ("Package: a\nStatus: install ok installed\nArchitecture: amd64\n\nPackage: a\nStatus: install ok not-installed\n"
     "Architecture: i386\n", {"a": "not-installed"}),                            # one per architecture: the last, as dpkg-query's lines
    ("Description: x\n Package: a\nPackage: c\nStatus: install ok installed\n", {}),   # a continuation line is no field
    ("Package:  a\nStatus: install reinstreq half-installed\n", {"a": "half-installed"}),   # found by the whole parse
])
def test_dpkg_status_states(text, states):
    assert _pkgtools.parse_dpkg_status_states(text, ["a", "b"]) == states


def test_the_status_file_reads_as_dpkg_query_on_a_verbatim_capture():
    """A verbatim cut of a lab VM's /var/lib/dpkg/status (Debian 12, dpkg 1.21.23: rdma-core's packages, a
    Multi-Arch: same library, irqbalance removed with its conffiles kept) and that VM's dpkg-query -W of the
    same names in the same minute: the states are dpkg-query's, the version is rdma-core's."""
    from ansible_collections.hpcnet.rdma.plugins.module_utils.facts import _findings
    status = real_capture("dpkg-status/debian12.status.txt")
    query = real_capture("dpkg-status/debian12.dpkg-query.txt")
    assert "dpkg 1.21.23" in real_header("dpkg-status/debian12.status.txt")["tool"]
    names = ["rdma-core", "ibverbs-providers", "libibverbs1", "irqbalance", "perftest", "no-such-package"]
    states = _pkgtools.parse_dpkg_status_states(status, names)
    assert states == _pkgtools.parse_dpkg_query_status(query)
    assert states["irqbalance"] == "config-files" and "no-such-package" not in states
    assert _findings.parse_dpkg_status_version(status, "rdma-core") == "44.0-2"
    assert _findings.parse_dpkg_status_version(status, "irqbalance") is None      # config-files: not installed
