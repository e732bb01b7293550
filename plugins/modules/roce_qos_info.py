#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: roce_qos_info
short_description: Read RoCE QoS (PFC, trust, DSCP map, ECN, RDMA CM ToS/mode) and report what is incoherent
version_added: 0.1.0
author:
  - hpcnet.rdma contributors (@hpcnet)
description:
  - Reads, for the selected interfaces, what M(hpcnet.rdma.roce_qos) manages - through the same backends
    (C(dcb -j), C(mlnx_qos)) and sysfs/configfs files - and changes nothing.
  - RV(findings) lists what would make RoCE lossy or slow in the current state - the same coherence checks
    M(hpcnet.rdma.roce_qos) runs before it applies anything, evaluated on the values in place.
requirements:
  - iproute2's C(dcb) or NVIDIA C(mlnx_qos) on the node (whichever the backend is).
  - rdma-core (C(ibv_devinfo)) and iproute2's C(rdma) to find the RDMA devices.
options:
  interfaces:
    description:
      - Selections like in M(hpcnet.rdma.roce_qos), each with exactly one of O(interfaces[].name),
        O(interfaces[].glob), O(interfaces[].driver) or O(interfaces[].subnet). Default is every
        non-loopback interface.
    default: [{glob: "*"}]
  tos:
    description:
      - ToS to check the PFC and CNP coherence with. Default is the ToS the RDMA CM uses on the interface's
        RDMA device, or 106 when it has none set.
    type: int
  roce_mode:
    description: RoCE mode whose GID index is reported in RV(rdma_ports).
    type: str
    choices: [v1, v2]
    default: v2
  backend:
    description: As in M(hpcnet.rdma.roce_qos).
    type: str
    choices: [auto, dcb, mlnx_qos]
    default: auto
extends_documentation_fragment:
  - hpcnet.rdma.attributes.info
  - hpcnet.rdma.interfaces
"""

EXAMPLES = r"""
- name: What QoS do the RoCE ports have?
  hpcnet.rdma.roce_qos_info:
    interfaces:
      - driver: mlx5_core
  register: qos

- name: Fail when the fabric QoS is incoherent
  ansible.builtin.assert:
    that: qos.findings | length == 0
    fail_msg: "{{ qos.findings | join('; ') }}"
"""

RETURN = r"""
interfaces:
  description: Per interface - driver, backend, DCB support (and why not), trust, PFC priorities, DSCP map, ECN state.
  returned: always
  type: dict
  sample: {"ens1f0np0": {"driver": "mlx5_core", "backend": "dcb", "dcb": true, "trust": "dscp",
           "trust_control": "implicit", "pfc": [3], "dscp_map": {"26": 3}, "ecn": null}}
rdma_ports:
  description: RDMA ports on the selected interfaces with link layer, state, active MTU, GID index and RDMA CM ToS/mode.
  returned: always
  type: list
  elements: dict
  sample: [{"device": "rxe0", "port": 1, "netdev": "data0", "active_mtu": 1024, "tos": 106, "mode": "RoCE v2"}]
findings:
  description: Incoherences in the current state, each naming the setting, its value and what is allowed.
  returned: always
  type: list
  elements: str
  sample: ["tos: 106 (DSCP 26) lands in priority 0 on data0 ..., but PFC is on only for no priority"]
unsupported:
  description: Interfaces without DCB, with the tool's answer.
  returned: always
  type: list
  elements: dict
  sample: [{"interface": "data0", "feature": "dcb", "reason": "Operation not supported"}]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpcnet.rdma.plugins.module_utils import _qosinfo, _spec
from ansible_collections.hpcnet.rdma.plugins.module_utils._host import Host, HostError

ARGUMENT_SPEC = dict(
    interfaces=dict(type="list", elements="dict", default=[{"glob": "*"}], options=_spec.argument_spec(_spec.SELECTOR)),
    tos=dict(type="int"),
    roce_mode=dict(type="str", choices=["v1", "v2"], default="v2"),
    backend=dict(type="str", choices=["auto", "dcb", "mlnx_qos"], default="auto"),
)


def run(module, host: Host) -> dict:
    params = module.params
    try:
        out = _qosinfo.read(host, params["interfaces"], params["tos"], params["roce_mode"], params["backend"])
    except (HostError, ValueError) as e:
        module.fail_json(msg=str(e))
    return dict(changed=False, **out)


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.exit_json(**run(module, Host.from_module(module)))


if __name__ == "__main__":
    main()
