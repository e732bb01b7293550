#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: tuning_summary
short_description: Summarize a tuning run per host - what changed, what could not be set, the fast path - and hand it to set_stats
version_added: 0.2.0
author:
  - hpcnet.rdma contributors (@hpcnet)
description:
  - An action plugin (no module code runs on the nodes); it runs on the controller only and touches no node. The role
    C(hpcnet.rdma.tuning) calls it once per host as its last task, over the results its steps registered.
  - Per concern (C(stack), C(sysctl), C(nic), C(irq), C(qos), C(services), C(app_config), C(record)) the keys that changed
    - or would change, in check mode - and what could not be set (not settable here, refused, unsupported, not possible,
    absent, notes, capped), each with its reason. A concern whose steps did not run (tags, when) has no entry.
  - The summary is shown (as with M(ansible.builtin.debug)) and handed to the run's custom stats as with
    M(ansible.builtin.set_stats) - global stats (C(per_host=false), C(aggregate=true)) under O(stats_key), keyed by
    C(inventory_hostname) - one task where a debug and a set_stats task were two.
  - Global, because ansible-runner (the executor of AWX and ansible-navigator) keeps only the global custom stats
    as the job's artifacts (AWX's job C(artifacts), runner's C(playbook_on_stats) event C(artifact_data)); per-host
    stats would be dropped there. The C(json) callback shows them under C(global_custom_stats).
  - The summary's keys are snake_case and the same in check mode - C(check_mode) and C(outcome) (C(changed) or
    C(would_change)) say what C(changes) means.
requirements:
  - None on the nodes.
options:
  results:
    description:
      - Concern name to the list of results registered for it (a module result, or a skipped one).
      - A result counts when it has C(changes) and no C(skipped).
    type: dict
    default: {}
  profile:
    description: The resolved profile's name.
    type: str
  digest:
    description: The resolved profile's digest.
    type: str
  previous_profile:
    description: The profile recorded on the node before this run, if any.
    type: str
  rdma_mode:
    description: The role's C(rdma_mode) (the summary's C(mode)).
    type: str
    choices: [live, bake]
  run:
    description: The run id the journaling calls shared (C(tuning_state rollback scope=last) undoes them as one).
    type: str
  fast:
    description: Whether the run took the in-sync fast path (every concern skipped).
    type: bool
    default: false
  fast_allowed:
    description: Whether this run may take the fast path (a full run, not a switch, not a bake, C(rdma_fast_rerun)).
    type: bool
    default: false
  sync:
    description: The in-sync answer (M(hpcnet.rdma.node_tuning)'s RV(hpcnet.rdma.node_tuning#module:sync)) -
      C(inputs_digest), C(checked), C(msg).
    type: dict
    default: {}
  scopes:
    description: The release scopes the in-sync check compared.
    type: list
    elements: str
    default: []
  stats_key:
    description: The custom stats key the summaries go under, keyed by host (C(ansible_stats.data.<stats_key>.<inventory_hostname>)).
    type: str
    default: rdma_tuning
notes:
  - Check mode changes nothing (nothing is changed in any mode); the summary then says C(check_mode=true),
    C(outcome=would_change), with the same keys.
seealso:
  - module: hpcnet.rdma.node_tuning
  - module: ansible.builtin.set_stats
extends_documentation_fragment:
  - hpcnet.rdma.attributes.controller
"""

EXAMPLES = r"""
- name: Summary of the run
  hpcnet.rdma.tuning_summary:
    results:
      sysctl: ["{{ tuned_sysctl }}"]
      nic: ["{{ tuned_nic }}"]
    profile: mpi
    rdma_mode: live
    fast: false
    fast_allowed: true
    sync: "{{ tuned_sysctl.sync | default({}) }}"
"""

RETURN = r"""
ansible_stats:
  description:
    - The summary under C(data.<stats_key>.<inventory_hostname>), global (C(per_host=false)) and C(aggregate) - the
      strategy merges every host's entry into the run's global custom stats as it does set_stats' result, which
      ansible-runner keeps as the job's artifacts (AWX). Shown once, as this task's output.
    - 'Summary keys: C(profile), C(digest), C(previous_profile), C(mode), C(run), C(check_mode), C(outcome) (C(changed),
      or C(would_change) in check mode), C(changes) (per concern, the keys), C(not_set) (per concern, a line each with
      the reason), C(fast_path) (taken, or why not).'
  returned: always
  type: dict
  sample: {"per_host": false, "aggregate": true, "data": {"rdma_tuning": {"node1": {
           "profile": "mpi", "digest": "3f1c...", "previous_profile": null, "mode": "live", "run": "20261205T101500Z-004211",
           "check_mode": false, "outcome": "changed",
           "changes": {"sysctl": ["net.core.rmem_max"], "nic": ["data0 mtu"]},
           "not_set": {"sysctl": ["not settable here: net.core.rmem_max - kernel-global, read-only in this container"]},
           "fast_path": "not taken: the node has no record yet"}}}}
"""

# The options, read by the action plugin (plugins/action/tuning_summary.py) - one place for spec and docs.
ARGUMENT_SPEC = dict(
    results=dict(type="dict", default={}),
    profile=dict(type="str"),
    digest=dict(type="str"),
    previous_profile=dict(type="str"),
    rdma_mode=dict(type="str", choices=["live", "bake"]),
    run=dict(type="str"),
    fast=dict(type="bool", default=False),
    fast_allowed=dict(type="bool", default=False),
    sync=dict(type="dict", default={}),
    scopes=dict(type="list", elements="str", default=[]),
    stats_key=dict(type="str", default="rdma_tuning", no_log=False),
)
