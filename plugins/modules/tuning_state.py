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
  - Status also names every key whose live value has drifted from the value the collection last set
    (RV(drift)) and the applied profile (RV(profile)).
  - O(action=rollback) restores originals in reverse order of first change. Runtime values are
    written back, files are restored byte for byte with their mode, owner and SELinux label, and
    files and directories the collection created are removed. O(scope=all) restores everything and empties the journal (but for keys it
    could not restore); O(scope=last) undoes only the newest run (every generation that shares the newest
    generation's C(journal_run), such as a whole profile switch; a generation without one is a run of its own).
  - A managed file edited by hand since the tune is not silently discarded - the edited copy is kept
    beside it as C(PATH.hpcnet-rdma-edited) before the original is restored, and RV(kept_edits) names it.
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
requirements:
  - The tools of what it restores - C(ethtool) and iproute2 for NIC keys, C(dcb) or C(mlnx_qos) for QoS keys,
    kmod for modules, systemd for units, C(dpkg)/C(rpm) for packages; none for status.
options:
  action:
    description:
      - C(status) reads the journal; C(rollback) restores originals.
      - The C(in_sync) action of version 0.2.0 was removed in 0.3.0 - whether a tune would change anything is
        that tune's check mode, and the C(hpcnet.rdma.tuning) role's no-change rerun asks it inside its one
        M(hpcnet.rdma.node_tuning) call (O(hpcnet.rdma.node_tuning#module:sync)).
    type: str
    choices: [status, rollback]
    default: status
  scope:
    description: With O(action=rollback), C(all) restores every original; C(last) undoes the newest run only.
    type: str
    choices: [all, last]
    default: all
  profile_file:
    description:
      - With O(action=status), the file where the C(hpcnet.rdma.tuning) role records the applied profile
        (name, digest of its resolved values, inheritance chain); it is journaled like every other file,
        so rollback returns it with the rest. RV(profile) shows it with the time it was applied.
    type: path
    default: /etc/hpcnet-rdma/profile.json
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
  returned: when O(action=status) or O(action=rollback)
  type: list
  elements: dict
  sample: [{"id": 1, "module": "sysctl_tuning", "status": "applied", "time": "2026-12-02T15:00:00Z",
            "run": "20261202T150000-4711", "scope": "tuning.sysctl", "keys": ["sysctl:net.ipv4.tcp_rmem"]}]
drift:
  description:
    - Keys whose live value differs from the value the collection last set (or that cannot be read any
      more), each with the applied and current value (files as size, sha256, mode and owner) and the
      generation that set it.
    - A key a call found already at its value is in no generation; it is compared with the journal's
      target for its release scope instead, and its entry has the release scope (C(scope)) in
      place of the generation.
  returned: when O(action=status)
  type: list
  elements: dict
  sample: [{"key": "sysctl:net.core.rmem_max", "applied": "268435456", "current": "212992", "since_generation": 3}]
profile:
  description:
    - The profile recorded in O(profile_file) (C(name), C(digest), C(chain), C(description)), with
      C(applied_at) and C(generation), the journal generation that wrote it; null when no profile is recorded.
  returned: when O(action=status)
  type: dict
  sample: {"name": "mpi", "digest": "sha256:6c1f...", "chain": ["mpi"], "applied_at": "2026-12-02T15:00:00Z",
           "generation": 7, "file": "/etc/hpcnet-rdma/profile.json"}
tuned:
  description: For each journaled key, its original and the value on the node now (or the read error).
  returned: when O(action=status) or O(action=rollback)
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
kept_edits:
  description:
    - Files edited by hand since the collection last wrote them (their bytes differ from what the journal
      says it wrote, or a file was made where it had removed one). Before such a file is restored, the
      edited copy is kept beside it as C(PATH.hpcnet-rdma-edited) (C(.1), C(.2), ... when that name is
      taken; no C(*.conf) reader picks it up), with its mode and owner, and a warning names each; in check
      mode, the copies a rollback would keep. A file whose copy cannot be written is not restored and is
      listed in RV(unrestorable).
  returned: when O(action=rollback)
  type: list
  version_added: 0.2.0
  elements: dict
  sample: [{"key": "file:/etc/ucx/ucx.conf", "path": "/etc/ucx/ucx.conf", "copy": "/etc/ucx/ucx.conf.hpcnet-rdma-edited"}]
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
  description:
    - C(nothing to roll back ...) when the journal records no change; the unrestored keys, or the interrupted generations.
  returned: when there is something to say
  type: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _engine
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _journal_schema
from ansible_collections.hpcnet.rdma.plugins.module_utils.tuning import _concerns as _registry
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _spec
from ansible_collections.hpcnet.rdma.plugins.module_utils.tuning import _status
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Plan

# Where the hpcnet.rdma.tuning role records the applied profile (a journaled file like any other).
PROFILE_FILE = _status.PROFILE_FILE

ARGUMENT_SPEC = _spec.argument_spec(dict(
    action=dict(type="str", choices=["status", "rollback"], default="status"),
    scope=dict(type="str", choices=["all", "last"], default="all"),
    on_unrestorable=dict(type="str", choices=["fail", "warn"], default="fail"),
    profile_file=dict(type="path", default=PROFILE_FILE),
), _spec.JOURNAL_DIR)


def status(module, host: Host) -> dict:
    try:
        state = _status.read(host, module.params["journal_dir"], module.params["profile_file"])
    except _journal_schema.JournalError as e:
        module.fail_json(msg=str(e))
    out = dict(changed=False, changes=[], previous={}, current={}, **state)
    if out["interrupted"]:
        out["msg"] = _status.interrupted_msg(out["interrupted"])
        module.warn(out["msg"])
    return out


def rollback(module, host: Host) -> dict:
    """Best effort per key: restore all it can, keep (and report) every key it could not."""
    params = module.params
    engine = _engine.Engine(module, host, params["journal_dir"], domains=_registry.all_maps())
    journal = engine.journal
    extra = {}
    seen = {}

    def build():
        extra.update(_status.status(host, journal))
        extra.pop("drift")
        extra["unrestorable"] = []
        if params["scope"] == "all":
            targets = journal.rollback_all_targets()
        else:
            seen["gens"] = [g["id"] for g in journal.last_run()]
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
        journal.restored(restored, seen.get("gens"))
        return bool(restored)

    out = engine.run("tuning_state", build, extra, record=False, on_success=forget, restore=True)
    out["unrestorable"] = seen["unreadable"] + out.get("unrestorable", [])
    out.setdefault("refused", [])
    out.setdefault("kept_edits", [])
    if out["kept_edits"]:
        module.warn("rollback %s %d file(s) edited by hand since the tune beside the restored original: %s" % (
            "would keep" if module.check_mode else "kept", len(out["kept_edits"]),
            "; ".join("%s -> %s" % (e["path"], e["copy"]) for e in out["kept_edits"])))
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
