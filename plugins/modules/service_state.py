#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: service_state
short_description: Stop, start, disable and enable systemd units, journaled for rollback
version_added: 0.1.0
author:
  - hpcnet.rdma contributors (@hpcnet)
description:
  - Stops the units of O(stop) and starts the units of O(start) (their state now), disables the units of
    O(disable) and enables the units of O(enable) (whether they start at boot), all in one call; a tuning
    profile's C(services) section and the timer of M(hpcnet.rdma.managed_files)-written units are applied
    with it.
  - Each unit's state before the change (running or not, enabled or not) is recorded in the journal
    under C(service:UNIT); M(hpcnet.rdma.tuning_state) rolls back to exactly that state, through the
    same code path - it starts and re-enables what this module stopped or disabled, and stops and
    disables what it started or enabled.
  - Rollback restores keys newest first, so a unit started after its unit file was written (by
    M(hpcnet.rdma.managed_files), in the same run or earlier) is stopped and disabled before that file is
    removed; a unit that is not installed any more counts as stopped and disabled.  Should a unit's file
    be gone while it still runs, the rollback stops it as a loaded unit and runs C(systemctl daemon-reload).
  - A unit given in no list is not touched.  For O(stop) and O(disable), a unit that is not installed, or
    a node that does not run systemd (a container, an image build in a chroot), is not a change and not a
    failure; it is listed in RV(absent) with the reason.  For O(start) and O(enable) it is an error naming
    the unit and the field, before anything changes - a missing unit cannot be started.
  - A unit whose boot state is not plain C(enabled) (C(static), C(indirect), C(generated),
    C(enabled-runtime), ...) cannot be disabled by C(systemctl disable), and one that is not plain
    C(disabled) cannot be enabled by C(systemctl enable); it is left as it is and named in RV(notes).
    C(disabled) and C(masked) units already do not start at boot.  A masked unit in O(start) is an error.
  - A unit in both O(start) and O(stop), or in both O(enable) and O(disable), is an error naming the
    unit and both fields, before anything changes.
  - C(ssh.service) and C(sshd.service) are refused in O(stop), since stopping them ends the connection
    this task and a rollback run over.
requirements:
  - systemd (C(systemctl)) on the node.
options:
  stop:
    description:
      - Units to make inactive now (C(systemctl stop)); applied in O(mode=runtime) and O(mode=both).
      - A name without a unit type suffix gets C(.service) (C(cups) is C(cups.service)). A name must
        look like a systemd unit name (letters, digits, C(:), C(_), C(.), C(-), backslash escapes and
        one C(@) before an instance); a template needs an instance (C(getty@tty1.service), not
        C(getty@.service)).
    type: list
    elements: str
    default: []
  disable:
    description:
      - Units that must not start at boot (C(systemctl disable)); applied in O(mode=persist) and
        O(mode=both). Disabling does not stop a running unit; list it in O(stop) too for that.
      - Names as in O(stop).
    type: list
    elements: str
    default: []
  start:
    description:
      - Units to make active now (C(systemctl start)); applied in O(mode=runtime) and O(mode=both).
        Rollback stops each unit this started.
      - A unit must be installed (its unit file known to systemd), not masked, and stay active once
        started - a C(Type=oneshot) service without C(RemainAfterExit=yes) is inactive again when it has
        run, so it cannot be kept started; start its timer instead.
      - Names as in O(stop); a unit cannot be in both O(start) and O(stop).
    type: list
    elements: str
    default: []
  enable:
    description:
      - Units that must start at boot (C(systemctl enable), the links of their C([Install]) section);
        applied in O(mode=persist) and O(mode=both). Enabling does not start a unit; list it in O(start)
        too for that. Rollback disables each unit this enabled, which removes its links.
      - Names as in O(stop); a unit must be installed, and cannot be in both O(enable) and O(disable).
    type: list
    elements: str
    default: []
  daemon_reload:
    description:
      - Run C(systemctl daemon-reload) before reading and changing the units, so systemd knows unit files
        written or changed earlier in the play (by M(hpcnet.rdma.managed_files)). Not a change by itself
        (RV(daemon_reloaded) tells it ran).
      - Not run in check mode; a unit of O(start) or O(enable) that is not installed yet is then listed in
        RV(absent) and RV(notes) instead of failing, since its file may be one an earlier task would write.
    type: bool
    default: false
attributes:
  diff_mode:
    details: Shows each unit's C(active) and C(enabled) state before and after.
extends_documentation_fragment:
  - hpcnet.rdma.attributes
  - hpcnet.rdma.journal
  - hpcnet.rdma.run
  - hpcnet.rdma.mode
"""

EXAMPLES = r"""
- name: Keep the print spooler off the compute nodes, now and after reboots
  hpcnet.rdma.service_state:
    stop: [cups, cups-browsed]
    disable: [cups.service, cups-browsed.service]

