#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: fabric_verify_info
short_description: Compare RDMA nodes on the controller - drift, cross-host consistency, path MTU, the checklist - as findings and reports
version_added: 0.1.0
author:
  - hpcnet.rdma contributors (@hpcnet)
description:
  - An action plugin (no module code runs on the nodes); it runs on the controller only and touches no node. The role C(hpcnet.rdma.rdma_verify) (playbook
    C(hpcnet.rdma.verify_rdma)) calls it with C(run_once) over what every node returned from
    M(hpcnet.rdma.verify_info), M(hpcnet.rdma.tuning_state) (status), M(hpcnet.rdma.roce_qos_info) and the path MTU ping.
  - O(stage=validate) checks the options and that O(report_dir) can be written, before any node is touched.
  - O(stage=probes) plans the path MTU probes, a ring over the hosts (host I(i) pings host I(i+1)'s data address
    with C(ping -M do -s MTU-28 -c 2 -W 1 -I IFACE)), so their number grows linearly with the hosts.
  - O(stage=compare) evaluates every rule of the chosen O(families) and returns RV(findings), each with a stable
    C(id), a C(severity) (C(error), C(warning), C(info)), the C(nodes), the C(evidence) (values read, with the
    command or file they came from) and the C(fix); it writes the JSON, Markdown and HTML reports into
    O(report_dir). Consistency findings name the odd nodes and the majority value. docs/verify.md lists every id.
  - The comparison is linear in the number of hosts (benchmarks/verify_scaling.py measures it).
requirements:
  - None on the nodes - it runs on the controller from the facts M(hpcnet.rdma.verify_info) gathered.
options:
  stage:
    description: What to do (see the description).
    type: str
    choices: [validate, probes, compare]
    default: compare
  nodes:
    description:
      - Host name to its facts - C(info) (M(hpcnet.rdma.verify_info)'s result), C(state) (M(hpcnet.rdma.tuning_state)
        status), C(qos) (M(hpcnet.rdma.roce_qos_info)), C(ping) (the probe's command result), C(interfaces) (the host's
        C(rdma_interfaces), for per-interface coalescing).
      - A result with C(failed) is reported as a finding (C(node.unreadable), C(drift.unavailable)), not an error.
    type: dict
    default: {}
  pings:
    description: Host name to the result of its path MTU ping (the command task), merged into O(nodes) as C(ping).
    type: dict
    default: {}
  hosts:
    description: The hosts in play order (the ring and tie-breaks follow it); default the keys of O(nodes).
    type: list
    elements: str
  hosts_all:
    description: Every host the play started with; those missing from O(hosts) are reported as C(node.unreachable).
    type: list
    elements: str
  families:
    description: The check families to evaluate; C(node) findings are always reported.
    type: list
    elements: str
    default: [drift, consistency, path_mtu, checklist]
  fail_on:
    description:
      - The severity from which C(failed) in RV(gate) is true - C(error), C(warning), C(info), or C(never).
      - This action does not fail on findings itself; the role fails the play when C(failed) in RV(gate) is true.
    type: str
    default: error
  severity:
    description: Finding id to the severity it should have (C(error), C(warning), C(info)) or C(ignore) to drop it.
    type: dict
    default: {}
  retrans_ratio:
    description: TCP retransmits per segment sent, over the sample interval, above which C(tcp.retransmits) is reported.
    type: float
    default: 0.001
  memlock:
    description: The memlock limit the RDMA group must have, C(unlimited) or KiB.
    type: str
    default: unlimited
  device_mode:
    description: The widest mode a C(/dev/infiniband) node may have.
    type: str
    default: "0660"
  path_mtu:
    description: The MTU the path must carry; default the larger of both ends' data-interface MTUs.
    type: int
  probes:
    description: With O(stage=compare), the RV(probes) of the probes stage (the ping command each host ran).
    type: dict
  report_dir:
    description: Controller directory for C(rdma-verify.json), C(rdma-verify.md) and C(rdma-verify.html); none written when unset.
    type: path
  formats:
    description: Which reports to write.
    type: list
    elements: str
    choices: [json, markdown, html]
    default: [json, markdown, html]
attributes:
  check_mode:
    details: An action plugin that touches no node; the reports are written on the controller in check mode too.
notes:
  - The JSON report's schema (C(hpcnet.rdma.rdma_verify/1)) and every finding id are documented in docs/verify.md.
seealso:
  - module: hpcnet.rdma.verify_info
  - module: hpcnet.rdma.tuning_state
  - module: hpcnet.rdma.fabric_info
