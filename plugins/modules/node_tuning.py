#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: node_tuning
short_description: Every tuning concern in one module call - one plan, one payload, one Python start per node
version_added: 0.2.0
author:
  - hpcnet.rdma contributors (@hpcnet)
description:
  - Tunes several concerns of a node in one module call, the declared state per concern as a section -
    O(sysctl), O(nic), O(irq), O(qos), O(services), O(files), each taking the options of its module
    (M(hpcnet.rdma.sysctl_tuning), M(hpcnet.rdma.nic_tuning), M(hpcnet.rdma.irq_affinity),
    M(hpcnet.rdma.roce_qos), M(hpcnet.rdma.service_state), M(hpcnet.rdma.managed_files)) and checked
    by the module's argument validation as sub-options before anything runs - or, as before, a list of
    O(steps) in your own order (the same module more than once, for instance).
  - A step does exactly what its module does as a task of its own - the same argument spec, planner,
    engine, journal generation, release scope and stored targets - so M(hpcnet.rdma.tuning_state)
    rolls it back, reports its drift and checks it for the in-sync fast path the same way. What the
    call saves is the cost around each task (the controller's task setup, the payload transfer, the
    node's Python start and imports), which is most of a no-op task's time; the C(hpcnet.rdma.tuning)
    role applies its sysctl, NIC, IRQ, QoS, services and record concerns with one call.
  - The call is all-or-nothing for the node. Every step's O(steps[].args) are checked against its
    module's options, and then every step is read and planned (its module's own validation, read and
    plan, as in check mode, which writes nothing) before the first step changes anything. So a wrong
    option or value in any step - an unknown interface, a value above what the NIC allows, an
    unsupported setting - fails the call naming the step, and changes nothing on the node (no key, no
    file, no journal directory or lock).
  - Steps then run in the order given, each its module's own run (lock, plan, journal generation,
    apply, read back). When a step fails there (the kernel or a driver refuses a value), it reverts
    its own changes, as its module does, and the steps this call already applied are reverted too,
    newest first, and taken out of the journal; the message names the failed step and says the earlier
    steps were reverted. A key whose revert fails is named (RV(still_applied)), stays journaled, and
    M(hpcnet.rdma.tuning_state) O(hpcnet.rdma.tuning_state#module:action=rollback) recovers it. Like a
    rollback, such a revert drops the journal's stored targets (the next run takes the full path).
  - Each step is planned against the node as the call finds it. The one dependency between steps this
    matters for - an M(hpcnet.rdma.irq_affinity) C(explicit) pattern naming a queue IRQ that only a
    M(hpcnet.rdma.nic_tuning) C(channels) change of the same call creates - fails the call (as its
    check mode always did); apply such channels in a call of their own first.
  - Warnings of a step start with the step's name (a section's step is named after its concern).
  - O(mode), O(journal_dir) and O(journal_run) are given to every step whose O(steps[].args) do not
    set them and whose module has the option.
