#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: tuning_state
short_description: Show what hpcnet.rdma tuned on a node, and roll it back exactly
version_added: 0.1.0
author:
  - hpcnet.rdma contributors (@hpcnet)
description:
  - O(action=status) reports every key the collection changed, its original, its current value and
    the journal's generations (one per module call that changed something). It changes nothing.
  - O(action=rollback) restores originals in reverse order of first change. Runtime values are
    written back, files are restored byte for byte with their mode, and files the collection
    created are removed. O(scope=all) restores everything and empties the journal; O(scope=last) undoes
    only the newest generation.
  - The journal is on disk, so rollback also works after a reboot.
options:
  action:
    description: C(status) reads the journal; C(rollback) restores originals.
    type: str
    choices: [status, rollback]
    default: status
  scope:
    description: With O(action=rollback), C(all) restores every original; C(last) undoes the newest generation only.
    type: str
    choices: [all, last]
    default: all
attributes:
  check_mode:
    details: Rollback in check mode predicts exactly what it would restore and writes nothing.
  diff_mode:
    details: Shows each restored runtime value and file.
extends_documentation_fragment:
  - hpcnet.rdma.attributes
  - hpcnet.rdma.journal
"""

EXAMPLES = r"""
- name: What is tuned here?
  hpcnet.rdma.tuning_state:
    action: status
  register: tuned

- name: Undo the last tuning call only
  hpcnet.rdma.tuning_state:
    action: rollback
    scope: last

- name: Restore the node to what it was before the first tune
  hpcnet.rdma.tuning_state:
    action: rollback
"""

RETURN = r"""
generations:
  description: Journal generations, oldest first (before a rollback, for O(action=rollback)).
  returned: always
  type: list
  elements: dict
  sample: [{"id": 1, "module": "sysctl_tuning", "status": "applied", "time": "2026-12-02T15:00:00Z",
            "keys": ["sysctl:net.ipv4.tcp_rmem"]}]
tuned:
  description: For each journaled key, its original and the value on the node now (or the read error).
  returned: always
  type: dict
  sample: {"sysctl:net.ipv4.tcp_rmem": {"original": "4096 131072 6291456", "current": "4096 87380 268435456"}}
changes:
  description: Restorations planned (check mode) or made, newest first change first.
  returned: always
  type: list
  elements: dict
  sample: [{"key": "nic:data0:mtu", "before": 9000, "after": 1500}]
previous:
  description: Value of every restored key before the rollback.
  returned: always
  type: dict
current:
  description: Value of every restored key after the rollback, read back.
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpcnet.rdma.plugins.module_utils import _engine, _registry, _spec
from ansible_collections.hpcnet.rdma.plugins.module_utils._host import Host, HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils._plan import Plan


def _status(host: Host, journal: _engine.Journal) -> dict:
    tuned = {}
    domains = _engine.Domains(*_registry.ALL)   # any key any module wrote
    for key, original in journal.originals().items():
        try:
            tuned[key] = {"original": original, "current": domains.read_value(host, key)}
        except HostError as e:
            tuned[key] = {"original": original, "error": str(e)}
    gens = [{"id": g["id"], "module": g.get("module"), "status": g.get("status"), "time": g.get("time"),
             "keys": [c["key"] for c in g["changes"]]} for g in journal.generations()]
    return {"generations": gens, "tuned": tuned}


ARGUMENT_SPEC = _spec.argument_spec(dict(
    action=dict(type="str", choices=["status", "rollback"], default="status"),
    scope=dict(type="str", choices=["all", "last"], default="all"),
), _spec.JOURNAL_DIR)


def run(module, host: Host) -> dict:
    params = module.params
    journal = _engine.Journal(host, params["journal_dir"])
    if params["action"] == "status":
        try:
            journal.load()
        except _engine.JournalError as e:
            module.fail_json(msg=str(e))
        return dict(changed=False, changes=[], previous={}, current={}, **_status(host, journal))

    engine = _engine.Engine(module, host, params["journal_dir"], domains=_registry.ALL)
    journal = engine.journal
    extra = {}
    last = {}

    def build():
        extra.update(_status(host, journal))
        if params["scope"] == "all":
            targets = journal.rollback_all_targets()
        else:
            last["gen"] = journal.last_generation()
            targets = journal.rollback_last_targets()
        plan = Plan()
        previous = {}
        for target in targets:
            current = engine.domains.read_value(host, target.key)
            previous[target.key] = current
            if not engine.domains.same(target.key, current, target.after):
                plan.add(target.key, current, target.after)
        return plan, previous

    def forget(dry: bool) -> bool:
        """Drop the rolled-back generations; True when the journal changes (or would)."""
        if params["scope"] == "all":
            had = bool(journal.generations() or journal.originals())
            if had and not dry:
                journal.clear()
            return had
        if last.get("gen"):
            if not dry:
                journal.discard(last["gen"]["id"])
            return True
        return False

    return engine.run("tuning_state", build, extra, record=False, on_success=forget)


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.exit_json(**run(module, Host.from_module(module)))


if __name__ == "__main__":
    main()