- name: Image bake - only the boot state
  hpcnet.rdma.service_state:
    mode: persist
    disable: [packagekit.service]

- name: A timer whose unit files managed_files just wrote - enabled and started, rollback stops and disables it
  hpcnet.rdma.service_state:
    enable: [hpcnet-rdma-metrics.timer]
    start: [hpcnet-rdma-metrics.timer]
    daemon_reload: "{{ unit_files.changed }}"
    journal_run: "{{ run_id }}"

- name: A tuning profile's services section; units an earlier profile stopped go back to their originals
  hpcnet.rdma.service_state:
    stop: "{{ profile.services.stop }}"
    disable: "{{ profile.services.disable }}"
    release_scope: tuning.services
  vars:
    profile: "{{ rdma_profile | hpcnet.rdma.resolve_profile(__rdma_builtin_profiles, rdma_profiles | default({})) }}"
"""

RETURN = r"""
changes:
  description: Every change planned (check mode) or made, in order. Keys are C(service:UNIT).
  returned: always
  type: list
  elements: dict
  sample: [{"key": "service:cups.service", "before": {"active": true, "enabled": "enabled"},
            "after": {"active": false, "enabled": "disabled"}}]
previous:
  description: State of every managed unit before this call; C(null) for a unit that is not installed.
  returned: always
  type: dict
  sample: {"service:cups.service": {"active": true, "enabled": "enabled"}}
current:
  description: State of every managed unit after this call, read back from the node (predicted in check mode).
  returned: always
  type: dict
  sample: {"service:cups.service": {"active": false, "enabled": "disabled"}}
units:
  description: The unit names this call manages, normalised (C(.service) added), per list, in the order given.
  returned: always
  type: dict
  sample: {"stop": ["cups.service"], "disable": ["cups.service"], "start": [], "enable": []}
absent:
  description:
    - Units of O(stop) and O(disable) that are not there to stop or disable, with the reason; not a change
      and not a failure.
    - In check mode with O(daemon_reload), also units of O(start) and O(enable) that are not installed yet.
  returned: always
  type: list
  elements: dict
  sample: [{"unit": "cups.service", "reason": "not installed"}]
notes:
  description: Units left as they are although asked for, with the reason (a static unit cannot be disabled).
  returned: always
  type: list
  elements: str
  sample: ["disable: systemd-udevd.service is static (no [Install] section): systemctl disable cannot keep it from starting"]
daemon_reloaded:
  description: Whether this call ran C(systemctl daemon-reload) (O(daemon_reload), not in check mode, systemd running).
  returned: always
  type: bool
  sample: true
generation:
  description: Journal generation recorded by this call.
  returned: when changed and not in check mode
  type: int
  sample: 3
"""

import re

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpcnet.rdma.plugins.module_utils import _service, _spec
from ansible_collections.hpcnet.rdma.plugins.module_utils._engine import Engine
from ansible_collections.hpcnet.rdma.plugins.module_utils._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils._plan import Plan

# systemd.unit(5): the unit types, and the characters a unit name may hold
UNIT_TYPES = ("service", "socket", "device", "mount", "automount", "swap", "target", "path", "timer", "slice", "scope")
UNIT_RE = re.compile(r"^[A-Za-z0-9:_.\\-]+(@[A-Za-z0-9:_.\\-]+)?\.(%s)$" % "|".join(UNIT_TYPES))
NAME_MAX = 255
# stopping these ends the SSH connection this task and any rollback run over
CONNECTION_UNITS = ("ssh.service", "sshd.service")
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
), _spec.MODE, _spec.JOURNAL_DIR, _spec.RUN)


def unit_name(field: str, name: str) -> str:
    """``name`` as a full unit name (``.service`` added when it has no type suffix); ValueError names
    the field, the value and what is allowed."""
    full = name.strip() if isinstance(name, str) else name
    if isinstance(full, str) and full and not full.endswith(tuple("." + t for t in UNIT_TYPES)):
        full += ".service"
    if not isinstance(full, str) or len(full) > NAME_MAX or not UNIT_RE.match(full):
        raise ValueError("%s: %r is not a systemd unit name; allowed: NAME, NAME.TYPE or NAME@INSTANCE.TYPE of "
                         "letters, digits, ':', '_', '.', '-' and backslash escapes, TYPE one of %s (.service "
                         "when none is given)" % (field, name, ", ".join(UNIT_TYPES)))
    return full


def normalize(params: dict) -> dict:
    """The unit lists of ``params``, validated, suffixed and without repeats, in the order given;
    ValueError for a unit in two opposite lists or a connection unit in ``stop``."""
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


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.exit_json(**run(module, Host.from_module(module)))


if __name__ == "__main__":
    main()
