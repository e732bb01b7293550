#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: fabric_info
short_description: RDMA fabric facts per device, port and netdev, and the troubleshooting checklist as data
version_added: 0.1.0
author:
  - hpcnet.rdma contributors (@hpcnet)
description:
  - Per RDMA device and port, from C(/sys/class/infiniband) - driver, firmware, node GUID, NUMA
    node, port state and physical state, rate, link layer, LIDs, GIDs with their RoCE version
    (C(gid_attrs/types)) and netdev (C(gid_attrs/ndevs)), and the active MTU from C(ibv_devinfo -v).
  - Per netdev (those under an RDMA port plus O(interfaces)) - MTU, state, driver, NUMA node,
    rings and channels (C(ethtool -g/-l)), error/drop/discard/pause counters (C(ethtool -S) and
    sysfs statistics) and how its queue interrupts spread over CPUs.
  - Per host - softnet backlog drops and time squeezes (C(/proc/net/softnet_stat)), TCP
    retransmits (C(/proc/net/snmp)), loaded RDMA modules and the RDMA netns mode.
  - The classic checklist commands C(ibv_devinfo -v), C(rdma -j link), C(ibstat) and
    C(nvidia-smi topo -m) are run once each when installed and returned parsed in RV(tools).
  - RV(findings) states, in words, what the checklist would flag (a port not ACTIVE, non-zero drop
    or pause counters, softnet drops, retransmits, interrupts piling onto one CPU).
  - Changes nothing.
requirements:
  - Linux with sysfs (C(/sys/class/infiniband), C(/sys/class/net)) and procfs on the node.
  - C(ethtool) and iproute2 (C(ip)) for the netdev part.
  - Optional, used once each when installed - rdma-core's C(ibv_devinfo) (ibverbs-utils), iproute2's C(rdma),
    C(ibstat) (infiniband-diags), C(nvidia-smi).
options:
  interfaces:
    description: Extra netdevs to report (besides those under an RDMA port).
    type: list
    elements: str
    default: []
  tools:
    description: Which checklist tools to run when installed; C([]) reads only /sys and /proc.
    type: list
    elements: str
    choices: [ibv_devinfo, rdma, ibstat, nvidia-smi]
    default: [ibv_devinfo, rdma, ibstat, nvidia-smi]
  ethtool:
    description: Read rings, channels and C(ethtool -S) counters of every reported netdev.
    type: bool
    default: true
extends_documentation_fragment:
  - hpcnet.rdma.attributes.info
"""

EXAMPLES = r"""
- name: RDMA fabric facts of every node
  hpcnet.rdma.fabric_info:
  register: fabric

- name: Every port must be ACTIVE
  ansible.builtin.assert:
    that: fabric.devices[item].ports['1'].state == 'ACTIVE'
  loop: "{{ fabric.devices | list }}"

- name: Only sysfs and procfs, no tools, also the management NIC
  hpcnet.rdma.fabric_info:
    interfaces: [eth0]
    tools: []
    ethtool: false
"""

RETURN = r"""
devices:
  description: Per RDMA device its driver, firmware, GUID, NUMA node and ports.
  returned: always
  type: dict
  sample: {"rxe0": {"driver": "rdma_rxe", "fw_ver": "0.0.0", "numa_node": null, "parent": "data0",
                    "ports": {"1": {"state": "ACTIVE", "phys_state": "LinkUp", "rate": "2.5 Gb/sec (1X SDR)",
                                    "rate_gbps": 2.5, "link_layer": "Ethernet", "netdevs": ["data0"],
                                    "roce_versions": ["RoCE v2"], "active_mtu": 4096,
                                    "gids": [{"index": 1, "gid": "0000:0000:0000:0000:0000:ffff:0a4d:0001",
                                              "type": "RoCE v2", "netdev": "data0"}]}}}}
netdevs:
  description: Per netdev its MTU, state, driver, rings, channels, trouble counters and IRQ spread.
  returned: always
  type: dict
  sample: {"data0": {"mtu": 9000, "operstate": "up", "driver": "virtio_net", "rings": null,
                     "channels": {"max": {"combined": 1}, "current": {"combined": 1}},
                     "counters": {"rx_dropped": 0}, "ethtool_counters": {"rx_drops": 0},
                     "irqs": {"count": 2, "per_cpu": [10, 5120], "local_cpus": "0-1"}}}
host:
  description: Softnet drops and squeezes per CPU and in total, TCP retransmits.
  returned: always
  type: dict
  sample: {"softnet": {"dropped": 0, "time_squeeze": 3, "per_cpu": []},
           "tcp": {"out_segs": 28322, "retrans_segs": 0, "retrans_ratio": 0.0}}
modules:
  description: Loaded RDMA kernel modules among the common ones.
  returned: always
  type: list
  elements: str
netns_mode:
  description: RDMA subsystem netns mode (C(shared), C(exclusive)), null when ib_core is not loaded.
  returned: always
  type: str
tools:
  description:
    - Parsed output of each checklist tool that was asked for; null when not installed, C({"error"}) when it
      failed or nothing of its output could be read, C({"skipped"}) when ib_core is not loaded (the RDMA tools
      open the RDMA netlink socket, which would make the kernel load ib_core, and facts change nothing).
    - C(rdma) reads C(rdma -j link) (key C(rdma)) and C(rdma -j dev) (key C(rdma_dev)).
    - A device, CA or link a tool printed but could not be read is a dict whose key C(unreadable) holds the reason, inside that
      tool's result; the others are kept, and each unreadable part is also a finding.
  returned: always
  type: dict
findings:
  description: What the troubleshooting checklist flags, one sentence each.
  returned: always
  type: list
  elements: str
  sample: ["mlx5_1 port 1 is DOWN (Disabled)", "ens1f0np0: non-zero error/drop/pause counters: rx_discards_phy=317"]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpcnet.rdma.plugins.module_utils.facts import _fabric
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import ParseError

ARGUMENT_SPEC = dict(
    interfaces=dict(type="list", elements="str", default=[]),
    tools=dict(type="list", elements="str", choices=list(_fabric.TOOLS), default=list(_fabric.TOOLS)),
    ethtool=dict(type="bool", default=True),
)


def run(module, host: Host) -> dict:
    params = module.params
    try:
        facts = _fabric.gather(host, params["interfaces"], params["tools"], params["ethtool"])
    except (ValueError, HostError, ParseError) as e:
        module.fail_json(msg=str(e))
    return dict(changed=False, **facts)


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.exit_json(**run(module, Host.from_module(module)))


if __name__ == "__main__":
    main()
