#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: service_state
short_description: Stop systemd units now and keep them from starting at boot, journaled for rollback
version_added: 0.1.0
author:
  - hpcnet.rdma contributors (@hpcnet)
description:
  - Stops the units of O(stop) (made inactive now) and disables the units of O(disable) (not started
    at boot), all in one call; a tuning profile's C(services) section is applied with it.
  - Each unit's state before the change (running or not, enabled or not) is recorded in the journal
    under C(service:UNIT); M(hpcnet.rdma.tuning_state) rolls back by starting and re-enabling
    exactly what this module stopped or disabled.
  - A unit given in neither list is not touched.  A unit that is not installed, or a node that does
    not run systemd (a container, an image build in a chroot), is not a change and not a failure; it
    is listed in RV(absent) with the reason.
  - A unit whose boot state is not plain C(enabled) (C(static), C(indirect), C(generated),
    C(enabled-runtime), ...) cannot be disabled by C(systemctl disable); it is left as it is and named
    in RV(notes). C(disabled) and C(masked) units already do not start at boot.
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
  sample: {"stop": ["cups.service"], "disable": ["cups.service"]}
absent:
  description: Units that are not there to stop or disable, with the reason; not a change and not a failure.
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
# boot states in which the unit already does not start at boot
NOT_AT_BOOT = ("disabled", "masked", "masked-runtime")

ARGUMENT_SPEC = _spec.argument_spec(dict(
    stop=dict(type="list", elements="str", default=[]),
    disable=dict(type="list", elements="str", default=[]),
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
    """The unit lists of ``params``, validated, suffixed and without repeats, in the order given."""
    units = {}
    for field in ("stop", "disable"):
        names = []
        for name in params[field] or []:
            full = unit_name(field, name)
            if full not in names:
                names.append(full)
        units[field] = names
    refused = [u for u in units["stop"] if u in CONNECTION_UNITS]
    if refused:
        raise ValueError("stop: %s carries this connection (and the rollback's); allowed: units other than %s"
                         % (", ".join(refused), ", ".join(CONNECTION_UNITS)))
    return units


def applied(units: dict, mode: str) -> tuple:
    """The units ``mode`` acts on: (stop, disable)."""
    return (units["stop"] if mode in ("runtime", "both") else [],
            units["disable"] if mode in ("persist", "both") else [])


def plan(units: dict, states: dict, mode: str, systemd: bool) -> dict:
    """Pure: the plan from the normalised ``units`` and every unit's observed state (``states``:
    unit -> ``{active, enabled}`` or None)."""
    stop, disable = applied(units, mode)
    p = Plan()
    previous, absent, notes = {}, [], []
    for unit in stop + [u for u in disable if u not in stop]:
        state = states.get(unit)
        previous["service:" + unit] = state
        if state is None:
            absent.append({"unit": unit, "reason": "not installed" if systemd else
                           "systemd is not running on this node (a container or an image build)"})
            continue
        wanted = dict(state)
        if unit in stop:
            wanted["active"] = False
        if unit in disable:
            if state["enabled"] == "enabled":
                wanted["enabled"] = "disabled"
            elif state["enabled"] not in NOT_AT_BOOT:
                notes.append("disable: %s is %s%s: systemctl disable cannot keep it from starting" % (
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
    if not units["stop"] and not units["disable"] and not params.get("release_scope"):
        module.fail_json(msg="stop, disable: at least one unit is required (or release_scope, to return the units "
                             "earlier calls of that scope stopped or disabled to their original state)")
    engine = Engine(module, host, params["journal_dir"], domains=(_service.DOMAINS,))
    extra = {"units": units, "absent": [], "notes": []}

    def build():
        systemd = _service.systemd_running(host)
        stop, disable = applied(units, params["mode"])
        states = dict((u, _service.read_value(host, u) if systemd else None) for u in set(stop + disable))
        planned = plan(units, states, params["mode"], systemd)
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
