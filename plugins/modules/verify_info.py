#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: verify_info
short_description: One node's fabric facts with counters sampled twice, for the hpcnet.rdma.rdma_verify findings
version_added: 0.1.0
author:
  - hpcnet.rdma contributors (@hpcnet)
description:
  - Reads what M(hpcnet.rdma.fabric_info) reads (RV(fabric) is its result), waits O(interval) seconds and
    reads the counters again, so RV(delta) holds what I(grew) - netdev error, drop, discard and pause
    counters, queue interrupts per CPU, softnet drops and time squeezes, TCP segments and retransmits.
  - Also what the cross-host comparison needs and M(hpcnet.rdma.fabric_info) does not carry - the data
    interfaces and their IPv4 addresses, the kernel release, the rdma-core version, each queue IRQ's
    affinity, irqbalance, coalescing, the NCCL and UCX traffic class, the memlock limit of the RDMA group,
    the modes of the C(/dev/infiniband) nodes and the profile recorded by the C(hpcnet.rdma.tuning) role.
  - With O(drift) it also returns RV(state), what M(hpcnet.rdma.tuning_state) C(action=status)
    returns (the drift, the recorded profile, the interrupted generations), and with O(qos) RV(qos), what
    M(hpcnet.rdma.roce_qos_info) returns for the data interfaces - read by the same code as those modules, while
    the counters are being sampled (inside O(interval)), so one module call reads all a verify needs of a node.
  - A drift or QoS part that cannot be read does not fail the module; its result is C(failed=true) with the C(msg)
    why (the role reports it as a finding, C(drift.unavailable) for the drift).
  - The role C(hpcnet.rdma.rdma_verify) runs it once on every node and compares the nodes with
    M(hpcnet.rdma.fabric_verify_info) on the controller. Changes nothing.
requirements:
  - Linux with sysfs and procfs on the node; C(ethtool) and iproute2 (C(ip)) for netdev counters.
  - Optional, used when installed - rdma-core's C(ibv_devinfo), iproute2's C(rdma), C(ibstat).
  - With O(qos) - iproute2's C(dcb) or NVIDIA C(mlnx_qos) (a NIC without DCB is reported, not an error).
  - With O(drift) - the tools of the keys the journal records (as M(hpcnet.rdma.tuning_state) C(action=status)).
options:
  interfaces:
    description:
      - The data interfaces. Empty means the netdevs under RDMA ports, else O(fallback_interfaces).
      - One that does not exist on the node is listed in RV(missing_interfaces) (a finding), not an error.
    type: list
    elements: str
    default: []
  fallback_interfaces:
    description: Data interfaces when O(interfaces) is empty and the node has no RDMA port (the role passes C(rdma_interfaces[*].name)).
    type: list
    elements: str
    default: []
  interval:
    description: Seconds between the two counter samples (0 to 60; 0 takes both at once).
    type: float
    default: 2.0
  tools:
    description: As in M(hpcnet.rdma.fabric_info).
    type: list
    elements: str
    choices: [ibv_devinfo, rdma, ibstat, nvidia-smi]
    default: [ibv_devinfo, rdma]
  ethtool:
    description: Read rings, channels, coalescing and C(ethtool -S) counters.
    type: bool
    default: true
  profile_file:
    description: The profile record the C(hpcnet.rdma.tuning) role writes.
    type: path
    default: /etc/hpcnet-rdma/profile.json
  nccl_conf:
    description: NCCL's configuration file (C(NCCL_IB_TC) is read).
    type: path
    default: /etc/nccl.conf
  ucx_conf:
    description: UCX's configuration file (C(UCX_IB_TRAFFIC_CLASS) is read).
    type: path
    default: /etc/ucx/ucx.conf
  memlock_group:
    description: The group whose memlock limit (limits.conf, limits.d) is reported.
    type: str
    default: rdma
  drift:
    description:
      - Also read the journal of the node's tuning and the live value of every key it records, and return
        RV(state) - the drift from the recorded profile, the profile and the interrupted generations.
    type: bool
    version_added: 0.2.0
    default: true
  journal_dir:
    description:
      - With O(drift), the directory of the on-node journal (as M(hpcnet.rdma.tuning_state)); it is read
        with the same trust checks, never created or written. A journal that fails them is reported in
        RV(state), not a module failure.
    type: path
    version_added: 0.2.0
    default: /var/lib/hpcnet-rdma
  qos:
    description:
      - Also read the RoCE QoS of the data interfaces (PFC, trust, DSCP map, ECN, RDMA CM ToS and mode) and
        return RV(qos). Skipped when the node has no data interface.
    type: bool
    version_added: 0.2.0
    default: true
