# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tuning profiles: inheritance, validation and the digest, in one place (pure, no Ansible).

A profile is a dict with the sections of :data:`SECTIONS` plus ``description``, ``extends`` and
``sources``.  :func:`resolve` turns a profile name into its resolved values:

- user profiles (``rdma_profiles``) are looked up first, so a user profile of a built-in's name
  replaces that built-in entirely;
- ``extends: NAME`` inherits NAME's sections: dicts merge recursively, a list or scalar replaces,
  a ``None`` (YAML ``null``) drops the inherited key at any depth (``nic: {coalesce: null}``);
- every profile of the chain is checked as written, and the resolved values are checked again,
  so an inherited value that the child made invalid is caught too;
- ``digest`` is ``sha256:`` + the hex SHA-256 of the canonical JSON of the five sections, so two
  profiles with the same values have the same digest whatever their names.

The filter ``hpcnet.rdma.resolve_profile`` (``plugins/filter/profiles.py``) wraps this and turns
:class:`ProfileError` into ``AnsibleFilterError``.  The section schemas below mirror the modules
that apply them (``nic_tuning``'s settings, ``roce_qos``'s options, ``irq_affinity``'s policy);
``tests/unit/plugins/filter/test_profiles.py`` checks that they agree.
"""
from __future__ import annotations

import copy
import hashlib
import json
import re
from typing import Any, Dict, List, Mapping, Optional, Tuple

SECTIONS = ("sysctls", "nic", "irq", "qos", "services")
META_KEYS = ("description", "extends", "sources")
PROFILE_KEYS = tuple(sorted(SECTIONS + META_KEYS))

IRQ_POLICIES = ("spread-local", "single", "explicit", "hint")
RDMA_MTUS = (256, 512, 1024, 2048, 4096)

# Schemas in the argument-spec vocabulary (type, elements, choices, options) of the module options
# a section feeds; defaults are the modules' business and left out.
_INT = {"type": "int"}
_BOOL = {"type": "bool"}
NIC_SCHEMA: Dict[str, Dict[str, Any]] = {
    "mtu": _INT,
    "rings": {"type": "dict", "options": dict((k, _INT) for k in ("rx", "rx_mini", "rx_jumbo", "tx"))},
    "channels": {"type": "dict", "options": dict((k, _INT) for k in ("rx", "tx", "other", "combined"))},
    "coalesce": {"type": "dict", "options": dict(
        [(k, _BOOL) for k in ("adaptive_rx", "adaptive_tx")]
        + [(k, _INT) for k in ("rx_usecs", "tx_usecs", "rx_frames", "tx_frames")])},
}
IRQ_SCHEMA: Dict[str, Dict[str, Any]] = {
    "policy": {"type": "str", "choices": list(IRQ_POLICIES)},
    "reserved_cpus": {"type": "str"},
}
QOS_SCHEMA: Dict[str, Dict[str, Any]] = {
    "trust": {"type": "str", "choices": ["dscp", "pcp"]},
    "pfc": {"type": "list", "elements": "int"},
    "dscp_map": {"type": "dict"},
    "tos": {"type": "int"},
    "roce_mode": {"type": "str", "choices": ["v1", "v2"]},
    "ecn": {"type": "dict", "options": {"priorities": {"type": "list", "elements": "int"},
                                        "np": _BOOL, "rp": _BOOL}},
    "cnp": {"type": "dict", "options": {"dscp": _INT, "priority": _INT}},
    "rdma_mtu": {"type": "int", "choices": list(RDMA_MTUS)},
}
SERVICES_SCHEMA: Dict[str, Dict[str, Any]] = {
    "stop": {"type": "list", "elements": "str"},
    "disable": {"type": "list", "elements": "str"},
}
SCHEMAS = {"nic": NIC_SCHEMA, "irq": IRQ_SCHEMA, "qos": QOS_SCHEMA, "services": SERVICES_SCHEMA}

NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+$")
SYSCTL_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:/@+-]*$")
CPULIST_RE = re.compile(r"^\s*(\d+(-\d+)?(\s*,\s*\d+(-\d+)?)*)?\s*$")
_INT_STR_RE = re.compile(r"^\s*[+-]?\d+\s*$")
_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")
_TYPE_WORDS = {"int": "an integer", "bool": "a boolean (true or false)", "str": "a string",
               "list": "a list", "dict": "a mapping"}
_PLURAL = {"int": "integers", "str": "strings", "bool": "booleans"}


class ProfileError(ValueError):
    """A profile is unknown or invalid; the message names the field, the value and what is allowed."""


def _show(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=repr) if not isinstance(value, str) else repr(value)


def _where(name: str, chain: Optional[List[str]] = None) -> str:
    if chain and len(chain) > 1:
        return "profile %r (%s)" % (name, " -> ".join(chain))
    return "profile %r" % name


# ---- lookup and inheritance

def _definitions(builtin: Any, user: Any) -> Dict[str, Any]:
    """Every profile by name; a user profile replaces a built-in one of the same name."""
    out: Dict[str, Any] = {}
    for label, defs in (("the built-in profiles", builtin), ("rdma_profiles", user)):
        if defs is None:
            continue
        if not isinstance(defs, Mapping):
            raise ProfileError("%s: %s is not a mapping of profile name to profile; allowed: a mapping such as "
                               "{site_mpi: {extends: mpi, sysctls: {...}}}" % (label, _show(defs)))
        for name, profile in defs.items():
            if not isinstance(name, str) or not NAME_RE.match(name):
                raise ProfileError("%s: profile name %s is not allowed; allowed: letters, digits, '_', '.', '-'"
                                   % (label, _show(name)))
            out[name] = profile
    return out


def _known(defs: Mapping[str, Any]) -> str:
    return ", ".join(sorted(defs)) or "(none)"


def chain_of(name: Any, defs: Mapping[str, Any]) -> List[str]:
    """``[name, parent, grandparent, ...]``; raises on an unknown name or a cycle."""
    if not isinstance(name, str) or name not in defs:
        raise ProfileError("rdma_profile: %s is not a profile; known profiles: %s" % (_show(name), _known(defs)))
    chain = [name]
    while True:
        profile = defs[chain[-1]]
        _check_shape(chain[-1], profile)
        parent = profile.get("extends")
        if parent is None:
            return chain
        if not isinstance(parent, str) or parent not in defs:
            raise ProfileError("%s: extends: %s is not a profile; known profiles: %s"
                               % (_where(chain[-1]), _show(parent), _known(defs)))
        if parent in chain:
            cycle = chain[chain.index(parent):] + [parent]
            raise ProfileError("%s: extends forms a cycle: %s; allowed: a chain that ends in a profile "
                               "without extends" % (_where(chain[-1]), " -> ".join(cycle)))
        chain.append(parent)


def _check_shape(name: str, profile: Any) -> None:
    """What merging needs: a mapping of known keys whose sections are mappings (or null)."""
    if not isinstance(profile, Mapping):
        raise ProfileError("%s: %s is not a mapping; allowed: a mapping of %s"
                           % (_where(name), _show(profile), ", ".join(PROFILE_KEYS)))
    for key in profile:
        if key not in PROFILE_KEYS:
            raise ProfileError("%s: unknown section %s; allowed: %s" % (_where(name), _show(key), ", ".join(PROFILE_KEYS)))
    for key in SECTIONS + ("sources",):
        value = profile.get(key)
        if value is not None and not isinstance(value, Mapping):
            raise ProfileError("%s: %s: %s is not a mapping; allowed: a mapping (or null to drop the inherited one)"
                               % (_where(name), key, _show(value)))
    for key in ("description", "extends"):
        value = profile.get(key)
        if value is not None and not isinstance(value, str):
            raise ProfileError("%s: %s: %s is not a string; allowed: %s" % (
                _where(name), key, _show(value), "a profile name" if key == "extends" else "one line of text"))


def merge(base: Mapping[str, Any], child: Mapping[str, Any]) -> Dict[str, Any]:
    """``child`` over ``base``: mappings merge recursively, anything else replaces, None drops the key."""
    out = copy.deepcopy(dict(base))
    for key, value in child.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge(out[key], value)
        else:
            out[key] = _drop_nulls(value)
    return out


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict((k, _drop_nulls(v)) for k, v in value.items() if v is not None)
    return copy.deepcopy(value)


# ---- validation of one section

def _coerce(path: str, value: Any, spec: Mapping[str, Any]) -> Any:
    """``value`` checked against ``spec`` (type, elements, choices, options); returns it normalised."""
    kind = spec.get("type", "str")
    if kind == "int":
        if isinstance(value, bool) or not (isinstance(value, int) or (isinstance(value, str) and _INT_STR_RE.match(value))):
            raise ProfileError("%s: %s is not an integer; allowed: %s" % (path, _show(value), _allowed(spec)))
        value = int(value)
    elif kind == "bool":
        if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
            value = value.strip().lower() in _TRUE
        elif not isinstance(value, bool):
            raise ProfileError("%s: %s is not a boolean; allowed: true or false" % (path, _show(value)))
    elif kind == "str":
        if not isinstance(value, str):
            raise ProfileError("%s: %s is not a string; allowed: %s" % (path, _show(value), _allowed(spec)))
    elif kind == "list":
        if not isinstance(value, list):
            raise ProfileError("%s: %s is not a list; allowed: a list of %s" % (
                path, _show(value), _PLURAL[spec.get("elements", "str")]))
        return [_coerce("%s[%d]" % (path, i), v, {"type": spec.get("elements", "str")}) for i, v in enumerate(value)]
    elif kind == "dict":
        if not isinstance(value, Mapping):
            raise ProfileError("%s: %s is not a mapping; allowed: %s" % (path, _show(value), _allowed(spec)))
        options = spec.get("options")
        if options is None:
            return copy.deepcopy(dict(value))
        return _section(path, value, options)
    if "choices" in spec and value not in spec["choices"]:
        raise ProfileError("%s: %s is not allowed; allowed: %s" % (path, _show(value), _allowed(spec)))
    return value


def _allowed(spec: Mapping[str, Any]) -> str:
    if "choices" in spec:
        return "one of " + ", ".join(str(c) for c in spec["choices"])
    if spec.get("options"):
        return "a mapping of " + ", ".join(sorted(spec["options"]))
    return _TYPE_WORDS[spec.get("type", "str")]


def _section(path: str, values: Mapping[str, Any], schema: Mapping[str, Any]) -> Dict[str, Any]:
    out = {}
    for key, value in values.items():
        if key not in schema:
            raise ProfileError("%s: unknown key %s; allowed: %s" % (path, _show(key), ", ".join(sorted(schema))))
        out[key] = _coerce("%s.%s" % (path, key), value, schema[key])
    return out


def _sysctl_value(path: str, value: Any) -> Any:
    """An integer, or a string with its whitespace collapsed (a list becomes one such string)."""
    if isinstance(value, list):
        if not value or not all(isinstance(v, (int, str)) and not isinstance(v, bool) for v in value):
            raise ProfileError("%s: %s is not a list of integers or strings; allowed: an integer, a string or a "
                               "non-empty list of those" % (path, _show(value)))
        value = " ".join(str(v) for v in value)
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ProfileError("%s: %s is not a sysctl value; allowed: an integer, a string or a list of those "
                           "(null drops an inherited key)" % (path, _show(value)))
    if isinstance(value, str):
        value = " ".join(value.split())
        if not value:
            raise ProfileError("%s: the value is empty; allowed: an integer, a string or a list of those" % path)
        if re.match(r"^-?(0|[1-9][0-9]*)$", value):
            return int(value)
    return value


def validate_sections(where: str, profile: Mapping[str, Any]) -> Dict[str, Any]:
    """The five sections of ``profile`` checked and normalised; absent ones empty."""
    out: Dict[str, Any] = {}
    sysctls = {}
    for key, value in (profile.get("sysctls") or {}).items():
        if not isinstance(key, str) or not SYSCTL_RE.match(key):
            raise ProfileError("%s: sysctls: %s is not a sysctl name; allowed: a dotted or slash-separated "
                               "name such as net.core.rmem_max" % (where, _show(key)))
        sysctls[key] = _sysctl_value("%s: sysctls.%s" % (where, key), value)
    out["sysctls"] = sysctls
    for name, schema in SCHEMAS.items():
        out[name] = _section("%s: %s" % (where, name), profile.get(name) or {}, schema)
    reserved = out["irq"].get("reserved_cpus")
    if reserved is not None and not CPULIST_RE.match(reserved):
        raise ProfileError("%s: irq.reserved_cpus: %s is not a cpulist; allowed: a cpulist such as 0-3,8 "
                           "(empty for none)" % (where, _show(reserved)))
    for field in ("stop", "disable"):
        units = out["services"].setdefault(field, [])
        if any(not u.strip() for u in units):
            raise ProfileError("%s: services.%s: %s holds an empty name; allowed: systemd unit names"
                               % (where, field, _show(units)))
    return out


def digest(sections: Mapping[str, Any]) -> str:
    """``sha256:`` + hex digest of the canonical JSON of the five sections."""
    canonical = json.dumps(dict((k, sections[k]) for k in SECTIONS), sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def resolve(name: Any, builtin: Any, user: Any = None) -> Dict[str, Any]:
    """The resolved profile ``name``: ``{name, chain, description, digest, sysctls, nic, irq, qos, services}``."""
    defs = _definitions(builtin, user)
    chain = chain_of(name, defs)
    merged: Dict[str, Any] = dict((s, {}) for s in SECTIONS)
    description = ""
    for ancestor in reversed(chain):
        profile = defs[ancestor]
        validate_sections(_where(ancestor), merge({}, profile))   # each as written (its nulls dropped)
        for section in SECTIONS:
            if section in profile:   # a null section drops the whole inherited one
                merged[section] = {} if profile[section] is None else merge(merged[section], profile[section])
        if profile.get("description"):
            description = profile["description"]
    resolved = validate_sections(_where(chain[0], chain), merged)
    out: Dict[str, Any] = {"name": chain[0], "chain": chain, "description": description,
                           "digest": digest(resolved)}
    out.update(resolved)
    return out


def value_paths(profile: Mapping[str, Any]) -> List[Tuple[str, Any]]:
    """Every value of a profile's sections by dotted path (``sysctls.net.core.rmem_max``, ``nic.mtu``,
    ``nic.coalesce.adaptive_rx``); a sysctl and ``qos.dscp_map`` are one value each, empty lists and
    mappings are no values."""
    out: List[Tuple[str, Any]] = []

    def walk(path: str, value: Any) -> None:
        leaf = path.startswith("sysctls.") or path == "qos.dscp_map" or not isinstance(value, Mapping)
        if not leaf:
            for k in sorted(value):
                walk("%s.%s" % (path, k), value[k])
        elif value not in ({}, [], None):
            out.append((path, value))

    for section in SECTIONS:
        walk(section, profile.get(section) or {})
    return out
