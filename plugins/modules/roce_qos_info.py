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
  description:
    - Per selected interface (keyed by its name) - driver, backend, DCB support (and why not), trust, PFC priorities,
      DSCP map, ECN state, ETS and receive buffers.
    - An interface without DCB, or whose C(dcb)/C(mlnx_qos) output cannot be read, has only C(driver), C(backend),
      C(dcb=false) and C(reason); it is also listed in RV(unsupported).
  returned: always
  type: dict
  sample: {"ens1f0np0": {"driver": "mlx5_core", "backend": "dcb", "dcb": true, "reason": null, "trust": "dscp",
           "trust_control": "implicit", "pfc": [3], "dscp_map": {"26": 3}, "ecn": null, "priority": 3,
           "cnp": {"dscp": 48, "priority": 6},
           "ets": {"willing": false, "ets_cap": 8, "cbs": false, "prio_tc": [0, 1, 2, 3, 4, 5, 6, 7],
                   "tc_tsa": ["ets", "ets", "ets", "ets", "ets", "ets", "ets", "ets"],
                   "tc_bw": [13, 12, 12, 13, 12, 13, 12, 13], "pg_bw": null, "reco_prio_tc": null,
                   "reco_tc_tsa": null, "reco_tc_bw": null},
           "buffer": {"prio_buffer": [0, 0, 0, 1, 0, 0, 0, 0], "buffer_size": [130944, 130944, 0, 0, 0, 0, 0, 0],
                      "total_size": 1027008}},
           "data0": {"driver": "virtio_net", "backend": "dcb", "dcb": false, "reason": "Operation not supported"}}
  contains:
    driver:
      description: Kernel driver of the interface, null for a virtual device.
      type: str
      sample: mlx5_core
    backend:
      description: Tool the DCB state was read with - C(dcb) or C(mlnx_qos).
      type: str
      sample: dcb
    dcb:
      description: Whether the DCB state could be read. False when the driver has no DCB or the tool's output cannot be read.
      type: bool
      sample: true
    reason:
      description:
        - Why C(dcb) is false - the tool's answer (C(Operation not supported)), or C(unreadable) followed by the
          parse error, naming the tool and the line, when its output cannot be read. Null when C(dcb) is true.
      type: str
      sample: "unreadable: mlnx_qos: no 'PFC configuration' with an 'enabled' row in output"
    trust:
      description: What the NIC classifies by - C(pcp), C(dscp), or the C(dcb apptrust) order joined by spaces.
      type: str
      returned: when C(dcb) is true
      sample: dscp
    trust_control:
      description: Where the trust comes from - C(mlnx_qos), C(apptrust) (iproute2 6.3+) or C(implicit) (DSCP APP entries present).
      type: str
      returned: when C(dcb) is true
      sample: implicit
    pfc:
      description: Priorities with PFC on.
      type: list
      elements: int
      returned: when C(dcb) is true
      sample: [3]
    dscp_map:
      description: DSCP (as a string key) to priority.
      type: dict
      returned: when C(dcb) is true
      sample: {"26": 3}
    ecn:
      description:
        - DCQCN state from sysfs (C(roce_np)/C(roce_rp) enable per priority, C(cnp_dscp), C(cnp_802p_prio)).
        - Null when the driver has no C(ecn) directory in sysfs.
      type: dict
      returned: when C(dcb) is true
      sample: {"roce_np": {"3": 1}, "roce_rp": {"3": 1}, "cnp_dscp": 48, "cnp_802p_prio": 6}
    priority:
      description: Priority the checked ToS lands in.
      type: int
      returned: when C(dcb) is true and the state is coherent (no finding names the interface)
      sample: 3
    cnp:
      description: DSCP and priority of the congestion notification packets.
      type: dict
      returned: when C(dcb) is true and the state is coherent
      sample: {"dscp": 48, "priority": 6}
    ets:
      description:
        - ETS as C(dcb ets show) reads it, or as the C(mlnx_qos) report prints it (then only C(prio_tc), C(tc_tsa) and C(tc_bw)).
          Every list has 8 entries, indexed by priority (C(prio_tc)) or traffic class; null where the tool printed nothing.
        - C({readable, reason}) instead when C(dcb ets) failed or its output cannot be read (the rest of the interface is still read).
      type: dict
      version_added: 0.2.0
      returned: when C(dcb) is true
      sample: {"prio_tc": [0, 0, 0, 3, 0, 0, 0, 0], "tc_tsa": ["ets", "strict", "strict", "ets", "strict", "strict", "strict", "strict"],
               "tc_bw": [50, null, null, 50, null, null, null, null]}
      contains:
        prio_tc:
          description: Traffic class of each priority 0..7.
          type: list
          elements: int
        tc_tsa:
          description:
            - Transmission selection algorithm of each TC - C(strict), C(ets), C(cbs), C(vendor),
              or as printed (C(???) for one C(dcb) does not know).
          type: list
          elements: str
        tc_bw:
          description: ETS bandwidth share of each TC in percent (null for a TC whose TSA has none, e.g. C(strict) in an C(mlnx_qos) report).
          type: list
          elements: int
        willing:
          description: DCBX willing bit (C(dcb) backend only; null when not printed).
          type: bool
        ets_cap:
          description: Number of TCs that support ETS (C(dcb) backend only).
          type: int
        cbs:
          description: Whether credit-based shaping is supported (C(dcb) backend only).
          type: bool
        pg_bw:
          description: Priority-group bandwidth of the CEE interface, per group (C(dcb) backend only).
          type: list
          elements: int
        reco_prio_tc:
          description: Recommended priority to TC, from the peer (C(dcb) backend only).
          type: list
          elements: int
        reco_tc_tsa:
          description: Recommended TSA per TC (C(dcb) backend only).
          type: list
          elements: str
        reco_tc_bw:
          description: Recommended bandwidth share per TC (C(dcb) backend only).
          type: list
          elements: int
        readable:
          description: Present, and false, only when the ETS output could not be read; the other keys are then absent.
          type: bool
          sample: false
        reason:
          description: The tool's answer, or C(unreadable) followed by the parse error; present with C(readable) only.
          type: str
          sample: "unreadable: dcb ets show: no prio-tc, tc-tsa or tc-bw in output"
    buffer:
      description:
        - Receive buffers as C(dcb buffer show) reads them, or as the C(mlnx_qos) report prints them; null when the
          C(mlnx_qos) report prints no buffer line (MLNX_OFED 4.x).
        - C({readable, reason}) instead when C(dcb buffer) failed or its output cannot be read.
      type: dict
      version_added: 0.2.0
      returned: when C(dcb) is true
      sample: {"prio_buffer": [0, 0, 0, 1, 0, 0, 0, 0], "buffer_size": [130944, 130944, 0, 0, 0, 0, 0, 0], "total_size": 1027008}
      contains:
        prio_buffer:
          description: Receive buffer of each priority 0..7 (null when not printed).
          type: list
          elements: int
        buffer_size:
          description:
            - Size of each of the 8 receive buffers in bytes (null when not printed).
            - The C(dcb) text form prints rounded sizes (C(10Kb)), so these are exact only to that rounding.
          type: list
          elements: int
        total_size:
          description: Total receive buffer size in bytes (C(total_size) or, since MLNX_OFED 23.10, C(max_buffer_size)); null when not printed.
          type: int
        readable:
          description: Present, and false, only when the buffer output could not be read; the other keys are then absent.
          type: bool
          sample: false
        reason:
          description: The tool's answer, or C(unreadable) followed by the parse error; present with C(readable) only.
          type: str
          sample: "Operation not supported"
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

from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _info as _qosinfo
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _spec
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host

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