extends_documentation_fragment:
  - hpcnet.rdma.attributes.info
"""

EXAMPLES = r"""
- name: Sample the data interfaces twice, 2 s apart
  hpcnet.rdma.verify_info:
    interfaces: [data0]
    interval: 2
  register: sample

- name: What grew on data0
  ansible.builtin.debug:
    var: sample.delta.netdevs.data0

- name: Facts, counters and QoS only - no drift (the journal is not read)
  hpcnet.rdma.verify_info:
    interfaces: [data0]
    drift: false
  register: without_drift

- name: Everything a verify reads, with the journal of a non-default directory
  hpcnet.rdma.verify_info:
    journal_dir: /srv/hpcnet-rdma
  register: sample_with_drift

- name: Keys that drifted from the recorded profile
  ansible.builtin.debug:
    msg: "{{ sample_with_drift.state.drift | default([]) | map(attribute='key') | list }}"
"""

RETURN = r"""
fabric:
  description: The first sample, exactly what M(hpcnet.rdma.fabric_info) returns (devices, netdevs, host, modules, netns_mode, tools, findings).
  returned: always
  type: dict
data_interfaces:
  description: The data interfaces compared across hosts (see O(interfaces)).
  returned: always
  type: list
  elements: str
  sample: [data0]
missing_interfaces:
  description: Entries of O(interfaces) that do not exist on the node.
  returned: always
  type: list
  elements: str
addresses:
  description: IPv4 addresses of each data interface (from C(ip -j addr show)); the path MTU probe pings the first.
  returned: always
  type: dict
  sample: {"data0": ["10.77.0.1"]}
addresses_error:
  description: Why C(ip -j addr show) could not be read, else null.
  returned: always
  type: str
delta:
  description: Growth between the two samples, O(interval) seconds apart (C(interval) is the measured time).
  returned: always
  type: dict
  sample: {"interval": 2.004, "netdevs": {"data0": {"counters": {"rx_dropped": 0}, "ethtool_counters": {"rx_drops": 0},
           "irqs_per_cpu": [3, 0]}}, "softnet": {"dropped": 0, "time_squeeze": 0}, "tcp": {"out_segs": 40, "retrans_segs": 0}}
kernel:
  description: Kernel release (C(/proc/sys/kernel/osrelease)).
  returned: always
  type: str
  sample: 6.1.0-57-amd64
rdma_core:
  description: rdma-core version and where it was read (the dpkg status file, else the libibverbs file name).
  returned: always
  type: dict
  sample: {"version": "44.0-2", "source": "/var/lib/dpkg/status"}
irqs:
  description: Per data interface its NUMA node, local and online CPUs and each queue IRQ's configured and effective affinity; null without MSI-X.
  returned: always
  type: dict
  sample: {"data0": {"numa_node": -1, "local_cpus": "0-1", "online_cpus": "0-1",
                     "irqs": [{"irq": 38, "name": "virtio2-input.0", "affinity": "0", "effective": "0"}]}}
irqbalance:
  description: Whether irqbalance is installed and running and told to skip this collection's IRQs.
  returned: always
  type: dict
  sample: {"installed": true, "service": {"active": true, "enabled": "enabled"}, "policyscript": true}
