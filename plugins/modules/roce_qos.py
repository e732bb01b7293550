#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: roce_qos
short_description: Lossless RoCE - PFC, DSCP trust and map, RoCE ToS and mode, ECN and CNP - checked for coherence
version_added: 0.1.0
author:
  - hpcnet.rdma contributors (@hpcnet)
description:
  - Brings the NIC QoS of the selected interfaces and the RDMA CM defaults of their RDMA devices to
    one traffic class, in one call, and refuses combinations that cannot be lossless before anything
    changes.
  - "NIC side, per interface, through one of two backends: iproute2 C(dcb) (generic: C(dcb pfc), C(dcb app),
    C(dcb apptrust)) or NVIDIA's C(mlnx_qos). O(backend=auto) uses C(mlnx_qos) when it is installed and the
    driver is C(mlx5_core), else C(dcb). State is read from C(dcb -j) JSON and from the labels of the
    C(mlnx_qos -i IF) report, never from column positions."
  - "Trust: C(mlnx_qos --trust). With C(dcb), trust is set with C(dcb apptrust) where iproute2 (6.3 or later)
    and the driver support it. mlx5 and ice do not: they switch to DSCP trust when the first DSCP APP entry
    is added and back to PCP when the last is removed, so with C(dcb) on those drivers O(trust=dscp)
    needs a O(dscp_map) and O(trust=pcp) removes the DSCP entries."
  - "RDMA CM side, per RDMA port of the selected interfaces (found by C(/sys/class/infiniband/DEV/ports/N/gid_attrs/ndevs/0)):
    C(/sys/kernel/config/rdma_cm/DEV/ports/N/default_roce_tos) and C(default_roce_mode). The configfs group
    C(/sys/kernel/config/rdma_cm/DEV) is created when missing and removed again on rollback; because the
    kernel keeps the values after the group is removed, rollback first writes back the kernel defaults
    (ToS 0, RoCE v2)."
  - "ECN/DCQCN per priority and the CNP DSCP/priority where the driver exposes them
    (C(/sys/class/net/IF/ecn/roce_np|roce_rp/enable/PRIO), C(roce_np/cnp_dscp), C(roce_np/cnp_802p_prio);
    NVIDIA's MLNX_OFED mlx5_core does, the upstream driver does not)."
  - "Coherence, checked on the state the node ends with: under DSCP trust the RoCE ToS (DSCP = O(tos) >> 2)
    must land in a priority with PFC enabled; every PFC priority must be reached by some DSCP; trust must be
    dscp when a O(dscp_map) is given; the CNP priority (and the priority of the CNP DSCP) must differ from the
    data priority; the netdev MTU must be at least the RDMA path MTU (O(rdma_mtu), else the port's active MTU
    from C(ibv_devinfo)), and O(rdma_mtu) may not exceed the port's active MTU."
  - "A device without DCB (the tool answers Operation not supported, as virtio-net, e1000e and veth do) is
    reported in RV(unsupported) and none of its NIC settings change; that is not a failure unless
    O(on_unsupported=fail). What the input decides alone is still checked there first and refused
    as bad input (a O(tos) whose O(dscp_map) priority has no PFC, a CNP priority or DSCP on the
    data priority, O(ecn) without priorities under PCP trust). The RDMA CM defaults of an RDMA device on it (for example soft-RoCE C(rxe0) on
    virtio-net) are still set, since they belong to the RDMA device."
  - "Persistence (O(mode)): the kernel keeps none of these settings across a reboot (configfs, the dcbnl APP
    table, mlnx_qos state, ECN sysfs), so the module also installs a boot-time applier: the POSIX sh script
    C(/usr/local/lib/hpcnet-rdma/roce-qos.sh), rendered from the wanted value of every setting, and the oneshot
    unit C(hpcnet-rdma-qos.service) that runs it after udev settled and the soft-RoCE links exist, enabled
    through its C(multi-user.target.wants) link. At boot it waits up to 60 s for each NIC and RDMA device,
    then re-applies every setting with the same C(dcb), C(mlnx_qos) and sysfs/configfs writes; a failing
    setting is logged with its key and fails the unit, the others are still applied. A driver reload
    without a reboot is not covered: run the module again or restart the unit."
  - "Settings a NIC does not support (no DCB, no ECN sysfs, no rdma_cm configfs) are left out of the script;
    when nothing at all can be set on the node, no boot files are installed."
  - "Image bakes (O(mode=persist) in a chroot or container, the tuning role's C(rdma_mode=bake)): a C(name) or
    C(driver) selection that matches no interface there is not an error. Its part of the boot script is rendered
    from the input alone and finds the NICs at boot (C(name) waits for the interface, C(driver) for the first NIC
    of that driver), then decides each one's backend, DCB support, ECN sysfs and RDMA ports there, as this
    module would on that node; what a NIC does not support is logged (and fails the unit with
    O(on_unsupported=fail)). What the input alone makes incoherent is refused at bake time. C(glob) and
    C(subnet) need the interfaces and stay errors."
  - Every original is recorded in the journal; M(hpcnet.rdma.tuning_state) rolls them back and removes the
    boot files.