options:
  steps:
    description:
      - The module calls, in order. Mutually exclusive with the sections (O(sysctl), O(nic), ...); one of
        them is required.
    type: list
    elements: dict
    suboptions:
      module:
        description:
          - The module this step runs (its short name).
        type: str
        required: true
        choices: [irq_affinity, managed_files, nic_tuning, roce_qos, service_state, sysctl_tuning]
      args:
        description:
          - The module's options, exactly as its own task would take them (see its documentation,
            C(ansible-doc hpcnet.rdma.MODULE)).
        type: dict
        default: {}
      name:
        description:
          - A name for the step in messages, warnings and RV(results) (the role uses its concern names,
            C(sysctl), C(nic), ...). Without it the step is named after its module.
        type: str
  journal_run:
    description:
      - The run id of every step whose O(steps[].args) do not set C(journal_run), so
        M(hpcnet.rdma.tuning_state) O(hpcnet.rdma.tuning_state#module:scope=last) undoes the whole call
        (with the rest of its run) at once.
    type: str
  sync:
    description:
      - Before any step, answer, reading only (no lock, no write; the same in check mode), whether the node is
        exactly as a tune with these inputs leaves it, and return the answer as RV(sync). With O(sync.skip)
        and the node in sync, no step runs (RV(skipped_steps)).
      - In sync only when the profile record in O(sync.profile_file) carries O(sync.inputs_digest), no journal
        generation is interrupted, every scope in O(sync.scopes) has targets in the journal (each journaled
        call with a C(release_scope) stores the value of every key it manages, changed or already right, and
        a fingerprint of the node's interfaces, addresses, queue IRQs, online CPUs, RDMA devices and kernel
        release; every rollback drops them), the node's devices still fingerprint the same, and every target
        key's live value is the same as its target (as for M(hpcnet.rdma.tuning_state)'s drift). Otherwise
        the answer's C(reasons) name each scope, key or fact that differs.
      - The C(hpcnet.rdma.tuning) role's no-change rerun is this one call; it is the collection's only
        in-sync check (M(hpcnet.rdma.tuning_state)'s C(in_sync) action of 0.2.0 was removed in 0.3.0).
    type: dict
    suboptions:
      inputs_digest:
        description: The digest of every input of the tune (the C(hpcnet.rdma.tuning) role records it in the profile record).
        type: str
        required: true
      scopes:
        description: The C(release_scope)s the tune calls modules with; each must have stored targets.
        type: list
        elements: str
        required: true
      profile_file:
        description: The profile record whose C(inputs_digest) must equal O(sync.inputs_digest).
        type: path
        default: /etc/hpcnet-rdma/profile.json
      skip:
        description: Run no step when the node is in sync. V(false) only reports RV(sync) and runs every step.
        type: bool
        default: true
  summary:
    description:
      - Handled on the controller (the module's action plugin), never sent to the node. When the call
        found the node in sync and ran no step (RV(skipped_steps)), the action adds the tuning summary
        that M(hpcnet.rdma.tuning_summary) would make - C(fast path taken), the profile, the run - to the
        run's custom stats under O(summary.stats_key) (RV(ansible_stats), as M(ansible.builtin.set_stats)
        does) and shows the result, so the C(hpcnet.rdma.tuning) role's no-change rerun needs no task of
        its own for its summary. Otherwise it does nothing.
    type: dict
    suboptions:
      profile:
        description: The profile's name.
        type: str
      digest:
        description: The profile's digest.
        type: str
      rdma_mode:
        description: The role's C(rdma_mode).
        type: str
        choices: [live, bake]
      run:
        description: The run id.
        type: str
      scopes:
        description: The release scopes the in-sync check compared (named in the summary).
        type: list
        elements: str
        default: []
      stats_key:
        description: The custom stats key (the summary goes under it, keyed by C(inventory_hostname)).
        type: str
        default: rdma_tuning
requirements:
  - What each step's module requires on the node (see its documentation).
attributes:
  check_mode:
    details: The plan every real run makes first - every step predicts exactly what its module predicts,
      and a bad value anywhere fails alike; nothing is written.
  diff_mode:
    details: The diffs of every step, in order (each module's diff).
extends_documentation_fragment:
  - hpcnet.rdma.attributes
  - hpcnet.rdma.journal
  - hpcnet.rdma.mode
  - hpcnet.rdma.node_tuning_sections
"""

EXAMPLES = r"""
- name: Kernel parameters, a NIC and its IRQs - one call, planned together before anything changes
  hpcnet.rdma.node_tuning:
    journal_run: "{{ run_id }}"
    sysctl:
      sysctls: {net.core.rmem_max: 268435456, net.core.wmem_max: 268435456}
      release_scope: tuning.sysctl
    nic:
      interfaces: [{name: ens1f0, mtu: 9000}]
      release_scope: tuning.nic
    irq:
      interfaces: [ens1f0]
      policy: spread-local
      release_scope: tuning.irq
  register: tuned

- name: The same as steps, in an order of your own
  hpcnet.rdma.node_tuning:
    journal_run: "{{ run_id }}"
    steps:
      - module: sysctl_tuning
        name: sysctl
        args:
          sysctls: {net.core.rmem_max: 268435456, net.core.wmem_max: 268435456}
          release_scope: tuning.sysctl
      - module: nic_tuning
        name: nic
        args:
          interfaces: [{name: ens1f0, mtu: 9000}]
          release_scope: tuning.nic
      - module: irq_affinity
        name: irq
        args:
          interfaces: [ens1f0]
          policy: spread-local
          release_scope: tuning.irq
  register: tuned

- name: What each step changed
  ansible.builtin.debug:
    msg: "{{ tuned.results | items2dict(key_name='name', value_name='changed') }}"
"""

RETURN = r"""
results:
  description:
    - Each step's result, in order - the keys its module returns (C(changes), C(previous), C(current),
      C(generation), ...) - plus C(module) and C(name).
  returned: always
  type: list
  elements: dict
  sample: [{"module": "sysctl_tuning", "name": "sysctl", "changed": true,
            "changes": [{"key": "sysctl:net.core.rmem_max", "before": "212992", "after": "268435456"}],
            "previous": {"sysctl:net.core.rmem_max": "212992"}, "generation": 7}]
previous:
  description: Each step's C(previous) (the state of every key it manages before the call), in order.
  returned: always
  type: list
  elements: dict
  sample: [{"sysctl:net.core.rmem_max": "212992"}]
sync:
  description:
    - With O(sync), the in-sync answer, read before any step - C(in_sync), C(reasons) (each with the C(scope),
      C(module) and C(key) it concerns where one applies; a key that differs also shows its C(target) and
      C(current) value), C(checked) (how many target keys were read live), C(inputs_digest), C(record) (the
      profile record's C(name), C(digest), C(chain) and C(inputs_digest), or null), C(interrupted) and,
      when not in sync, C(msg).
  returned: when O(sync) is given
  type: dict
  sample: {"in_sync": false, "checked": 0, "inputs_digest": "3f1c...", "record": null, "interrupted": [],
           "reasons": [{"reason": "no profile is recorded in /etc/hpcnet-rdma/profile.json"}],
           "msg": "not in sync: no profile is recorded in /etc/hpcnet-rdma/profile.json"}
skipped_steps:
  description: True when O(sync.skip) found the node in sync and no step ran.
  returned: success
  type: bool
  sample: false
ansible_stats:
  description: With O(summary), when the node was found in sync and no step ran, the summary under
    C(data.<stats_key>.<inventory_hostname>) (global, C(aggregate)), as M(hpcnet.rdma.tuning_summary) returns it;
    the strategy merges it into the run's global custom stats (AWX's job artifacts).
  returned: with O(summary) and RV(skipped_steps)
  type: dict
  sample: {"per_host": false, "aggregate": true, "data": {"rdma_tuning": {"node1": {"profile": "mpi",
           "digest": "sha256:13f9...", "previous_profile": "mpi", "mode": "live", "run": "20261205T101500Z-004211",
           "check_mode": false, "outcome": "changed", "changes": {}, "not_set": {},
           "fast_path": "taken: in sync, every concern skipped - ..."}}}}
failed_step:
  description:
    - When a step failed - its index, module and name, and what its module returned with the failure.
      The steps before it that ran are in RV(results) (reverted, unless RV(still_applied) names keys).
  returned: failure of a step
  type: dict
  sample: {"index": 1, "module": "nic_tuning", "name": "nic"}
still_applied:
  description:
    - When a step failed while applying, the keys of earlier steps that could not be reverted, each
      C(key) and C(reason); they stay journaled for M(hpcnet.rdma.tuning_state) rollback.
  returned: failure of a step while applying
  type: list
  elements: dict
  sample: [{"key": "sysctl:net.ipv4.tcp_sack", "reason": "cannot write '1' to /proc/sys/net/ipv4/tcp_sack: Device or resource busy"}]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpcnet.rdma.plugins.module_utils.tuning._module import (
    ARGUMENT_SPEC, MUTUALLY_EXCLUSIVE, REQUIRED_ONE_OF, run)
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True, mutually_exclusive=MUTUALLY_EXCLUSIVE,
                           required_one_of=REQUIRED_ONE_OF)
    module.exit_json(**run(module, Host.from_module(module)))


if __name__ == "__main__":
    main()
