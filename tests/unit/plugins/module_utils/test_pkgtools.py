# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/_pkgtools.py: the apt, dpkg and dnf output parsers against captured
outputs (tests/unit/fixtures/README.md)."""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils import _pkg, _pkgtools

from ...conftest import fixture


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
