#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: irq_affinity
short_description: NUMA-aware NIC queue IRQ affinity that coexists with irqbalance and survives reboots
version_added: 0.1.0
author:
  - hpcnet.rdma contributors (@hpcnet)
description:
  - Finds each selected NIC's queue interrupts (its C(msi_irqs) in sysfs, named in
    C(/proc/interrupts) such as C(mlx5_comp3@pci:0000:3b:00.0), C(ice-eth0-TxRx-5),
    C(virtio1-input.0)), its NUMA node and C(local_cpulist), and pins them by policy.
  - Policies are C(spread-local) (one queue per CPU of the NIC's NUMA node, round-robin, skipping
    reserved CPUs), C(single) (all on one CPU, for latency profiles), C(explicit) (IRQ-name
    pattern to cpulist) and C(hint) (the driver's C(affinity_hint)).
  - Keeps irqbalance from moving the pinned IRQs back (O(irqbalance)); its original state and
    configuration are journaled so rollback restores them exactly.
  - IRQ numbers change across boots, so persistence is a boot-time applier (a oneshot systemd unit
    shipped by the collection) that re-applies the same policy by IRQ name; it is installed in both
    live and bake mode.
  - Verifies each written mask by reading it back and reports C(effective_affinity_list); IRQs the
    kernel refuses (managed IRQs on some drivers) are named in RV(refused), not failures.
requirements:
  - Linux with sysfs (C(msi_irqs), NUMA nodes) and C(/proc/irq) on the node.
  - systemd (C(systemctl)) for the boot-time applier unit and to restart irqbalance when it is used.
options:
  interfaces:
    description: Interfaces whose queue IRQs to pin, each with an optional policy overriding the module-level one.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: Interface name.
        type: str
        required: true
      policy:
        description: Policy for this interface; defaults to O(policy).
        type: str
        choices: [spread-local, single, explicit, hint]
      reserved_cpus:
        description: Cpulist this interface's IRQs must avoid; defaults to O(reserved_cpus).
        type: str
      cpu:
        description: The CPU for C(single); defaults to the first unreserved CPU local to the NIC.
        type: int
      explicit:
        description: For C(explicit), IRQ-name shell patterns mapped to cpulists, for example C(*-input.*) to C(2-3).
        type: dict
  policy:
    description: Default policy of every interface.
    type: str
    choices: [spread-local, single, explicit, hint]
    default: spread-local
  reserved_cpus:
    description: Kernel cpulist (C(0-3,8,10-11)) of CPUs no NIC IRQ may use (application cores).
    type: str
    default: ""
  irqbalance:
    description:
      - C(ban) makes irqbalance skip exactly the pinned IRQs (by name, through its C(--policyscript)
        in C(IRQBALANCE_ARGS) of the file its unit reads, C(/etc/default/irqbalance) on Debian and
        Ubuntu, C(/etc/sysconfig/irqbalance) on the RHEL family; chosen by the unit's
        C(EnvironmentFile=), else by which file exists, else by C(/etc/os-release)) and restarts it;
        C(stop) stops and disables it; C(leave) does nothing (irqbalance may then move the IRQs back).
      - Calls add up. The ban list and the boot-time policy keep the IRQs and interfaces of earlier
        calls; an interface given again takes this call's settings.
    type: str
    choices: [ban, stop, leave]
    default: ban
attributes:
  diff_mode:
    details: Shows each IRQ's cpulist before and after, and every file.
extends_documentation_fragment:
  - hpcnet.rdma.attributes
  - hpcnet.rdma.journal
  - hpcnet.rdma.run
  - hpcnet.rdma.mode
notes:
  - O(mode=runtime) writes the masks only; O(mode=persist) installs only the boot-time applier and does
    not inspect the interfaces.
"""

EXAMPLES = r"""
- name: Spread every ConnectX queue over its NUMA node, keeping CPUs 0-1 for the OS
  hpcnet.rdma.irq_affinity:
    interfaces:
      - name: ens1f0np0
    reserved_cpus: "0-1"

- name: Latency profile - all queues of the data NIC on CPU 3, irqbalance stopped
  hpcnet.rdma.irq_affinity:
    policy: single
    irqbalance: stop
    interfaces:
      - name: data0
        cpu: 3

- name: Explicit placement of virtio queues
  hpcnet.rdma.irq_affinity:
    interfaces:
      - name: data0
        policy: explicit
        explicit:
          "*-input.*": "1"
          "*-output.*": "0"
"""

RETURN = r"""
changes:
  description: Every change planned (check mode) or made. Keys are C(irq:NAME), C(file:PATH), C(service:UNIT).
  returned: always
  type: list
  elements: dict
  sample: [{"key": "irq:virtio2-input.0", "before": "0-1", "after": "1"}]
previous:
  description: Value of every managed key before this call.
  returned: always
  type: dict
current:
  description: Value of every managed key after this call, read back (predicted in check mode).
  returned: always
  type: dict
irqs:
  description:
    - Per interface (keyed by its name), its NUMA node, local CPUs, driver and how its IRQs were read,
      and for each queue IRQ its number, planned cpulist and (after a real run) the kernel's effective affinity.
  returned: when interfaces were inspected (not in mode=persist)
  type: dict
  sample: {"data0": {"numa_node": -1, "local_cpus": "0-1", "driver": "virtio_net", "driver_profile": "virtio_net",
                     "other_irqs": ["virtio2-config"],
                     "assignments": {"virtio2-input.0": {"irq": 38, "cpus": "1", "effective": "1"}}}}
  contains:
    numa_node:
      description: NUMA node of the NIC's PCI device, -1 when the platform reports none.
      type: int
      sample: 0
    local_cpus:
      description: CPUs local to the NIC (its C(local_cpulist)), or every online CPU when sysfs has none.
      type: str
      sample: "0-15"
    driver:
      description: Kernel driver bound to the interface's device; null when it has none (a virtual device).
      type: str
      version_added: 0.2.0
      sample: ena
    driver_profile:
      description:
        - Which row of the driver table read the IRQ names - the driver's own name, or C(generic) for a driver
          not in the table (read by the generic naming rules, never refused for lack of an entry).
        - See C(docs/hardware.md) for the table.
      type: str
      version_added: 0.2.0
      sample: generic
    other_irqs:
      description:
        - Names of the interface's MSI/MSI-X vectors not taken as queue IRQs, sorted - the known non-queue
          vectors (async, mailbox, management, config, flow director, link) and any name no rule recognises.
          Their affinity is left alone.
      type: list
      version_added: 0.2.0
      elements: str
      sample: ["ena-mgmnt@pci:0000:00:05.0"]
    assignments:
      description: Per queue IRQ name, its number, the cpulist planned for it and (after a real run) the kernel's effective affinity.
      type: dict
      sample: {"ens5-Tx-Rx-0": {"irq": 27, "cpus": "0", "effective": "0"}}
refused:
  description: IRQs whose new affinity the kernel refused (nothing changed for them), with the reason.
  returned: always
  type: list
  elements: dict
notes:
  description: What was not coordinated and why (e.g. irqbalance not installed).
  returned: always
  type: list
  elements: str
generation:
  description: Journal generation recorded by this call.
  returned: when changed and not in check mode
  type: int
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpcnet.rdma.plugins.module_utils.irq._module import ARGUMENT_SPEC, run
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.exit_json(**run(module, Host.from_module(module)))


if __name__ == "__main__":
    main()
