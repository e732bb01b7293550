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
    written back, files are restored byte for byte with their mode, owner and SELinux label, and
    files and directories the collection created are removed. O(scope=all) restores everything and empties the journal (but for keys it
    could not restore); O(scope=last) undoes only the newest generation.
  - Rollback is best effort per key. A key that cannot be restored (its interface was removed, a
    package purge is refused because a later package depends on it, a file path is now a directory)
    does not stop the others and nothing already restored is re-applied. Each such key is listed in
    RV(unrestorable) with the reason and stays in the journal, so a later rollback retries it; see
    O(on_unrestorable). Keys the node refuses with nothing changed (a kernel module still in use, a
    directory the collection created that now holds someone else's files, which is left in place)
    are listed in RV(refused), do not fail the task, and stay in the journal too.
  - A generation left C(applying) by a run that was killed before it committed is shown in
    RV(interrupted); the next run that takes the journal lock (any module's, or a rollback) reads its
    keys back, keeps the ones that changed (marked C(reconciled)) and forgets the ones that did not.
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
  on_unrestorable:
    description:
      - With O(action=rollback), what a key that could not be restored does to the task.
      - C(fail) (the default) restores everything else first, keeps the unrestored keys in the journal,
        then fails naming each key and the reason (also in check mode, when a key cannot even be read).
      - C(warn) succeeds with a warning; RV(unrestorable) still lists the keys, and they stay in the journal.
    type: str
    choices: [fail, warn]
    default: fail
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
unrestorable:
  description: Keys the rollback could not restore, with the reason; they stay in the journal for a later rollback.
  returned: when O(action=rollback)
  type: list
  elements: dict
  sample: [{"key": "nic:data0:mtu", "reason": "cannot read it: interface data0 does not exist"}]
refused:
  description: Keys the node refused with nothing changed (kept in the journal); they do not fail the task.
  returned: when O(action=rollback)
  type: list
  elements: dict
  sample: [{"key": "kmod:ib_core", "reason": "kernel module ib_core is in use (refcnt 1, used by ib_umad); left loaded"}]
interrupted:
  description: Generations a killed run left C(applying); the next run that takes the journal lock reconciles them.
  returned: always
  type: list
  elements: dict
  sample: [{"id": 4, "module": "sysctl_tuning", "time": "2026-12-02T15:00:00Z"}]
reconciled:
  description: Interrupted generations this run settled, with the keys found applied (kept) and never changed (dropped).
  returned: when a rollback reconciled a generation
  type: list
  elements: dict
  sample: [{"generation": 4, "module": "sysctl_tuning", "kept": ["sysctl:vm.swappiness"], "dropped": []}]
msg:
  description: C(nothing to roll back ...) when the journal records no change; the unrestored keys, or the interrupted generations.
  returned: when there is something to say
  type: str
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
    gens = []
    for g in journal.generations():
        gen = {"id": g["id"], "module": g.get("module"), "status": g.get("status"), "time": g.get("time"),
               "keys": [c["key"] for c in g["changes"]]}
        if g.get("reconciled"):
            gen["reconciled"] = g["reconciled"]
        gens.append(gen)
    interrupted = [{"id": g["id"], "module": g.get("module"), "time": g.get("time")} for g in journal.interrupted()]
    return {"generations": gens, "tuned": tuned, "interrupted": interrupted}


def _interrupted_msg(interrupted: list) -> str:
    return "; ".join("generation %d (%s, %s) was interrupted before it committed (its run was killed); the next "
                     "run that takes the journal lock reconciles it" % (g["id"], g["module"], g["time"])
                     for g in interrupted)


ARGUMENT_SPEC = _spec.argument_spec(dict(
    action=dict(type="str", choices=["status", "rollback"], default="status"),
    scope=dict(type="str", choices=["all", "last"], default="all"),
    on_unrestorable=dict(type="str", choices=["fail", "warn"], default="fail"),
), _spec.JOURNAL_DIR)


def status(module, host: Host) -> dict:
    journal = _engine.Journal(host, module.params["journal_dir"])
    try:
        journal.load()
    except _engine.JournalError as e:
        module.fail_json(msg=str(e))
    out = dict(changed=False, changes=[], previous={}, current={}, **_status(host, journal))
    if out["interrupted"]:
        out["msg"] = _interrupted_msg(out["interrupted"])
        module.warn(out["msg"])
    return out


def rollback(module, host: Host) -> dict:
    """Best effort per key: restore all it can, keep (and report) every key it could not."""
    params = module.params
    engine = _engine.Engine(module, host, params["journal_dir"], domains=_registry.ALL)
    journal = engine.journal
    extra = {}
    seen = {}

    def build():
        extra.update(_status(host, journal))
        extra["unrestorable"] = []
        if params["scope"] == "all":
            targets = journal.rollback_all_targets()
        else:
            seen["gen"] = journal.last_generation()
            targets = journal.rollback_last_targets()
        seen["keys"] = [t.key for t in targets]
        seen["unreadable"] = []
        plan = Plan()
        previous = {}
        for target in targets:
            try:
                current = engine.domains.read_value(host, target.key)
            except HostError as e:   # its interface, IRQ, ... is gone: report it, restore the rest
                seen["unreadable"].append({"key": target.key, "reason": "cannot read it: %s" % e})
                continue
            previous[target.key] = current
            if not engine.domains.same(target.key, current, target.after):
                plan.add(target.key, current, target.after)
        return plan, previous

    def forget(dry: bool, out: dict) -> bool:
        """Forget what was restored; keep every key that was not.  True when the journal changes."""
        if not seen["keys"]:
            return False
        if dry:
            return True
        kept = set(r["key"] for r in seen["unreadable"] + out.get("refused", []) + out.get("unrestorable", []))
        restored = [k for k in seen["keys"] if k not in kept]
        gen = seen.get("gen")
        journal.restored(restored, gen["id"] if gen else None)
        return bool(restored)

    out = engine.run("tuning_state", build, extra, record=False, on_success=forget, restore=True)
    out["unrestorable"] = seen["unreadable"] + out.get("unrestorable", [])
    out.setdefault("refused", [])
    if not seen["keys"]:
        out["msg"] = "nothing to roll back: the journal in %s records no change" % params["journal_dir"]
        return out
    if not out["unrestorable"]:
        return out
    msg = "rollback could not restore %d key(s), kept in the journal for a later rollback: %s" % (
        len(out["unrestorable"]), "; ".join("%s: %s" % (u["key"], u["reason"]) for u in out["unrestorable"]))
    if params["on_unrestorable"] == "fail":
        out.pop("msg", None)
        module.fail_json(msg=msg, **out)
    module.warn(msg)
    out["msg"] = msg
    return out


def run(module, host: Host) -> dict:
    if module.params["action"] == "status":
        return status(module, host)
    return rollback(module, host)


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.exit_json(**run(module, Host.from_module(module)))


if __name__ == "__main__":
    main()