requirements:
  - iproute2's C(dcb) (backend C(dcb)) or NVIDIA C(mlnx_qos) (backend C(mlnx_qos), from MLNX_OFED or the
    mlnx-tools package) on the node.
  - The rdma_cm configfs (C(/sys/kernel/config/rdma_cm)) for the RoCE ToS and mode; rdma-core (C(ibv_devinfo))
    and iproute2's C(rdma) to find the RDMA devices.
  - systemd (C(systemctl)) for the boot-time unit of O(mode=persist) and O(mode=both).
options:
  interfaces:
    required: true
  trust:
    description:
      - Which header the NIC classifies received traffic by. C(dscp) for routed RoCE v2 fabrics.
    type: str
    choices: [dscp, pcp]
    default: dscp
  pfc:
    description:
      - Priorities (0..7) with Priority Flow Control enabled; every other priority gets PFC off.
        Omit to leave PFC as it is (the checks then use the current PFC).
    type: list
    elements: int
  dscp_map:
    description:
      - "DSCP (0..63) to priority (0..7) entries, for example C({26: 3, 48: 6}). DSCPs not listed are left as
        they are. Needs O(trust=dscp)."
    type: dict
    default: {}
  tos:
    description:
      - RoCE ToS byte the RDMA CM uses by default (0..255); DSCP is C(tos >> 2). The default 106 is DSCP 26
        with ECT(0), NVIDIA's RoCE guidance for priority 3.
    type: int
    default: 106
  roce_mode:
    description: RoCE version the RDMA CM uses by default (C(default_roce_mode)).
    type: str
    choices: [v1, v2]
    default: v2
  ecn:
    description:
      - Enable (or disable) ECN/DCQCN notification point (C(roce_np)) and reaction point (C(roce_rp)) per
        priority where the driver exposes it.
    type: dict
    suboptions:
      priorities:
        description: Priorities to set; default is the RoCE data priority derived from O(tos).
        type: list
        elements: int
      np:
        description: Notification point (the receiver sends CNPs) on for these priorities.
        type: bool
        default: true
      rp:
        description: Reaction point (the sender slows down on CNPs) on for these priorities.
        type: bool
        default: true
  cnp:
    description: DSCP and 802.1p priority of the congestion notification packets, where the driver exposes them.
    type: dict
    suboptions:
      dscp:
        description: DSCP of CNPs (C(roce_np/cnp_dscp)), 0..63; NVIDIA uses 48.
        type: int
      priority:
        description: 802.1p priority of CNPs (C(roce_np/cnp_802p_prio)), 0..7; NVIDIA uses 6. Must differ from the data priority.
        type: int
  rdma_mtu:
    description:
      - RDMA path MTU in bytes the applications will use. Checked against the netdev MTU and the port's
        active MTU. Default is the port's active MTU read with C(ibv_devinfo), when it is installed.
    type: int
    choices: [256, 512, 1024, 2048, 4096]
  backend:
    description: C(auto) picks C(mlnx_qos) for mlx5_core when it is installed, else C(dcb). An explicit
      C(dcb) or C(mlnx_qos) whose command is not on the node fails naming O(backend).
    type: str
    choices: [auto, dcb, mlnx_qos]
    default: auto
  on_unsupported:
    description:
      - What a device without DCB (or without ECN sysfs, or without rdma_cm configfs) means. C(warn) reports it in
        RV(unsupported) and changes nothing of it; C(fail) fails before anything changes.
    type: str
    choices: [warn, fail]
    default: warn
attributes:
  diff_mode:
    details: Shows every QoS and RDMA CM value before and after, and every boot file.
extends_documentation_fragment:
  - hpcnet.rdma.attributes
  - hpcnet.rdma.interfaces
  - hpcnet.rdma.journal
  - hpcnet.rdma.run
  - hpcnet.rdma.mode
notes:
  - All selected interfaces get the same QoS, because the fabric must agree on one traffic class.
  - The interfaces are inspected in every O(mode), since what the boot-time applier sets depends on the
    backend and on what each NIC supports.
  - Writes take effect at once; PFC and trust changes do not flap the link.
  - The boot-time applier re-applies the settings of the last run with O(mode=persist) or O(mode=both); a later
    O(mode=runtime) run leaves it as it is.
  - Use M(hpcnet.rdma.roce_qos_info) to read the state without changing it.
seealso:
  - module: hpcnet.rdma.roce_qos_info
  - module: hpcnet.rdma.tuning_state
  - module: hpcnet.rdma.managed_files
"""

EXAMPLES = r"""
- name: Lossless RoCE v2 on every ConnectX port - DSCP 26 on priority 3, CNPs on DSCP 48 / priority 6
  hpcnet.rdma.roce_qos:
    interfaces:
      - driver: mlx5_core
    trust: dscp
    pfc: [3]
    dscp_map: {26: 3, 48: 6}
    tos: 106
    roce_mode: v2
    ecn: {np: true, rp: true}
    cnp: {dscp: 48, priority: 6}
    rdma_mtu: 4096
  register: qos

