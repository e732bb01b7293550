# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_rdmaplan's pure parts as tables: input and what was read -> the plan and results of rdma_stack."""
from __future__ import annotations

from typing import Any, Dict, List

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.stack import _config as _stack_config
from ansible_collections.hpcnet.rdma.plugins.module_utils.stack import _plan as _rdmaplan

R = "6.1.0-28-amd64"


def norm(**kw: Any) -> Dict[str, Any]:
    params: Dict[str, Any] = {"modules": [], "soft_roce": [], "memlock": None, "device_access": None,
                              "netns_mode": None}
    params.update(kw)
    return _rdmaplan.validate(params)


def node(**kw: Any) -> Dict[str, Any]:
    """What observe reads, for a node where nothing was set yet (the persistent files absent)."""
    out: Dict[str, Any] = {"files": {}, "kmods": {}, "rxe": {}, "netns": None, "devnodes": {}, "gid": None,
                           "memlock_gid": None, "load_order": [], "tree": {"release": R}, "tree_note": None,
                           "loaded": [], "runtime_possible": True}
    out.update(kw)
    return out


def keys(n: Dict[str, Any], nd: Dict[str, Any], mode: str) -> List[Any]:
    """(key, before, after) of each runtime key; a file's key alone (its content is _rdma's)."""
    nd.setdefault("wanted_files", _stack_config.planned_files(n, "/usr/bin/rdma"))
    planned = _rdmaplan.plan(n, nd, mode)
    return [c.key if c.key.startswith("file:") else (c.key, c.before, c.after) for c in planned["plan"]]


# --------------------------------------------------------------------------- input
@pytest.mark.parametrize("kw, message", [
    ({}, r"^nothing to do: give modules, soft_roce, memlock, device_access or netns_mode$"),
    ({"modules": ["ib uverbs"]}, r"^modules: 'ib uverbs' is not a kernel module name"),
    ({"device_access": {"group": "rdma", "mode": "0666"}}, r"^device_access.mode: 0666 gives access to every user"),
])
def test_validate_refuses(kw, message):
    with pytest.raises(ValueError, match=message):
        norm(**kw)


def test_validate_soft_roce_needs_its_module():
    assert norm(soft_roce=[{"netdev": "eth0"}])["modules"] == ["rdma_rxe"]


@pytest.mark.parametrize("kw, mode, in_container, parts", [
    ({"modules": ["ib_uverbs"]}, "runtime", True, ["kernel_modules"]),
    ({"soft_roce": [{"netdev": "eth0"}], "netns_mode": "exclusive"}, "both", True,
     ["kernel_modules", "soft_roce", "netns_mode"]),
    ({"modules": ["ib_uverbs"]}, "persist", True, []),                  # files only: possible anywhere
    ({"modules": ["ib_uverbs"]}, "both", False, []),
    ({"memlock": {"group": "rdma"}}, "both", True, []),                  # no kernel part
])
def test_not_possible(kw, mode, in_container, parts):
    found = _rdmaplan.not_possible(norm(**kw), mode, in_container, R)
    assert [p["part"] for p in found] == parts
    assert all("not possible in a container: it shares the host's kernel (%s)" % R in p["reason"] for p in found)


def test_not_possible_message():
    found = _rdmaplan.not_possible(norm(soft_roce=[{"netdev": "eth0"}]), "both", True, R)
    assert _rdmaplan.not_possible_message(found).startswith(
        "kernel_modules, soft_roce: not possible in a container: it shares the host's kernel (%s)" % R)
    assert _rdmaplan.not_possible_message(found).endswith(
        "(on_not_possible: warn writes the boot-time files and reports this)")


# --------------------------------------------------------------------------- which kernel's tree
@pytest.mark.parametrize("release, kernels, mode, in_container, expected", [
    ("6.9", {"6.9": True}, "both", False, ("6.9", None)),
    (None, {R: True, "6.9": True}, "both", False, (R, None)),
    (None, {"6.9": False, "6.10": True}, "persist", False,
     ("6.10", "module names were checked against the installed kernel 6.10 (the running kernel %s has no modules "
              "tree here)" % R)),
    (None, {"6.10": True}, "runtime", True, ("6.10", "module names were checked against the installed kernel 6.10 "
                                                     "(the running kernel %s has no modules tree here)" % R)),
    (None, {}, "persist", False, (None, "module names were not checked: no kernel modules tree here (the running "
                                        "kernel %s has no /lib/modules/%s)" % (R, R))),
    (None, {R: False}, "both", True, (None, "module names were not checked: no kernel modules tree here (the "
                                            "running kernel %s has no /lib/modules/%s)" % (R, R))),
])
def test_choose_tree(release, kernels, mode, in_container, expected):
    assert _rdmaplan.choose_tree(release, R, kernels, mode, in_container) == expected