coalesce:
  description: C(ethtool -c) of each data interface (null when the driver has none).
  returned: always
  type: dict
memlock:
  description: The memlock limits (KiB, -1 unlimited) a member of O(memlock_group) gets, with the line they come from.
  returned: always
  type: dict
  sample: {"group": "rdma", "soft": {"domain": "@rdma", "kib": -1, "value": "unlimited",
           "source": "/etc/security/limits.d/90-hpcnet-rdma.conf:2"}, "hard": null}
devnodes:
  description: Each C(/dev/infiniband) node's group and mode.
  returned: always
  type: dict
  sample: {"uverbs0": {"gid": 106, "group": "rdma", "mode": "0660"}}
apps:
  description:
    - What NCCL and UCX are told to use, per app (C(nccl), C(ucx)) - its file and whether it exists, its traffic
      class key and value (C(key) and C(value) - C(NCCL_IB_TC), C(UCX_IB_TRAFFIC_CLASS)), and C(settings) with the raw
      value of each field in C(keys) - the traffic class C(tc), the GID index C(gid_index) and the devices
      C(devices) (C(NCCL_IB_HCA), C(UCX_NET_DEVICES)), null where the file does not set it.
    - The role C(hpcnet.rdma.rdma_verify) checks them against the node's RoCE ToS, GID table and RDMA devices.
  returned: always
  type: dict
  sample: {"ucx": {"file": "/etc/ucx/ucx.conf", "key": "UCX_IB_TRAFFIC_CLASS", "present": true, "value": "106",
                   "keys": {"tc": "UCX_IB_TRAFFIC_CLASS", "gid_index": "UCX_IB_GID_INDEX", "devices": "UCX_NET_DEVICES"},
                   "settings": {"tc": "106", "gid_index": "1", "devices": "rxe0:1"}}}
profile:
  description: The recorded profile (its JSON), null when none is recorded, C({file, error}) when unreadable.
  returned: always
  type: dict
state:
  description:
    - What M(hpcnet.rdma.tuning_state) C(action=status) returns without C(changed)
      (C(generations), C(tuned), C(interrupted), C(drift), C(profile) and C(msg) naming the interrupted generations).
    - C(failed=true) and C(msg) instead when the journal could not be read (untrusted or corrupt, C(msg) says which).
  returned: when O(drift)
  type: dict
  version_added: 0.2.0
  sample: {"drift": [{"key": "sysctl:net.core.rmem_max", "applied": "268435456", "current": "212992",
           "since_generation": 3}], "interrupted": [], "profile": {"name": "mpi", "digest": "sha256:6c1f..."},
           "generations": [], "tuned": {}}