- name: Same with iproute2 dcb forced, failing on any port without DCB
  hpcnet.rdma.roce_qos:
    interfaces:
      - subnet: 10.10.0.0/16
    backend: dcb
    pfc: [3]
    dscp_map: {26: 3}
    on_unsupported: fail

- name: Soft-RoCE lab (virtio-net has no DCB) - sets the RDMA CM ToS/mode, reports the NIC as unsupported
  hpcnet.rdma.roce_qos:
    interfaces:
      - name: data0
    pfc: [3]

- name: Live values only, no boot-time applier (for example while experimenting)
  hpcnet.rdma.roce_qos:
    interfaces:
      - driver: mlx5_core
    pfc: [3]
    dscp_map: {26: 3}
    mode: runtime

- name: Only (re)install the boot-time applier, changing no live value
  hpcnet.rdma.roce_qos:
    interfaces:
      - driver: mlx5_core
    pfc: [3]
    dscp_map: {26: 3}
    mode: persist
"""

RETURN = r"""
changes:
  description: >-
    Every change planned (check mode) or made, in order. Keys are C(dcb:IF:pfc), C(dcb:IF:dscp.N),
    C(dcb:IF:trust), C(mlnx_qos:IF:trust|pfc|dscp.N), C(ecn:IF:roce_np.P|roce_rp.P|cnp_dscp|cnp_802p_prio),
    C(rdmacm:DEV:PORT:tos|mode), C(dir:/sys/kernel/config/rdma_cm/DEV) and, for the boot-time applier,
    C(file:/usr/local/lib/hpcnet-rdma/roce-qos.sh), C(file:/etc/systemd/system/hpcnet-rdma-qos.service) and
    C(file:/etc/systemd/system/multi-user.target.wants/hpcnet-rdma-qos.service).
  returned: always
  type: list
  elements: dict
  sample: [{"key": "rdmacm:rxe0:1:tos", "before": 0, "after": 106}]
previous:
  description: Value of every managed key before this call (C(null) for an absent DSCP entry or configfs group).
  returned: always
  type: dict
  sample: {"dcb:ens1f0np0:pfc": [], "rdmacm:mlx5_0:1:tos": 0}
current:
  description: Value of every managed key after this call, read back from the node (predicted in check mode).
  returned: always
  type: dict
  sample: {"dcb:ens1f0np0:pfc": [3], "rdmacm:mlx5_0:1:tos": 106}
interfaces:
  description: >-
    Per selected interface - driver, backend, whether it has DCB, and the state it ends with (trust,
    PFC priorities, the DSCP map, the RoCE data priority, the CNP DSCP/priority).
  returned: always
  type: dict
  sample: {"ens1f0np0": {"driver": "mlx5_core", "backend": "mlnx_qos", "dcb": true, "trust": "dscp",
           "trust_control": "mlnx_qos", "pfc": [3], "priority": 3, "cnp": {"dscp": 48, "priority": 6},
           "selected_by": ["driver=mlx5_core"]}}
unsupported:
  description: What could not be set here, each with the interface, the feature (C(dcb), C(ecn), C(rdma_cm)) and why.
  returned: always
  type: list
  elements: dict
  sample: [{"interface": "data0", "feature": "dcb",
            "reason": "dcb -j pfc show dev data0: Attribute read: Operation not supported"}]
rdma_ports:
  description: RDMA ports on the selected interfaces, with link layer, active MTU, GID index for the RoCE mode and RDMA CM state before this call.
  returned: always
  type: list
  elements: dict
  sample: [{"device": "rxe0", "port": 1, "netdev": "data0", "link_layer": "Ethernet", "active_mtu": 1024,
            "gid_index": 1, "tos": null, "mode": null}]
app:
  description: >-
    The values applications must use, derived from the same state (feed them to the
    hpcnet.rdma.fabric_app_config role) - ToS, DSCP, data priority, RoCE mode, C(DEV:PORT) list, netdevs and
    the GID index of the RoCE mode (C(null) when ports disagree).
  returned: always
  type: dict
  sample: {"tos": 106, "dscp": 26, "priority": 3, "roce_mode": "v2", "rdma_mtu": 4096,
           "hcas": ["mlx5_0:1"], "netdevs": ["ens1f0np0"], "gid_index": 3}
refused:
  description: Changes the kernel declined (nothing changed for them).
  returned: when changed and not in check mode
  type: list
  elements: dict
  sample: []
generation:
  description: Journal generation recorded by this call.
  returned: when changed and not in check mode
  type: int
  sample: 4
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpcnet.rdma.plugins.module_utils.qos._module import ARGUMENT_SPEC, run
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.exit_json(**run(module, Host.from_module(module)))


if __name__ == "__main__":
    main()