@pytest.mark.parametrize("release, kernels, mode, message", [
    ("6.9", {R: True, "junk": False}, "persist",
     r"^kernel_release: /lib/modules/6.9/modules.dep does not exist \(installed kernels: %s, junk\)$" % R),
    ("6.9", {}, "both", r"\(installed kernels: none\)$"),
    (None, {"6.10": True}, "both", r"^modules: the running kernel %s has no /lib/modules/%s/modules.dep: install" % (R, R)),
    (None, {R: False}, "runtime", r"^modules: the running kernel %s has no" % R),
])
def test_choose_tree_refuses(release, kernels, mode, message):
    with pytest.raises(ValueError, match=message):
        _rdmaplan.choose_tree(release, R, kernels, mode, False)


# --------------------------------------------------------------------------- the plan
UVERBS = norm(modules=["ib_uverbs"])
LOADED = {"load_order": ["ib_core", "ib_uverbs"], "kmods": {"ib_core": "loaded", "ib_uverbs": "absent"}}
NETNS = norm(netns_mode="exclusive")
RXE = norm(soft_roce=[{"netdev": "eth0", "name": "rxe0"}])
ACCESS = norm(device_access={"group": "rdma", "mode": "0660", "devices": ["uverbs"]})
DEV = "/dev/infiniband/uverbs0"


@pytest.mark.parametrize("n, nd, mode, expected", [
    # runtime: what is not loaded yet, in dependency order (ib_core is already there)
    (UVERBS, node(**LOADED), "runtime", [("kmod:ib_uverbs", "absent", "loaded")]),
    # a built-in module is never planned
    (UVERBS, node(load_order=["ib_core", "ib_uverbs"], kmods={"ib_core": "builtin", "ib_uverbs": "builtin"}),
     "runtime", []),
    # persist: only the file that loads them at boot
    (UVERBS, node(**LOADED), "persist", ["file:" + _stack_config.MODULES_LOAD]),
    # both: files first (modprobe.d must be in place before ib_core loads), then the runtime keys
    (UVERBS, node(**LOADED), "both", ["file:" + _stack_config.MODULES_LOAD, ("kmod:ib_uverbs", "absent", "loaded")]),
    # in a container: the files only, whatever the mode
    (UVERBS, node(runtime_possible=False, **LOADED), "both", ["file:" + _stack_config.MODULES_LOAD]),
    (NETNS, node(netns="shared"), "both", ["file:" + _stack_config.MODPROBE_CONF, ("rdma:netns_mode", "shared", "exclusive")]),
    (NETNS, node(netns="exclusive"), "runtime", []),
    (RXE, node(load_order=["rdma_rxe"], kmods={"rdma_rxe": "loaded"}, rxe={"rxe0": None}), "runtime",
     [("rxe:rxe0", None, {"netdev": "eth0"})]),
    (RXE, node(load_order=["rdma_rxe"], kmods={"rdma_rxe": "loaded"}), "persist",
     ["file:" + _stack_config.MODULES_LOAD, "file:" + _stack_config.RXE_UNIT, "file:" + _stack_config.RXE_LINK]),
    # device nodes get the group and mode only once the group exists
    (ACCESS, node(gid=None, devnodes={DEV: {"gid": 0, "mode": "0600"}}), "runtime", []),
    (ACCESS, node(gid=44, devnodes={DEV: {"gid": 0, "mode": "0600"}}), "runtime",
     [("devnode:" + DEV, {"gid": 0, "mode": "0600"}, {"gid": 44, "mode": "0660"})]),
    (ACCESS, node(gid=44, devnodes={DEV: {"gid": 44, "mode": "0660"}}), "both", ["file:" + _stack_config.UDEV_RULE]),
])
def test_plan(n, nd, mode, expected):
    assert keys(n, nd, mode) == expected


