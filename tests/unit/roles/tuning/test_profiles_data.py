# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The built-in profiles (roles/tuning/vars/profiles.yml): each resolves, each value has a source,
and offpeak really trades latency for CPU."""
from __future__ import annotations

import os
import re

import pytest
import yaml

import ansible_collections.hpcnet.rdma as collection

from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _profiles

PROFILES_FILE = os.path.join(list(collection.__path__)[0], "roles", "tuning", "vars", "profiles.yml")
BUILTIN_NAMES = ["balanced", "dl_training", "low_latency", "mpi", "offpeak", "storage"]


def load():
    with open(PROFILES_FILE, encoding="utf-8") as f:
        data = yaml.safe_load(f)
    assert list(data) == ["__rdma_builtin_profiles"], "the file defines one variable"
    return data["__rdma_builtin_profiles"]


BUILTIN = load()


def test_the_builtin_profiles():
    assert sorted(BUILTIN) == BUILTIN_NAMES


@pytest.mark.parametrize("name", BUILTIN_NAMES)
def test_profile_resolves_and_describes_itself(name):
    resolved = _profiles.resolve(name, BUILTIN)
    assert resolved["chain"] == [name]
    description = BUILTIN[name]["description"]
    assert resolved["description"] == description and "\n" not in description and 10 < len(description) <= 120
    assert resolved["sysctls"] and resolved["nic"]["mtu"] == 9000     # MTU is the fabric's: never switched
    assert "sources" not in resolved
    # the written values come back unchanged (the file needs no normalising)
    for section in ("sysctls", "nic", "irq", "qos"):
        assert resolved[section] == BUILTIN[name].get(section, {}), section


@pytest.mark.parametrize("name", BUILTIN_NAMES)
def test_every_value_has_a_source_and_every_source_a_value(name):
    profile = BUILTIN[name]
    paths = [p for p, _v in _profiles.value_paths(profile)]
    sources = profile["sources"]
    assert paths, name
    assert sorted(set(paths) - set(sources)) == [], "values without a source"
    assert sorted(set(sources) - set(paths)) == [], "sources of values the profile does not set"
    for path, citation in sources.items():
        assert isinstance(citation, str) and re.search(r"https://\S+", citation), (path, citation)


@pytest.mark.parametrize("name", BUILTIN_NAMES)
def test_builtins_stop_no_services(name):
    # none of the cited profiles stops a unit; irqbalance belongs to irq_affinity (rdma_irqbalance)
    assert _profiles.resolve(name, BUILTIN)["services"] == {"stop": [], "disable": []}


def test_digests_differ_between_builtins():
    digests = [_profiles.resolve(n, BUILTIN)["digest"] for n in BUILTIN_NAMES]
    assert len(set(digests)) == len(digests)


def test_offpeak_trades_latency_for_cpu():
    off = _profiles.resolve("offpeak", BUILTIN)
    mpi = _profiles.resolve("mpi", BUILTIN)
    low = _profiles.resolve("low_latency", BUILTIN)
    assert off["nic"]["coalesce"] == {"adaptive_rx": True, "adaptive_tx": True}
    assert off["sysctls"]["net.core.busy_poll"] == 0 and off["sysctls"]["net.core.busy_read"] == 0
    assert low["sysctls"]["net.core.busy_poll"] > 0       # the profile it turns polling off from
    assert off["sysctls"]["net.core.rmem_max"] < mpi["sysctls"]["net.core.rmem_max"]
    assert off["sysctls"]["net.core.wmem_max"] < mpi["sysctls"]["net.core.wmem_max"]
    assert 4 << 20 <= off["sysctls"]["net.core.rmem_max"] <= 16 << 20
    for key in ("net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"):
        assert int(off["sysctls"][key].split()[2]) < int(mpi["sysctls"][key].split()[2])
    # no absolute channel count: NICs differ, channels stay per interface (rdma_interfaces)
    assert "channels" not in off["nic"] and off["nic"]["mtu"] == mpi["nic"]["mtu"]


def test_a_user_profile_extends_a_builtin():
    user = {"site_offpeak": {"extends": "offpeak", "nic": {"coalesce": {"adaptive_tx": None}},
                             "services": {"stop": ["cups.service"]}}}
    out = _profiles.resolve("site_offpeak", BUILTIN, user)
    assert out["chain"] == ["site_offpeak", "offpeak"]
    assert out["nic"] == {"mtu": 9000, "coalesce": {"adaptive_rx": True}}
    assert out["services"] == {"stop": ["cups.service"], "disable": []}
    assert out["sysctls"] == _profiles.resolve("offpeak", BUILTIN)["sysctls"]
