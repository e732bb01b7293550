# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The body of module hpcnet.rdma.node_tuning: several journaling modules in one module call.

Each step is one of the tuning modules, run through that module's own ``run(module, host)``
with its own argument spec, engine, journal generation and release scope - exactly what the
module does as a task of its own.  What a step saves is the per-task cost around it: the
controller's task setup, the payload transfer and the node's Python start and imports.

With ``sync`` the call first answers whether the node is exactly as a tune with these inputs leaves
it (``_status.in_sync``, read only) and, when it is and ``sync.skip``, runs no step: the tuning role's
no-change rerun, and the collection's one in-sync check.

Otherwise the call is all-or-nothing for the node (STYLE.md "Transactions"):

1. every step's arguments are checked against its module's spec;
2. every step is planned - its module's own validation, read and plan, run in check mode, which
   writes nothing (no key, no file, no journal directory or lock) - so a bad value anywhere (an
   unknown interface, a value above what the NIC allows, an unsupported setting) fails the call
   naming the step, with nothing changed.  In check mode this plan is the result: one plan;
3. the steps run for real, in order, each its module's own run (re-plan, journal generation, apply,
   read back) under one journal lock: the call's Transaction takes it at the first step that needs it
   and holds it until the last step (and a revert) is done, so no other run takes it between two
   steps.  When a step fails there - the kernel or a driver refusing, or a re-plan that no longer
   holds - the steps this call already applied are reverted too, newest first, and their changes
   leave the journal (``_transaction.Transaction``); a key that cannot be put back is named, stays
   journaled, and ``tuning_state rollback`` recovers it.

A step is planned against the node as the call finds it, so a step whose input is valid only after an
earlier step of the same call has applied fails in step 2 (as its check mode always did); the one such
dependency among the steps: an irq_affinity ``explicit`` pattern naming a queue IRQ that only a
nic_tuning ``channels`` change of the same call creates.  Apply the channels in a call of their own
first.  (A managed_files unit file that service_state then starts is planned as such: service_state's
``daemon_reload`` plans with the reload pending.)
"""
from __future__ import annotations

import copy

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _journal
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _journal_schema
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _transaction
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _spec
from ansible_collections.hpcnet.rdma.plugins.module_utils.tuning import _status
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional, Tuple

# The modules a step can run.
STEPS = ("irq_affinity", "managed_files", "nic_tuning", "roce_qos", "service_state", "sysctl_tuning")


def body(name: str) -> Any:
    """The module body (ARGUMENT_SPEC, run) of step module ``name``, imported when a step needs it: a
    call that finds the node in sync (sync) imports none of them.  Explicit imports, so ansible-core's
    payload builder finds every one."""
    if name == "sysctl_tuning":
        from ansible_collections.hpcnet.rdma.plugins.module_utils.sysctl import _module as found
    elif name == "nic_tuning":
        from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _module as found
    elif name == "irq_affinity":
        from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _module as found
    elif name == "roce_qos":
        from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _module as found
    elif name == "service_state":
        from ansible_collections.hpcnet.rdma.plugins.module_utils.services import _module as found
    elif name == "managed_files":
        from ansible_collections.hpcnet.rdma.plugins.module_utils.files import _module as found
    else:
        raise KeyError(name)
    return found


# Options of the call that every step gets unless its args set them (and its module has them); the
# defaults are the modules' own.
SHARED = ("journal_dir", "journal_run", "mode")

# The per-concern sections of a call, in the order they apply, and the module each one runs.  A
# section takes its module's options (less the shared ones, which the call gives): AnsibleModule
# checks them as the section's sub-options before anything runs.
SECTIONS = (("sysctl", "sysctl_tuning"), ("nic", "nic_tuning"), ("irq", "irq_affinity"), ("qos", "roce_qos"),
            ("services", "service_state"), ("files", "managed_files"))


def section_spec(name: str) -> Dict[str, Any]:
    """Module ``name``'s options as a section's sub-options: a copy, without the call's shared options."""
    spec = copy.deepcopy(body(name).ARGUMENT_SPEC)
    for shared in SHARED:
        spec.pop(shared, None)
    return spec


ARGUMENT_SPEC = _spec.argument_spec(dict([
    ("steps", {"type": "list", "elements": "dict", "options": {
        "module": {"type": "str", "required": True, "choices": list(STEPS)},
        "args": {"type": "dict", "default": {}},
        "name": {"type": "str"},
    }}),
    ("journal_run", {"type": "str"}),
    ("sync", {"type": "dict", "options": {
        "inputs_digest": {"type": "str", "required": True},
        "scopes": {"type": "list", "elements": "str", "required": True},
        "profile_file": {"type": "path", "default": _status.PROFILE_FILE},
        "skip": {"type": "bool", "default": True},
    }}),
] + [(concern, {"type": "dict", "options": section_spec(module)}) for concern, module in SECTIONS]),
    _spec.MODE, _spec.JOURNAL_DIR, _spec.SUMMARY)