@pytest.mark.parametrize("n, nd, notes", [
    (UVERBS, node(tree_note="module names were not checked: ..."), ["module names were not checked: ..."]),
    (ACCESS, node(gid=None), ["group rdma does not exist (yet): the udev rule and limits apply once it does; "
                              "existing device nodes were left as they are"]),
    (ACCESS, node(gid=44), []),
    (norm(memlock={"group": "hpc"}), node(memlock_gid=None),
     ["group hpc does not exist (yet): the memlock limit applies to its members once it does"]),
    (norm(memlock={"group": "hpc"}), node(memlock_gid=1000), []),
])
def test_plan_notes(n, nd, notes):
    nd["wanted_files"] = _stack_config.planned_files(n, "rdma")
    assert _rdmaplan.plan(n, nd, "both")["notes"] == notes


@pytest.mark.parametrize("nd, release, modules", [
    (node(**LOADED), R, {"ib_core": "loaded", "ib_uverbs": "absent"}),
    (node(runtime_possible=False, **LOADED), R, {}),       # nothing was read: nothing to report
    (node(tree=None), None, {}),
])
def test_plan_reports_the_kernel_and_module_states(nd, release, modules):
    nd["wanted_files"] = []
    planned = _rdmaplan.plan(UVERBS, nd, "both")
    assert (planned["kernel_release"], planned["modules"]) == (release, modules)


# --------------------------------------------------------------------------- after the apply
def result(*changed: str, refused: Any = (), current: Any = None) -> Dict[str, Any]:
    return {"changes": [{"key": k, "before": "absent", "after": "loaded"} for k in changed],
            "refused": [{"key": k, "reason": "busy"} for k in refused], "current": dict(current or {}),
            "previous": {}, "notes": [], "reboot_required": False}


@pytest.mark.parametrize("res, nd, expected", [
    (result("kmod:ib_uverbs"), node(), True),
    (result("rxe:rxe0"), node(), True),
    (result("file:" + _stack_config.MODULES_LOAD), node(), False),
    (result("kmod:ib_uverbs"), node(loaded=None), False),        # nothing loaded at runtime here
])
def test_may_load_more(res, nd, expected):
    assert _rdmaplan.may_load_more(res, nd) is expected


@pytest.mark.parametrize("current, before, now, new", [
    ({"kmod:rdma_rxe": "loaded"}, ["ib_core"], ["ib_core", "rdma_rxe", "ib_iser", "rpcrdma"], ["ib_iser", "rpcrdma"]),
    ({"kmod:rdma_rxe": "loaded"}, ["ib_core", "ib_iser"], ["ib_core", "rdma_rxe", "ib_iser"], []),
    ({}, [], [], []),
])
def test_new_modules(current, before, now, new):
    assert _rdmaplan.new_modules(result(current=current), before, now) == new


def test_add_consequences_folds_the_second_generation_in():
    res = result("kmod:rdma_rxe", current={"kmod:rdma_rxe": "loaded"})
    follow = {"changes": [{"key": "kmod:ib_iser", "before": "absent", "after": "loaded"}],
              "current": {"kmod:ib_iser": "loaded"}}
    _rdmaplan.add_consequences(res, ["ib_iser"], follow)
    assert [c["key"] for c in res["changes"]] == ["kmod:rdma_rxe", "kmod:ib_iser"]
    assert res["current"]["kmod:ib_iser"] == "loaded" and res["previous"] == {"kmod:ib_iser": "absent"}
    assert res["loaded_as_a_consequence"] == ["ib_iser"] and "load ib_iser too" in res["notes"][0]
    quiet = result()
    _rdmaplan.add_consequences(quiet, [], {})
    assert quiet["loaded_as_a_consequence"] == [] and quiet["notes"] == []


@pytest.mark.parametrize("res, reboot, notes", [
    (result(refused=["rdma:netns_mode"]), True, []),
    (result("file:" + _stack_config.SYSTEMD_MANAGER_DROPIN), True, []),
    (result("file:" + _stack_config.LIMITS_CONF), False,
     ["the memlock limit applies to new login sessions of the group's members"]),
    (result("kmod:ib_uverbs"), False, []),
])
def test_outcome(res, reboot, notes):
    _rdmaplan.outcome(res)
    assert (res["reboot_required"], res["notes"]) == (reboot, notes)
