# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The profile resolver (plugins/plugin_utils/_profiles.py) and its filter: inheritance, null drops,
overrides, the digest and every error, as tables."""
from __future__ import annotations

import copy
import re

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.hpcnet.rdma.plugins.filter import profiles as profiles_filter
from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _domain as _nic
from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _check as _qoscheck
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _spec
from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _module as irq_affinity
from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _module as nic_tuning
from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _module as roce_qos
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _profiles
from ansible_collections.hpcnet.rdma.plugins.plugin_utils._profiles import ProfileError, resolve

BUILTIN = {
    "base": {"description": "the root",
             "sysctls": {"net.core.rmem_max": 1000, "net.core.busy_poll": 50, "net.ipv4.tcp_rmem": "4096 87380 1000"},
             "nic": {"mtu": 9000, "coalesce": {"adaptive_rx": False, "rx_usecs": 8}, "rings": {"rx": 4096, "tx": 4096}},
             "irq": {"policy": "single"},
             "qos": {"pfc": [3], "trust": "dscp", "ecn": {"priorities": [3], "np": True}},
             "services": {"stop": ["a.service"], "disable": ["a.service"]},
             "sources": {"nic.mtu": "somewhere"}},
    "mid": {"extends": "base", "sysctls": {"net.core.rmem_max": 2000}, "nic": {"coalesce": {"rx_usecs": 16}}},
    "top": {"extends": "mid", "description": "the leaf", "sysctls": {"vm.swappiness": 10},
            "nic": {"rings": {"tx": 1024}}},
    "plain": {"sysctls": {"vm.swappiness": 10}},
}


def err(name, builtin=None, user=None):
    with pytest.raises(ProfileError) as e:
        resolve(name, BUILTIN if builtin is None else builtin, user)
    return str(e.value)


# ---- inheritance, drops, replaces, overrides

@pytest.mark.parametrize("name, user, path, expected", [
    # three levels: top -> mid -> base, each level's value wins over its parent's
    ("top", None, "chain", ["top", "mid", "base"]),
    ("top", None, "sysctls", {"net.core.rmem_max": 2000, "net.core.busy_poll": 50,
                              "net.ipv4.tcp_rmem": "4096 87380 1000", "vm.swappiness": 10}),
    ("top", None, "nic", {"mtu": 9000, "coalesce": {"adaptive_rx": False, "rx_usecs": 16}, "rings": {"rx": 4096, "tx": 1024}}),
    ("top", None, "irq", {"policy": "single"}),
    ("top", None, "description", "the leaf"),
    ("mid", None, "description", "the root"),    # inherited when the child has none
    # null drops an inherited key at any depth, or a whole section
    ("u", {"u": {"extends": "top", "sysctls": {"net.core.busy_poll": None}}}, "sysctls",
     {"net.core.rmem_max": 2000, "net.ipv4.tcp_rmem": "4096 87380 1000", "vm.swappiness": 10}),
    ("u", {"u": {"extends": "top", "nic": {"coalesce": {"rx_usecs": None}, "rings": {"rx": None}}}}, "nic",
     {"mtu": 9000, "coalesce": {"adaptive_rx": False}, "rings": {"tx": 1024}}),
    ("u", {"u": {"extends": "top", "nic": {"coalesce": None}}}, "nic", {"mtu": 9000, "rings": {"rx": 4096, "tx": 1024}}),
    ("u", {"u": {"extends": "top", "qos": None}}, "qos", {}),
    ("u", {"u": {"extends": "top", "qos": {"ecn": {"np": None}}}}, "qos", {"pfc": [3], "trust": "dscp", "ecn": {"priorities": [3]}}),
    ("u", {"u": {"extends": "base", "nic": {"mtu": None, "wanted": None}}}, "nic",     # null of a key never set: nothing
     {"coalesce": {"adaptive_rx": False, "rx_usecs": 8}, "rings": {"rx": 4096, "tx": 4096}}),
    # a list replaces the inherited one, it is not appended to
    ("u", {"u": {"extends": "base", "qos": {"pfc": [4, 5]}}}, "qos", {"pfc": [4, 5], "trust": "dscp", "ecn": {"priorities": [3], "np": True}}),
    ("u", {"u": {"extends": "base", "services": {"stop": ["b.service"]}}}, "services",
     {"stop": ["b.service"], "disable": ["a.service"]}),
    ("u", {"u": {"extends": "base", "services": {"stop": []}}}, "services", {"stop": [], "disable": ["a.service"]}),
    # a user profile of a built-in's name replaces the built-in entirely (also for its children)
    ("mid", {"base": {"sysctls": {"vm.swappiness": 1}}}, "sysctls", {"vm.swappiness": 1, "net.core.rmem_max": 2000}),
    ("base", {"base": {"sysctls": {"vm.swappiness": 1}}}, "nic", {}),
    ("base", {"base": {"sysctls": {"vm.swappiness": 1}}}, "chain", ["base"]),
    # every section present, services with both lists; sources not in the result
    ("plain", None, "nic", {}),
    ("plain", None, "services", {"stop": [], "disable": []}),
    ("plain", None, "description", ""),
    # normalisation: sysctl lists joined, whitespace collapsed, integer strings integers; int/bool strings
    ("u", {"u": {"sysctls": {"net.ipv4.tcp_rmem": [4096, "87380", 1000], "vm.swappiness": "10",
                             "net.ipv4.tcp_wmem": "4096\t16384   1000", "net.ipv4.tcp_congestion_control": "bbr"}}},
     "sysctls", {"net.ipv4.tcp_rmem": "4096 87380 1000", "vm.swappiness": 10, "net.ipv4.tcp_wmem": "4096 16384 1000",
                 "net.ipv4.tcp_congestion_control": "bbr"}),
    ("u", {"u": {"nic": {"mtu": "9000", "coalesce": {"adaptive_rx": "yes"}}}}, "nic", {"mtu": 9000, "coalesce": {"adaptive_rx": True}}),
])
def test_resolution(name, user, path, expected):
    assert resolve(name, BUILTIN, user)[path] == expected


def test_result_shape_and_inputs_untouched():
    builtin, user = copy.deepcopy(BUILTIN), {"u": {"extends": "top", "nic": {"coalesce": None}}}
    user_before = copy.deepcopy(user)
    out = resolve("u", builtin, user)
    assert sorted(out) == ["chain", "description", "digest", "irq", "name", "nic", "qos", "services", "sysctls"]
    assert out["name"] == "u" and out["chain"] == ["u", "top", "mid", "base"]
    assert re.match(r"^sha256:[0-9a-f]{64}$", out["digest"])
    assert builtin == BUILTIN and user == user_before
    out["nic"]["mtu"] = 1
    assert BUILTIN["base"]["nic"]["mtu"] == 9000     # the result shares nothing with the input


# ---- the digest

def test_digest_is_the_canonical_json_of_the_five_sections():
    import hashlib
    import json
    out = resolve("plain", BUILTIN)
    canonical = json.dumps({"sysctls": {"vm.swappiness": 10}, "nic": {}, "irq": {}, "qos": {},
                            "services": {"stop": [], "disable": []}}, sort_keys=True, separators=(",", ":"))
    assert out["digest"] == "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


@pytest.mark.parametrize("a, b, same", [
    # key order does not matter, names and descriptions and sources do not matter
    ({"sysctls": {"a.b": 1, "c.d": 2}, "nic": {"mtu": 9000, "coalesce": {"rx_usecs": 1, "adaptive_rx": True}}},
     {"nic": {"coalesce": {"adaptive_rx": True, "rx_usecs": 1}, "mtu": 9000}, "sysctls": {"c.d": 2, "a.b": 1}}, True),
    ({"sysctls": {"a.b": 1}, "description": "one", "sources": {"sysctls.a.b": "x"}},
     {"sysctls": {"a.b": 1}, "description": "two"}, True),
    # the same values reached by inheritance or written out
    ({"extends": "plain"}, {"sysctls": {"vm.swappiness": 10}}, True),
    ({"extends": "plain", "sysctls": {"vm.swappiness": None}}, {}, True),
    # equal after normalisation
    ({"sysctls": {"net.ipv4.tcp_rmem": [4096, 87380, 1000]}}, {"sysctls": {"net.ipv4.tcp_rmem": "4096  87380 1000"}}, True),
    ({"services": {}}, {"services": {"stop": [], "disable": []}}, True),
    # different values differ
    ({"sysctls": {"a.b": 1}}, {"sysctls": {"a.b": 2}}, False),
    ({"nic": {"mtu": 9000}}, {"nic": {"mtu": 1500}}, False),
    ({"services": {"stop": ["a.service", "b.service"]}}, {"services": {"stop": ["b.service", "a.service"]}}, False),
])
def test_digest_depends_on_values_only(a, b, same):
    da = resolve("first", BUILTIN, {"first": a})["digest"]
    db = resolve("second", BUILTIN, {"second": b})["digest"]
    assert (da == db) is same
    assert resolve("first", BUILTIN, {"first": a})["digest"] == da     # stable across calls


# ---- errors: each names the field, the value and what is allowed

KNOWN = "base, mid, plain, top"
ERRORS = [
    ("nope", None, "rdma_profile: 'nope' is not a profile; known profiles: " + KNOWN),
    ("nope", {"zz": {}, "aa": {}}, "rdma_profile: 'nope' is not a profile; known profiles: aa, base, mid, plain, top, zz"),
    (None, None, "rdma_profile: null is not a profile; known profiles: " + KNOWN),
    ("u", {"u": {"extends": "ghost"}}, "profile 'u': extends: 'ghost' is not a profile; known profiles: base, mid, plain, top, u"),
    ("a", {"a": {"extends": "b"}, "b": {"extends": "a"}}, "profile 'b': extends forms a cycle: a -> b -> a"),
    ("a", {"a": {"extends": "a"}}, "profile 'a': extends forms a cycle: a -> a"),
    ("x", {"x": {"extends": "a"}, "a": {"extends": "b"}, "b": {"extends": "c"}, "c": {"extends": "a"}},
     "profile 'c': extends forms a cycle: a -> b -> c -> a"),
    ("u", {"u": {"sysctl": {}}}, "profile 'u': unknown section 'sysctl'; allowed: description, extends, irq, nic, qos, "
                                 "services, sources, sysctls"),
    ("u", {"u": "mpi"}, "profile 'u': 'mpi' is not a mapping; allowed: a mapping of description, extends"),
    ("u", {"u": {"nic": [9000]}}, "profile 'u': nic: [9000] is not a mapping; allowed: a mapping"),
    ("u", {"u": {"extends": 3}}, "profile 'u': extends: 3 is not a string; allowed: a profile name"),
    ("u", {"u": {"description": ["x"]}}, "profile 'u': description: [\"x\"] is not a string; allowed: one line of text"),
    ("u", {"u": {"sysctls": {"vm.swappiness": {"value": 1}}}},
     "profile 'u': sysctls.vm.swappiness: {\"value\": 1} is not a sysctl value; allowed: an integer, a string or a list"),
    ("u", {"u": {"sysctls": {"vm.swappiness": True}}}, "profile 'u': sysctls.vm.swappiness: true is not a sysctl value"),
    ("u", {"u": {"sysctls": {"vm.swappiness": []}}}, "profile 'u': sysctls.vm.swappiness: [] is not a list of integers or strings"),
    ("u", {"u": {"sysctls": {"vm swappiness": 1}}}, "profile 'u': sysctls: 'vm swappiness' is not a sysctl name"),
    ("u", {"u": {"nic": {"mtu": "jumbo"}}}, "profile 'u': nic.mtu: 'jumbo' is not an integer; allowed: an integer"),
    ("u", {"u": {"nic": {"mtu": True}}}, "profile 'u': nic.mtu: true is not an integer"),
    ("u", {"u": {"nic": {"speed": 100}}}, "profile 'u': nic: unknown key 'speed'; allowed: channels, coalesce, mtu, rings"),
    ("u", {"u": {"nic": {"coalesce": {"adaptive_rx": "maybe"}}}},
     "profile 'u': nic.coalesce.adaptive_rx: 'maybe' is not a boolean; allowed: true or false"),
    ("u", {"u": {"nic": {"coalesce": {"rx_usec": 1}}}}, "profile 'u': nic.coalesce: unknown key 'rx_usec'; allowed: adaptive_rx"),
    ("u", {"u": {"nic": {"rings": 4096}}}, "profile 'u': nic.rings: 4096 is not a mapping; allowed: a mapping of rx, rx_jumbo"),
    ("u", {"u": {"irq": {"policy": "numa"}}},
     "profile 'u': irq.policy: 'numa' is not allowed; allowed: one of spread-local, single, explicit, hint"),
    ("u", {"u": {"irq": {"reserved_cpus": "0-3;8"}}}, "profile 'u': irq.reserved_cpus: '0-3;8' is not a cpulist"),
    ("u", {"u": {"irq": {"reserved_cpus": 3}}}, "profile 'u': irq.reserved_cpus: 3 is not a string; allowed: a string"),
    ("u", {"u": {"services": {"stop": "cups.service"}}},
     "profile 'u': services.stop: 'cups.service' is not a list; allowed: a list of strings"),
    ("u", {"u": {"services": {"stop": [1]}}}, "profile 'u': services.stop[0]: 1 is not a string"),
    ("u", {"u": {"services": {"disable": [" "]}}}, "profile 'u': services.disable: [\" \"] holds an empty name"),
    ("u", {"u": {"services": {"mask": []}}}, "profile 'u': services: unknown key 'mask'; allowed: disable, stop"),
    ("u", {"u": {"qos": {"backend": "dcb"}}},
     "profile 'u': qos: unknown key 'backend'; allowed: cnp, dscp_map, ecn, pfc, rdma_mtu, roce_mode, tos, trust"),
    ("u", {"u": {"qos": {"trust": "ip"}}}, "profile 'u': qos.trust: 'ip' is not allowed; allowed: one of dscp, pcp"),
    ("u", {"u": {"qos": {"pfc": [3, "x"]}}}, "profile 'u': qos.pfc[1]: 'x' is not an integer"),
    ("u", {"u": {"qos": {"rdma_mtu": 9000}}}, "profile 'u': qos.rdma_mtu: 9000 is not allowed; allowed: one of 256, 512"),
    ("u", {"u": {"qos": {"ecn": {"np": "sometimes"}}}}, "profile 'u': qos.ecn.np: 'sometimes' is not a boolean"),
    ("u", {"u": {"qos": {"dscp_map": [1]}}}, "profile 'u': qos.dscp_map: [1] is not a mapping; allowed: a mapping"),
    # checked after resolution too: a child's value that breaks an inherited one names the chain
    ("u", {"u": {"extends": "top", "nic": {"coalesce": 5}}},
     "profile 'u': nic.coalesce: 5 is not a mapping"),
    # an error in a parent is reported against the parent, even when a child is resolved
    ("u", {"u": {"extends": "bad"}, "bad": {"nic": {"mtu": "big"}}}, "profile 'bad': nic.mtu: 'big' is not an integer"),
    # names and containers
    ("u", {"u b": {}}, "rdma_profiles: profile name 'u b' is not allowed; allowed: letters, digits"),
    ("u", ["u"], "rdma_profiles: [\"u\"] is not a mapping of profile name to profile"),
]


@pytest.mark.parametrize("name, user, message", ERRORS)
def test_errors_name_field_value_and_allowed(name, user, message):
    assert err(name, user=user).startswith(message)


def test_inherited_value_made_invalid_by_the_child_names_the_chain():
    # the child replaces an inherited mapping with a scalar under it: caught after the merge
    message = err("u", user={"u": {"extends": "top", "nic": {"rings": {"rx": "many"}}}})
    assert message.startswith("profile 'u': nic.rings.rx: 'many' is not an integer")
    builtin = {"p": {"qos": {"ecn": {"np": True}}}}
    # a child that turns an inherited value into an unknown choice
    assert err("c", builtin, {"c": {"extends": "p", "irq": {"policy": "any"}}}).startswith(
        "profile 'c': irq.policy: 'any' is not allowed")


def test_each_profile_as_written_then_the_merged_values_are_validated(monkeypatch):
    # root first, each as written, then the merge, reported with its chain
    calls = []
    real = _profiles.validate_sections

    def spy(where, profile):
        calls.append(where)
        return real(where, profile)
    monkeypatch.setattr(_profiles, "validate_sections", spy)
    resolve("top", BUILTIN)
    assert calls == ["profile 'base'", "profile 'mid'", "profile 'top'", "profile 'top' (top -> mid -> base)"]


# ---- the filter

def test_filter_is_registered_and_wraps_errors():
    filters = profiles_filter.FilterModule().filters()
    assert filters["resolve_profile"]("plain", BUILTIN)["sysctls"] == {"vm.swappiness": 10}
    assert filters["resolve_profile"]("u", BUILTIN, {"u": {"extends": "plain"}})["chain"] == ["u", "plain"]
    with pytest.raises(AnsibleFilterError, match=r"rdma_profile: 'x' is not a profile; known profiles: base, mid, plain, top"):
        filters["resolve_profile"]("x", BUILTIN, {})


# ---- the schemas agree with the modules that apply the sections

def _strip(spec):
    out = {}
    for name, option in spec.items():
        o = dict((k, v) for k, v in option.items() if k in ("type", "elements", "choices"))
        o.setdefault("type", "str")
        if option.get("options"):
            o["options"] = _strip(option["options"])
        out[name] = o
    return out


# options every module shares (journal, mode, run ...) are no profile values
SHARED = set(name for piece in vars(_spec).values() if isinstance(piece, dict) for name in piece)


@pytest.mark.parametrize("schema, spec", [
    (_profiles.NIC_SCHEMA, nic_tuning._SETTINGS),
    (_profiles.QOS_SCHEMA, dict((k, v) for k, v in roce_qos.ARGUMENT_SPEC.items()
                                if k not in SHARED and k not in ("interfaces", "backend", "on_unsupported"))),
    (_profiles.IRQ_SCHEMA, dict((k, v) for k, v in irq_affinity.ARGUMENT_SPEC.items() if k in ("policy", "reserved_cpus"))),
])
def test_schema_matches_module_spec(schema, spec):
    assert _strip(schema) == _strip(spec)


def test_module_constants_agree():
    assert _profiles.RDMA_MTUS == _qoscheck.RDMA_MTUS
    assert set(_profiles.NIC_SCHEMA["rings"]["options"]) == set(_nic.fields("rings"))
    assert set(_profiles.NIC_SCHEMA["channels"]["options"]) == set(_nic.fields("channels"))


# ---- value paths (what the sources of a profile must cover)

def test_value_paths():
    assert _profiles.value_paths(BUILTIN["base"]) == [
        ("sysctls.net.core.busy_poll", 50), ("sysctls.net.core.rmem_max", 1000),
        ("sysctls.net.ipv4.tcp_rmem", "4096 87380 1000"),
        ("nic.coalesce.adaptive_rx", False), ("nic.coalesce.rx_usecs", 8), ("nic.mtu", 9000),
        ("nic.rings.rx", 4096), ("nic.rings.tx", 4096),
        ("irq.policy", "single"),
        ("qos.ecn.np", True), ("qos.ecn.priorities", [3]), ("qos.pfc", [3]), ("qos.trust", "dscp"),
        ("services.disable", ["a.service"]), ("services.stop", ["a.service"])]
    assert _profiles.value_paths({"qos": {"dscp_map": {"26": 3}}, "services": {"stop": []}}) == [("qos.dscp_map", {"26": 3})]