qos:
  description:
    - What M(hpcnet.rdma.roce_qos_info) returns without C(changed) for the RV(data_interfaces)
      (C(interfaces), C(rdma_ports), C(findings), C(unsupported)).
    - C(failed=true) and C(msg) instead when it could not be read (a tool failed, C(msg) says which).
  returned: when O(qos) and the node has a data interface
  type: dict
  version_added: 0.2.0
  sample: {"interfaces": {"data0": {"driver": "virtio_net", "backend": "dcb", "dcb": false,
           "reason": "Operation not supported"}}, "rdma_ports": [{"device": "rxe0", "port": 1, "netdev": "data0",
           "active_mtu": 1024, "tos": 106, "mode": "RoCE v2"}], "findings": [],
           "unsupported": [{"interface": "data0", "feature": "dcb", "reason": "Operation not supported"}]}
  contains:
    interfaces:
      description:
        - Per data interface (keyed by its name), as RV(hpcnet.rdma.roce_qos_info#module:interfaces) - including C(ets) and C(buffer).
        - An interface without DCB, or whose C(dcb)/C(mlnx_qos) output cannot be read, has only C(driver), C(backend),
          C(dcb=false) and C(reason) (C(unreadable) and the parse error); the rest of the facts are still read.
      type: dict
      sample: {"data0": {"driver": "virtio_net", "backend": "dcb", "dcb": false, "reason": "Operation not supported"}}
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
      description: As RV(hpcnet.rdma.roce_qos_info#module:rdma_ports).
      type: list
      elements: dict
    findings:
      description: As RV(hpcnet.rdma.roce_qos_info#module:findings).
      type: list
      elements: str
    unsupported:
      description: As RV(hpcnet.rdma.roce_qos_info#module:unsupported) - an interface whose DCB output cannot be read is here too.
      type: list
      elements: dict
"""

from typing import Any, Callable, Dict, List

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpcnet.rdma.plugins.module_utils.facts import _fabric
from ansible_collections.hpcnet.rdma.plugins.module_utils.facts import _findings as _findings_node
from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _info as _qosinfo
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _spec
from ansible_collections.hpcnet.rdma.plugins.module_utils.tuning import _status
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._journal_schema import JournalError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import ParseError

ARGUMENT_SPEC = _spec.argument_spec(dict(
    interfaces=dict(type="list", elements="str", default=[]),
    fallback_interfaces=dict(type="list", elements="str", default=[]),
    interval=dict(type="float", default=2.0),
    tools=dict(type="list", elements="str", choices=list(_fabric.TOOLS), default=["ibv_devinfo", "rdma"]),
    ethtool=dict(type="bool", default=True),
    profile_file=dict(type="path", default=_status.PROFILE_FILE),
    nccl_conf=dict(type="path", default="/etc/nccl.conf"),
    ucx_conf=dict(type="path", default="/etc/ucx/ucx.conf"),
    memlock_group=dict(type="str", default="rdma"),
    drift=dict(type="bool", default=True),
    qos=dict(type="bool", default=True),
), _spec.JOURNAL_DIR)

# What a part may raise that the node explains (the message says it all); anything else is a bug
# and its type is named too.  Either way the part is reported, the rest of the facts are not lost.
EXPECTED = (HostError, JournalError, ParseError, ValueError)


def part(read: Callable[[], Dict[str, Any]]) -> Dict[str, Any]:
    """``read()``, or ``{failed: true, msg}`` when it raises: one failed part never fails the facts."""
    try:
        return read()
    except EXPECTED as e:
        return {"failed": True, "msg": str(e)}
    except Exception as e:  # noqa: BLE001 - reported as the part's failure, like a failed task was
        return {"failed": True, "msg": "%s: %s" % (type(e).__name__, e)}


def parts(host: Host, params: Dict[str, Any], data: List[str]) -> Dict[str, Any]:
    """The drift (tuning_state status) and QoS (roce_qos_info on ``data``) parts the params ask for."""
    out: Dict[str, Any] = {}
    if params["drift"]:
        out["state"] = part(lambda: _status.read(host, params["journal_dir"], params["profile_file"]))
        if out["state"].get("interrupted"):
            out["state"]["msg"] = _status.interrupted_msg(out["state"]["interrupted"])
    if params["qos"] and data:
        out["qos"] = part(lambda: _qosinfo.read(host, [{"name": n} for n in data]))
    return out


def run(module, host: Host) -> dict:
    params = module.params
    if not 0 <= params["interval"] <= 60:
        module.fail_json(msg="interval: %r is outside 0..60 seconds" % params["interval"])
    done: Dict[str, Any] = {}

    def during(data: List[str]) -> Dict[str, Any]:
        done.update(parts(host, params, data))
        return done

    try:
        facts = _findings_node.gather(host, params, during=during)
    except (ValueError, HostError, ParseError) as e:
        if not done:   # the facts failed before the parts ran: the drift needs no data interface
            done.update(parts(host, params, []))
        module.fail_json(msg=str(e), **done)
    if (facts.get("state") or {}).get("msg"):
        module.warn(facts["state"]["msg"])
    return dict(changed=False, **facts)


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.exit_json(**run(module, Host.from_module(module)))


if __name__ == "__main__":
    main()