# steps or sections, not both; at least one of them (AnsibleModule's own checks)
MUTUALLY_EXCLUSIVE = [("steps", concern) for concern, _module in SECTIONS]
REQUIRED_ONE_OF = [["steps"] + [concern for concern, _module in SECTIONS]]


def steps_of(params: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The call's steps: its ``steps`` as given, or one step per section given, in SECTIONS order, each
    with its section's options as AnsibleModule validated them (``section``)."""
    if params.get("steps"):
        return params["steps"]
    return [{"module": module, "name": concern, "args": None, "section": params[concern]}
            for concern, module in SECTIONS if params.get(concern) is not None]


# What sync returns of the profile record.
RECORD_KEYS = ("name", "digest", "chain", "inputs_digest")


class StepFailed(BaseException):
    """A step called fail_json.  BaseException, like the SystemExit fail_json raises in a module of
    its own, so no ``except Exception`` in a step's code catches it."""

    def __init__(self, msg: str, result: Dict[str, Any]) -> None:
        BaseException.__init__(self, msg)
        self.msg = msg
        self.result = result


class StepModule(object):
    """What a module body sees of its AnsibleModule: its own validated params, the call's diff mode and
    check mode (always on while the call plans), warnings (named after the step; held back while the
    call plans for a real run, which warns them again), a fail_json that ends the step, not the process,
    and the call's Transaction (its engine joins it).  Anything else (run_command, get_bin_path, ...)
    is the real module's."""

    def __init__(self, module: Any, label: str, params: Dict[str, Any], planning: bool = False,
                 transaction: Any = None) -> None:
        self._module = module
        self._label = label
        self.params = params
        self.check_mode = module.check_mode or planning
        self._diff = module._diff
        self.transaction = transaction
        self.held: Optional[List[str]] = [] if planning and not module.check_mode else None

    def warn(self, msg: str) -> None:
        msg = "%s: %s" % (self._label, msg)
        if self.held is not None:
            self.held.append(msg)
        else:
            self._module.warn(msg)

    def fail_json(self, msg: str, **kwargs: Any) -> None:
        raise StepFailed(msg, kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)


def label_of(index: int, step: Dict[str, Any]) -> str:
    if step.get("section") is not None:
        return step["name"]
    return "steps[%d] %s" % (index, step["name"] or step["module"])


def validate(params: Dict[str, Any], steps: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Every step's args against its module's spec (plus the call's shared options): the validated
    params per step, or ValueError naming each wrong step and what is wrong."""
    out, errors = [], []
    for index, step in enumerate(steps):
        found = body(step["module"])
        if step.get("section") is not None:   # validated as the call's sub-options: add the call's shared options
            args = dict(step["section"])
            for name in SHARED:
                if name in found.ARGUMENT_SPEC:
                    args[name] = params[name] if params[name] is not None else found.ARGUMENT_SPEC[name].get("default")
            out.append(args)
            continue
        args = dict(step["args"] or {})
        for name in SHARED:
            if params[name] is not None and name in found.ARGUMENT_SPEC and name not in args:
                args[name] = params[name]
        # a copy: the validator writes into the spec it is given, and AnsibleModule would validate once
        result = ArgumentSpecValidator(copy.deepcopy(found.ARGUMENT_SPEC)).validate(args)
        if result.error_messages:
            errors.append("%s (hpcnet.rdma.%s): %s" % (label_of(index, step), step["module"],
                                                       "; ".join(result.error_messages)))
        out.append(result.validated_parameters)
    if errors:
        raise ValueError("nothing was changed: " + " | ".join(errors))
    return out


def sync_state(module: Any, host: Host) -> Dict[str, Any]:
    """Read only, before any step: is the node exactly as a tune with these inputs leaves it?"""
    params = module.params
    try:
        journal = _journal.Journal(host, params["journal_dir"])
        journal.load()
        out = _status.in_sync(host, journal, params["sync"]["profile_file"], params["sync"]["inputs_digest"],
                              params["sync"]["scopes"])
    except (_journal_schema.JournalError, HostError) as e:
        module.fail_json(msg="sync: %s" % e)
    out["interrupted"] = [{"id": g["id"], "module": g.get("module"), "time": g.get("time")}
                          for g in journal.interrupted()]
    # the record's identity (which profile, from which inputs), not the values it lists: those are the
    # journal's targets the check just compared
    if isinstance(out.get("record"), dict):
        out["record"] = dict((k, out["record"][k]) for k in RECORD_KEYS if k in out["record"])
    return out


def run(module: Any, host: Host) -> Dict[str, Any]:
    params = module.params
    steps = steps_of(params)
    if not steps:
        module.fail_json(msg="steps: at least one step is required (a module of %s and its args), or a section (%s)"
                         % (", ".join(STEPS), ", ".join(concern for concern, _module in SECTIONS)))
    sync = sync_state(module, host) if params["sync"] else None
    if sync is not None and sync["in_sync"] and params["sync"]["skip"]:
        out: Dict[str, Any] = {"changed": False, "results": [], "previous": [], "sync": sync, "skipped_steps": True}
        if module._diff:
            out["diff"] = []
        return out
    try:
        validated = validate(params, steps)
    except ValueError as e:
        module.fail_json(msg=str(e))
    planned = plan(module, host, steps, validated)
    results = planned if module.check_mode else apply(module, host, steps, validated)
    out = {
        "changed": any(r.get("changed") for r in results),
        "results": results,
        "previous": [r.get("previous") for r in results],
        "skipped_steps": False,
    }
    if sync is not None:
        out["sync"] = sync
    if module._diff:
        diffs: List[Any] = []
        for r in results:
            d = r.get("diff")
            diffs.extend(d if isinstance(d, list) else [d] if d else [])
        out["diff"] = diffs
    return out


def plan(module: Any, host: Host, steps: List[Dict[str, Any]], validated: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Every step's validation, read and plan (its module's run in check mode: nothing written), before
    any step changes anything; a step that fails fails the call saying nothing was changed.  The
    results are the check-mode results of the steps."""
    results: List[Dict[str, Any]] = []
    held: List[str] = []
    for index, (step, step_params) in enumerate(zip(steps, validated)):
        label = label_of(index, step)
        step_module = StepModule(module, label, step_params, planning=True)
        try:
            result = body(step["module"]).run(step_module, host)
        except StepFailed as e:
            for msg in held + (step_module.held or []):   # what the plan noted so far explains it
                module.warn(msg)
            module.fail_json(msg="nothing was changed: %s (hpcnet.rdma.%s): %s" % (label, step["module"], e.msg),
                             changed=False, results=[],
                             failed_step=dict(e.result, index=index, module=step["module"], name=step["name"]))
        held.extend(step_module.held or [])
        results.append(dict(result, module=step["module"], name=step["name"]))
    return results


def apply(module: Any, host: Host, steps: List[Dict[str, Any]], validated: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The steps for real, in order, in one Transaction under one journal lock: a step that fails
    reverts the steps this call applied before it, and the call fails saying so."""
    params = module.params
    transaction = _transaction.Transaction(host, params["journal_dir"])
    results: List[Dict[str, Any]] = []
    failed = True
    try:
        for index, (step, step_params) in enumerate(zip(steps, validated)):
            label = label_of(index, step)
            transaction.step = label
            try:
                result = body(step["module"]).run(StepModule(module, label, step_params, transaction=transaction), host)
            except StepFailed as e:
                msg, stays = reverted(transaction)
                module.fail_json(msg="%s (hpcnet.rdma.%s): %s%s" % (label, step["module"], e.msg, msg),
                                 changed=bool(stays) or "REVERT FAILED" in e.msg, results=results, still_applied=stays,
                                 failed_step=dict(e.result, index=index, module=step["module"], name=step["name"]))
            except Exception:
                try:   # a fault in the code, not in the node: the node is put back all the same
                    reverted(transaction)
                finally:
                    raise
            results.append(dict(result, module=step["module"], name=step["name"]))
        failed = False
    finally:   # the journal lock the first step that needed it took, held through every step (and a revert)
        transaction.release(failed)
    return results


def reverted(transaction: Any) -> Tuple[str, List[Dict[str, str]]]:
    """Revert what the call's earlier steps applied: the sentence the failure message ends with, and
    the keys that stay applied."""
    done, stays = transaction.revert()
    steps = ["%s (%d key(s))" % (r["label"], len(r["keys"])) for r in done]
    if not done:
        return "", []
    if not stays:
        return "; so the earlier steps of this call were reverted: %s - the node is as the call found it" \
            % ", ".join(steps), []
    return ("; the earlier steps of this call were reverted (%s), but REVERT FAILED for %s - these keys stay "
            "applied and the journal keeps their originals: run tuning_state rollback to recover them"
            % (", ".join(steps), "; ".join("%s (%s)" % (s["key"], s["reason"]) for s in stays))), stays
