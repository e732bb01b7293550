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
  - C(systemd-networkd.service), C(networking.service) and C(NetworkManager.service) carry the node's
    network; they are refused in O(stop) and O(disable) unless O(allow_network_stop=true).
  - A unit name starting with C(-) is refused (C(systemctl) would read it as an option), and every
    C(systemctl) call passes C(--) before the unit name.
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
    version_added: 0.2.0
    elements: str
    default: []
  enable:
    description:
      - Units that must start at boot (C(systemctl enable), the links of their C([Install]) section);
        applied in O(mode=persist) and O(mode=both). Enabling does not start a unit; list it in O(start)
        too for that. Rollback disables each unit this enabled, which removes its links.
      - Names as in O(stop); a unit must be installed, and cannot be in both O(enable) and O(disable).
    type: list
    version_added: 0.2.0
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
    version_added: 0.2.0
    default: false
  allow_network_stop:
    description:
      - Allow C(systemd-networkd.service), C(networking.service) and C(NetworkManager.service) in O(stop)
        and O(disable). Stopping or disabling the service that brings up the node's network cuts the node
        off (now, or at the next boot) - and with it the Ansible connection and any rollback run over it -
        unless the node is reached another way (a console, a BMC, a connection over another network).
      - C(ssh.service) and C(sshd.service) stay refused in O(stop) either way.
    type: bool
    version_added: 0.2.0
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
  version_added: 0.2.0
  sample: true
generation:
  description: Journal generation recorded by this call.
  returned: when changed and not in check mode
  type: int
  sample: 3
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpcnet.rdma.plugins.module_utils.services._module import ARGUMENT_SPEC, run
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.exit_json(**run(module, Host.from_module(module)))


if __name__ == "__main__":
    main()
