# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The body of module hpcnet.rdma.service_state: its argument spec and ``run(module, host)``.

The module calls it, and so does hpcnet.rdma.node_tuning, which runs several tuning modules in
one module call (one Python start, one payload, one connection round trip for all of them).
"""
from __future__ import annotations


from ansible_collections.hpcnet.rdma.plugins.module_utils.services import _domain as _service
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _spec
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._engine import Engine
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Plan
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import lazy_re

# systemd.unit(5): the unit types, and the characters a unit name may hold
UNIT_TYPES = ("service", "socket", "device", "mount", "automount", "swap", "target", "path", "timer", "slice", "scope")
UNIT_RE = lazy_re(r"^[A-Za-z0-9:_.\\-]+(@[A-Za-z0-9:_.\\-]+)?\.(%s)$" % "|".join(UNIT_TYPES))
NAME_MAX = 255
# stopping these ends the SSH connection this task and any rollback run over
CONNECTION_UNITS = ("ssh.service", "sshd.service")
# these carry the node's network (the connection's too): stopped now or disabled at boot, the node
# may be cut off; refused in stop and disable unless allow_network_stop
NETWORK_UNITS = ("systemd-networkd.service", "networking.service", "NetworkManager.service")
# the lists, in the order a unit is first planned; each pair cannot share a unit
FIELDS = ("stop", "disable", "start", "enable")
OPPOSITES = (("start", "stop"), ("enable", "disable"))
# what each mode applies: the running state now, the boot state, or both
RUNTIME_FIELDS = ("stop", "start")
# boot states in which the unit already does not start at boot
NOT_AT_BOOT = ("disabled", "masked", "masked-runtime", _service.NOT_FOUND)
MASKED = ("masked", "masked-runtime")
NO_SYSTEMD = "systemd is not running on this node (a container or an image build)"

ARGUMENT_SPEC = _spec.argument_spec(dict(
    stop=dict(type="list", elements="str", default=[]),
    disable=dict(type="list", elements="str", default=[]),
    start=dict(type="list", elements="str", default=[]),
    enable=dict(type="list", elements="str", default=[]),
    daemon_reload=dict(type="bool", default=False),
    allow_network_stop=dict(type="bool", default=False),
), _spec.MODE, _spec.JOURNAL_DIR, _spec.RUN)


def unit_name(field: str, name: str) -> str:
    """``name`` as a full unit name (``.service`` added when it has no type suffix); ValueError names
    the field, the value and what is allowed."""
    full = name.strip() if isinstance(name, str) else name
    if isinstance(full, str) and full.startswith("-"):
        raise ValueError("%s: %r is not a unit name this module accepts: it starts with '-', which systemctl would "
                         "read as an option; allowed: names that start with a letter, digit, ':', '_', '.' or a "
                         "backslash escape" % (field, name))
    if isinstance(full, str) and full and not full.endswith(tuple("." + t for t in UNIT_TYPES)):
        full += ".service"
    if not isinstance(full, str) or len(full) > NAME_MAX or not UNIT_RE.match(full):
        raise ValueError("%s: %r is not a systemd unit name; allowed: NAME, NAME.TYPE or NAME@INSTANCE.TYPE of "
                         "letters, digits, ':', '_', '.', '-' and backslash escapes, TYPE one of %s (.service "
                         "when none is given)" % (field, name, ", ".join(UNIT_TYPES)))
    return full


def normalize(params: dict) -> dict:
    """The unit lists of ``params``, validated, suffixed and without repeats, in the order given;
    ValueError for a unit in two opposite lists, a connection unit in ``stop``, or a unit that carries
    the network in ``stop`` or ``disable`` without ``allow_network_stop``."""
    units = {}
    for field in FIELDS:
        names = []
        for name in params.get(field) or []:
            full = unit_name(field, name)
            if full not in names:
                names.append(full)
        units[field] = names
    refused = [u for u in units["stop"] if u in CONNECTION_UNITS]
    if refused:
        raise ValueError("stop: %s carries this connection (and the rollback's); allowed: units other than %s"
                         % (", ".join(refused), ", ".join(CONNECTION_UNITS)))
    if not params.get("allow_network_stop"):
        for field in ("stop", "disable"):
            network = [u for u in units[field] if u in NETWORK_UNITS]
            if network:
                raise ValueError("%s: %s carries the node's network (and so the Ansible connection, now or after the "
                                 "next boot); allowed: units other than %s, or set allow_network_stop: true when "
                                 "the node is reached another way" % (field, ", ".join(network), ", ".join(NETWORK_UNITS)))
    for one, other in OPPOSITES:
        both = [u for u in units[one] if u in units[other]]
        if both:
            raise ValueError("%s, %s: %s %s in both; allowed: a unit in at most one of %s and %s"
                             % (one, other, ", ".join(both), "is" if len(both) == 1 else "are", one, other))
    return units


def applied(units: dict, mode: str) -> dict:
    """The units ``mode`` acts on, per list: ``stop``/``start`` in runtime and both, ``disable``/
    ``enable`` in persist and both."""
    runtime, persist = mode in ("runtime", "both"), mode in ("persist", "both")
    return dict((f, units[f] if (runtime if f in RUNTIME_FIELDS else persist) else []) for f in FIELDS)


def in_order(acting: dict) -> list:
    """Every unit ``acting`` names, once, in the order of :data:`FIELDS` and then as given."""
    order = []
    for field in FIELDS:
        order.extend(u for u in acting[field] if u not in order)
    return order


def plan(units: dict, states: dict, mode: str, systemd: bool, pending: bool = False) -> dict:
    """Pure: the plan from the normalised ``units`` and every unit's observed state (``states``:
    unit -> ``{active, enabled}`` or None).  ``pending``: check mode with ``daemon_reload``, where a
    unit to start or enable may be one whose file an earlier task would write.  ValueError for a unit
    that cannot be started or enabled, before anything changes."""
    acting = applied(units, mode)
    p = Plan()
    previous, absent, notes = {}, [], []
    for unit in in_order(acting):
        state = states.get(unit)
        asked = [f for f in FIELDS if unit in acting[f]]
        wanting = [f for f in asked if f in ("start", "enable")]
        previous["service:" + unit] = state
        gone = state is not None and state["enabled"] == _service.NOT_FOUND
        if wanting and (state is None or gone):
            if pending and systemd and state is None:
                absent.append({"unit": unit, "reason": "not installed yet (check mode: daemon_reload does not run)"})
                notes.append("%s: %s is not installed yet; in check mode a unit file an earlier task would write is "
                             "not there and systemd is not reloaded, so what the real run does to it is not predicted"
                             % (", ".join(wanting), unit))
                continue
            if not systemd:
                why = NO_SYSTEMD
            elif gone:
                why = "its unit file was removed (it runs on until a daemon-reload)"
            else:
                why = "not installed: systemd knows no unit file of that name"
            raise ValueError("%s: %s cannot be %s: %s; allowed: installed units (write the unit file first, e.g. with "
                             "hpcnet.rdma.managed_files, and set daemon_reload when it was written in this play)"
                             % (", ".join(wanting), unit, " or ".join(
                                 {"start": "started", "enable": "enabled"}[f] for f in wanting), why))
        if state is None:
            absent.append({"unit": unit, "reason": "not installed" if systemd else NO_SYSTEMD})
            continue
        if "start" in asked and state["enabled"] in MASKED:
            raise ValueError("start: %s is %s, so systemctl start refuses it; allowed: units that are not masked "
                             "(systemctl unmask it first)" % (unit, state["enabled"]))
        wanted = dict(state)
        if "stop" in asked:
            wanted["active"] = False
        if "start" in asked:
            wanted["active"] = True
        if "disable" in asked:
            if state["enabled"] == "enabled":
                wanted["enabled"] = "disabled"
            elif state["enabled"] not in NOT_AT_BOOT:
                notes.append("disable: %s is %s%s: systemctl disable cannot keep it from starting" % (
                    unit, state["enabled"], " (no [Install] section)" if state["enabled"] == "static" else ""))
        if "enable" in asked:
            if state["enabled"] == "disabled":
                wanted["enabled"] = "enabled"
            elif state["enabled"] != "enabled":
                notes.append("enable: %s is %s%s: systemctl enable cannot make it start at boot; left as it is" % (
                    unit, state["enabled"], " (no [Install] section)" if state["enabled"] == "static" else ""))
        if wanted != state:
            p.add("service:" + unit, state, wanted)
    return {"plan": p, "previous": previous, "absent": absent, "notes": notes}


def run(module, host: Host) -> dict:
    params = module.params
    try:
        units = normalize(params)
    except ValueError as e:
        module.fail_json(msg=str(e))
    if not any(units[f] for f in FIELDS) and not params.get("release_scope"):
        module.fail_json(msg="stop, disable, start, enable: at least one unit is required (or release_scope, to "
                             "return the units earlier calls of that scope changed to their original state)")
    engine = Engine(module, host, params["journal_dir"], domains=(_service.DOMAINS,))
    extra = {"units": units, "absent": [], "notes": [], "daemon_reloaded": False}
    reload_now = params["daemon_reload"] and not module.check_mode

    def build():
        systemd = _service.systemd_running(host)
        if reload_now and systemd and not extra["daemon_reloaded"]:
            _service.daemon_reload(host)     # once, before the first read: systemd sees the files on disk
            extra["daemon_reloaded"] = True
        acting = applied(units, params["mode"])
        states = dict((u, _service.read_value(host, u) if systemd else None) for u in in_order(acting))
        planned = plan(units, states, params["mode"], systemd, pending=params["daemon_reload"] and module.check_mode)
        extra["absent"] = planned["absent"]
        extra["notes"] = planned["notes"]
        return planned["plan"], planned["previous"]

    out = engine.run("service_state", build, extra)
    for note in out.get("notes", []):
        module.warn(note)
    return out