extends_documentation_fragment:
  - hpcnet.rdma.attributes.controller
"""

EXAMPLES = r"""
- name: Compare the play's hosts and write the reports (after the role's gathering tasks)
  hpcnet.rdma.fabric_verify_info:
    nodes: "{{ dict(ansible_play_hosts | zip(ansible_play_hosts | map('extract', hostvars, '__rdma_verify_node'))) }}"
    hosts: "{{ ansible_play_hosts }}"
    report_dir: /tmp/rdma-verify
    fail_on: warning
  run_once: true
  register: verify

- name: Fail the pipeline on the gate
  ansible.builtin.fail:
    msg: "{{ verify.gate.reached | join('; ') }}"
  when: verify.gate.failed
  run_once: true
"""

RETURN = r"""
findings:
  description: With O(stage=compare), every finding, worst first.
  returned: when O(stage=compare)
  type: list
  elements: dict
  sample: [{"id": "consistency.mtu", "family": "consistency", "severity": "error", "nodes": ["vm2"],
            "title": "data-interface MTU differs: vm2 has 1500; the majority (1 of 2 hosts (a tie, broken by the recorded profile)) has 9000",
            "evidence": [{"node": "vm2", "what": "data-interface MTU", "value": 1500, "source": "/sys/class/net/data0/mtu"}],
            "fix": "set the same MTU on every data interface ...", "majority": {"value": 9000, "hosts": 1, "of": 2, "tie": true}}]
manifest:
  description:
    - With O(stage=compare), the fleet manifest - per attribute (data-interface C(mtu) and C(driver), C(rdma_devices),
      C(rdma_drivers), C(firmware), C(kernel), C(rdma_core)) the value most hosts have, how many hold it (C(hosts) of C(of)),
      whether it was a C(tie) (the first host in play order wins) and the C(odd) hosts with their value.
    - The role C(hpcnet.rdma.rdma_health) writes it to every node; the node check reports a node that differs.
  returned: when O(stage=compare)
  type: dict
  version_added: 0.3.0
  sample: {"schema": 1, "hosts": ["vm1", "vm2"], "items": {"mtu": {"value": 9000, "hosts": 2, "of": 2, "tie": false, "odd": {}}}}
gate:
  description: C(failed) when a finding reaches O(fail_on); the counts per severity, the worst one, and the findings that reached it.
  returned: when O(stage=compare)
  type: dict
  sample: {"fail_on": "error", "failed": true, "counts": {"error": 1, "warning": 0, "info": 0}, "worst": "error",
           "reached": ["error consistency.mtu: data-interface MTU differs ..."]}
probes:
  description: With O(stage=probes), per host the peer, its address, the size and the ping argv, or C(skip) with the reason.
  returned: when O(stage=probes)
  type: dict
  sample: {"vm1": {"peer": "vm2", "address": "10.77.0.2", "interface": "data0", "mtu": 9000, "size": 8972,
                   "argv": ["ping", "-M", "do", "-s", "8972", "-c", "2", "-W", "1", "-I", "data0", "10.77.0.2"]}}
reports:
  description: The report files written, per format.
  returned: when O(stage=compare)
  type: dict
  sample: {"json": "/tmp/rdma-verify/rdma-verify.json", "markdown": "/tmp/rdma-verify/rdma-verify.md",
           "html": "/tmp/rdma-verify/rdma-verify.html"}
errors:
  description: Every problem with the options (the task fails with them).
  returned: on bad input
  type: list
  elements: str
"""

# The options, read by the action plugin (plugins/action/fabric_verify_info.py) - one place for spec and docs.
ARGUMENT_SPEC = dict(
    stage=dict(type="str", choices=["validate", "probes", "compare"], default="compare"),
    nodes=dict(type="dict", default={}),
    pings=dict(type="dict", default={}),
    hosts=dict(type="list", elements="str"),
    hosts_all=dict(type="list", elements="str"),
    families=dict(type="list", elements="str", default=["drift", "consistency", "path_mtu", "checklist"]),
    fail_on=dict(type="str", default="error"),
    severity=dict(type="dict", default={}),
    retrans_ratio=dict(type="float", default=0.001),
    memlock=dict(type="str", default="unlimited"),
    device_mode=dict(type="str", default="0660"),
    path_mtu=dict(type="int"),
    probes=dict(type="dict"),
    report_dir=dict(type="path"),
    formats=dict(type="list", elements="str", choices=["json", "markdown", "html"], default=["json", "markdown", "html"]),
)
