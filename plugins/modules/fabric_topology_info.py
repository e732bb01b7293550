#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: fabric_topology_info
short_description: The node's link neighbours from LLDP and the InfiniBand fabric from ibnetdiscover
version_added: 0.3.0
author:
  - hpcnet.rdma contributors (@hpcnet)
description:
  - Per local interface, the LLDP neighbours C(lldpd) has heard (C(lldpcli -f json show neighbors details))
    - chassis name and id, port id and description, capabilities (bridge, router), management addresses, TTL.
  - For InfiniBand, when the node has an InfiniBand port and C(ibnetdiscover) is installed (or O(ibnetdiscover_file)
    names its saved output), every switch with its GUID, name and cabled ports, and every HCA (CA) attached.
  - The node's own InfiniBand devices and node GUIDs and its host name, so the controller can find the node
    among the CAs of the fabric (filter P(hpcnet.rdma.fabric_topology_graph#filter)).
  - A tool that is not installed or fails is reported, not fatal; RV(findings) says so in words.
  - Changes nothing.
requirements:
  - C(lldpd) running on the node for the LLDP part (C(lldpcli) talks to it).
  - C(ibnetdiscover) (infiniband-diags) and access to the umad device for the InfiniBand part.
options:
  lldp:
    description: Read the LLDP neighbours when C(lldpcli) is installed.
    type: bool
    default: true
  interfaces:
    description:
      - Report the LLDP neighbours of these local interfaces only (shell-style patterns such as C(ens*)).
      - C([]) reports every interface lldpd has a neighbour on.
    type: list
    elements: str
    default: []
  infiniband:
    description: Read the InfiniBand fabric (C(ibnetdiscover)) when the node has an InfiniBand port, or O(ibnetdiscover_file).
    type: bool
    default: true
  ibnetdiscover_file:
    description:
      - Path on the node of a saved C(ibnetdiscover) or C(ibnetdiscover -p) output to parse instead of running the tool.
      - It must exist; the task fails naming it otherwise.
    type: path
extends_documentation_fragment:
  - hpcnet.rdma.attributes.info
notes:
  - Running C(ibnetdiscover) sends subnet management queries over the fabric; on a large fabric run it on one node
    and hand the others its output through O(ibnetdiscover_file), or give the controller one node's result.
  - docs/topology.md of the collection describes what the controller builds from these results.
"""

EXAMPLES = r"""
- name: Link neighbours of every node
  hpcnet.rdma.fabric_topology_info:
  register: topo

- name: Only the data interfaces, no InfiniBand
  hpcnet.rdma.fabric_topology_info:
    interfaces: ["ens1f*"]
    infiniband: false

- name: The fabric as saved on the subnet manager's node
  hpcnet.rdma.fabric_topology_info:
    lldp: false
    ibnetdiscover_file: /var/lib/hpcnet-rdma/ibnetdiscover.txt
  when: inventory_hostname == groups['sm'][0]
"""

RETURN = r"""
hostname:
  description: The node's host name (C(/proc/sys/kernel/hostname)).
  returned: always
  type: str
  sample: n1
lldp:
  description:
    - C(installed) whether C(lldpcli) is there, C(error) why its output could not be read (null when it could),
      C(interfaces) the neighbours per local interface.
    - Null when O(lldp=false).
  returned: always
  type: dict
  sample: {"installed": true, "error": null, "interfaces": {"ens1f0": [
    {"chassis_name": "leaf1", "chassis_id": "c0:11:a6:00:00:01", "chassis_id_type": "mac", "chassis_descr": "Debian GNU/Linux 12",
     "port_id": "swp1", "port_id_type": "ifname", "port_descr": "n1", "capabilities": {"bridge": true, "router": false},
     "bridge": true, "router": false, "mgmt_ip": ["192.0.2.11"], "ttl": 120, "via": "LLDP"}]}}
infiniband:
  description:
    - C(source) C(ibnetdiscover), the file read, or null when not read; C(error) why not (null when read);
      C(local) the node's InfiniBand devices with their node GUID and InfiniBand ports.
    - C(switches), C(cas) and C(routers) by node GUID (16 hex digits), each with its C(name) (NodeDescription),
      C(lid) and C(ports) - per port number the peer's C(type), C(guid), C(port), C(name), C(lid) and C(link) (C(4xEDR)).
    - Null when O(infiniband=false).
  returned: always
  type: dict
  sample: {"source": "ibnetdiscover", "error": null, "local": {"mlx5_0": {"node_guid": "506b4b03003fa9b6", "ports": ["1"]}},
           "switches": {"ec0d9a0300ec8240": {"guid": "ec0d9a0300ec8240", "name": "SwitchIB Mellanox Technologies", "lid": 48,
                                             "ports": {"1": {"type": "ca", "guid": "506b4b03003fa9b6", "port": 1,
                                                             "name": "node018 HCA-1", "lid": 67, "link": "4xEDR"}}}},
           "cas": {}, "routers": {}}
findings:
  description: What could not be read, one sentence each (a missing tool, an unreadable output, no neighbour).
  returned: always
  type: list
  elements: str
  sample: ["lldpcli is not installed (package lldpd): no LLDP neighbours read"]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import ParseError
from ansible_collections.hpcnet.rdma.plugins.module_utils.topology import _info

ARGUMENT_SPEC = dict(
    lldp=dict(type="bool", default=True),
    interfaces=dict(type="list", elements="str", default=[]),
    infiniband=dict(type="bool", default=True),
    ibnetdiscover_file=dict(type="path"),
)


def run(module, host: Host) -> dict:
    try:
        facts = _info.gather(host, module.params)
    except (ValueError, HostError, ParseError) as e:
        module.fail_json(msg=str(e))
    return dict(changed=False, **facts)


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.exit_json(**run(module, Host.from_module(module)))


if __name__ == "__main__":
    main()
