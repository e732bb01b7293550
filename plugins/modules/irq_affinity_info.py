#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: irq_affinity_info
short_description: Read NIC queue IRQs, their affinity and how interrupts spread over CPUs
version_added: 0.1.0
author:
  - hpcnet.rdma contributors (@hpcnet)
description:
  - For each interface with MSI/MSI-X vectors, lists its queue IRQs with number, name, configured
    and effective affinity, the driver's hint and per-CPU counts from C(/proc/interrupts), plus the
    NIC's NUMA node and local CPUs, and irqbalance's state. Changes nothing.
requirements:
  - Linux with sysfs and C(/proc/interrupts) on the node; iproute2 (C(ip)) to select interfaces.
options:
  interfaces:
    description: Interface names; all interfaces with MSI/MSI-X queue IRQs when empty.
    type: list
    elements: str
    default: []
extends_documentation_fragment:
  - hpcnet.rdma.attributes.info
"""

EXAMPLES = r"""
- name: Where do the data NIC's interrupts land?
  hpcnet.rdma.irq_affinity_info:
    interfaces: [data0]
  register: irq_info
"""

RETURN = r"""
interfaces:
  description: Per interface, NUMA node, local CPUs, queue IRQs and the sum of their interrupts per CPU.
  returned: always
  type: dict
  sample: {"data0": {"numa_node": -1, "local_cpus": "0-1", "per_cpu": [120, 95],
                     "irqs": [{"irq": 38, "name": "virtio2-input.0", "affinity": "1", "effective": "1",
                               "hint": "3", "counts": [0, 17515]}]}}
irqbalance:
  description: Whether irqbalance is installed, its service state, and whether it is told to skip our IRQs.
  returned: always
  type: dict
  sample: {"installed": true, "service": {"active": true, "enabled": "enabled"}, "policyscript": true}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _iproute
from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _domain as _irq
from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _plan as _irqplan
from ansible_collections.hpcnet.rdma.plugins.module_utils.services import _domain as _service
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host

ARGUMENT_SPEC = dict(interfaces=dict(type="list", elements="str", default=[]))


def run(module, host: Host) -> dict:
    interrupts = _irq.parse_interrupts(host.read(_irq.INTERRUPTS) or "")
    names = module.params["interfaces"] or _iproute.interfaces(host)
    out = {}
    for ifname in names:
        try:
            nic = _irq.nic_irqs(host, ifname, interrupts)
        except ValueError as e:
            if module.params["interfaces"]:
                module.fail_json(msg=str(e))
            continue
        irqs = []
        per_cpu = [0] * max([len(interrupts[i["irq"]]["counts"]) for i in nic["irqs"]] + [0])
        for i in nic["irqs"]:
            counts = interrupts[i["irq"]]["counts"]
            per_cpu = [a + b for a, b in zip(per_cpu, counts)]
            irqs.append({"irq": i["irq"], "name": i["name"], "counts": counts,
                         "affinity": (host.read("/proc/irq/%d/smp_affinity_list" % i["irq"]) or "").strip(),
                         "effective": (host.read("/proc/irq/%d/effective_affinity_list" % i["irq"]) or "").strip(),
                         "hint": (host.read("/proc/irq/%d/affinity_hint" % i["irq"]) or "").strip()})
        out[ifname] = {"numa_node": nic["numa_node"], "local_cpus": _irq.format_cpulist(nic["local_cpus"]),
                       "irqs": irqs, "per_cpu": per_cpu}
    installed = _irqplan.irqbalance_installed(host)
    defaults = host.read(_irqplan.read_env_file(host)) or ""
    return {"changed": False, "interfaces": out,
            "irqbalance": {"installed": installed,
                           "service": _service.read_value(host, _irqplan.IRQBALANCE_UNIT) if installed else None,
                           "policyscript": _irqplan.POLICY_SCRIPT in defaults}}


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.exit_json(**run(module, Host.from_module(module)))


if __name__ == "__main__":
    main()
