# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Plan rdma_stack: what the module wires between its parameters and the engine.

``validate`` (pure) → ``check_modules`` (the names against the kernel's modules tree, wherever
there is one) → ``not_possible`` (pure) → ``observe`` (reads the node) → ``plan`` (pure) →
the engine applies → ``consequences`` / ``outcome`` (what the apply made the system do, and what
it means for the user).  The keys are ``kmod:``, ``rxe:``, ``rdma:``, ``devnode:`` (see _rdma) and
``file:``, so one journal and one rollback cover all of it.
"""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _iproute
from ansible_collections.hpcnet.rdma.plugins.module_utils.stack import _domain as _rdma
from ansible_collections.hpcnet.rdma.plugins.module_utils.stack import _config as _stack_config
from ansible_collections.hpcnet.rdma.plugins.module_utils.node import _systemd
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Plan

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Optional, Tuple

MODULES_DIR = "/lib/modules"


# ---------------------------------------------------------------------- input (pure)
def validate(params: Dict[str, Any]) -> Dict[str, Any]:
    """The normalized request (_stack_config.normalize); ValueError names the field, the value and what is allowed."""
    norm = _stack_config.normalize(params)
    if not (norm["modules"] or norm["memlock"] or norm["device_access"] or norm["netns_mode"]):
        raise ValueError("nothing to do: give modules, soft_roce, memlock, device_access or netns_mode")
    return norm


def not_possible(norm: Dict[str, Any], mode: str, in_container: bool, running: str) -> List[Dict[str, str]]:
    """The kernel parts of the request this node cannot do now: a container shares the host's kernel."""
    if not (mode in ("runtime", "both") and (norm["modules"] or norm["netns_mode"]) and in_container):
        return []
    why = ("not possible in a container: it shares the host's kernel (%s) and cannot load modules, create "
           "RDMA links or change the RDMA netns mode" % running)
    return [{"part": part, "reason": why} for part, wanted in
            (("kernel_modules", norm["modules"]), ("soft_roce", norm["soft_roce"]),
             ("netns_mode", norm["netns_mode"])) if wanted]


def not_possible_message(parts: List[Dict[str, str]]) -> str:
    return "%s: %s (on_not_possible: warn writes the boot-time files and reports this)" \
        % (", ".join(n["part"] for n in parts), parts[0]["reason"])


def choose_tree(kernel_release: Optional[str], running: str, kernels: Dict[str, bool], mode: str,
                in_container: bool) -> Tuple[Optional[str], Optional[str]]:
    """The kernel whose modules tree validates module names, and a note when it is not the running
    one or there is none; ValueError when the module names must be checked and cannot be.

    ``kernels``: each entry of /lib/modules (in listing order) → whether it has a modules.dep."""
    if kernel_release:
        if not kernels.get(kernel_release):
            raise ValueError("kernel_release: /lib/modules/%s/modules.dep does not exist (installed kernels: %s)"
                             % (kernel_release, ", ".join(kernels) or "none"))
        return kernel_release, None
    if kernels.get(running):
        return running, None
    others = [r for r, has_dep in kernels.items() if has_dep]
    if others and (mode == "persist" or in_container):
        return others[-1], ("module names were checked against the installed kernel %s (the running kernel %s has "
                            "no modules tree here)" % (others[-1], running))
    if in_container or mode == "persist":
        return None, ("module names were not checked: no kernel modules tree here (the running kernel %s has no "
                      "/lib/modules/%s)" % (running, running))
    raise ValueError("modules: the running kernel %s has no /lib/modules/%s/modules.dep: install its modules "
                     "package (linux-modules/kernel-modules) before loading RDMA modules" % (running, running))


# ---------------------------------------------------------------------- observe (I/O)
def running_kernel(host: Host) -> str:
    return (host.read("/proc/sys/kernel/osrelease") or "").strip() or "unknown"


def check_modules(host: Host, norm: Dict[str, Any], mode: str, kernel_release: Optional[str], running: str,
                  in_container: bool) -> Dict[str, Any]:
    """The module names against the kernel's modules tree, wherever there is one — in a container
    and in persist mode too, before what the node cannot do is reported: ``tree``, ``tree_note``
    and ``load_order``.  ValueError names a module the kernel lacks or a kernel_release that is not there."""
    out: Dict[str, Any] = {"tree": None, "tree_note": None, "load_order": []}
    if not norm["modules"]:
        return out
    kernels = dict((r, host.exists("%s/%s/modules.dep" % (MODULES_DIR, r))) for r in host.listdir(MODULES_DIR))
    release, out["tree_note"] = choose_tree(kernel_release, running, kernels, mode, in_container)
    tree = _rdma.kernel_tree(host, release) if release else None
    out["tree"] = tree
    if tree is not None:
        unknown = _rdma.unknown_modules(tree, norm["modules"])
        if unknown:
            raise ValueError("modules: kernel %s has no module %s (not in /lib/modules/%s/modules.dep or "
                             "modules.builtin)" % (tree["release"], ", ".join(repr(u) for u in unknown),
                                                   tree["release"]))
        out["load_order"] = _rdma.closure(tree, norm["modules"])
    return out


def observe(host: Host, norm: Dict[str, Any], mode: str, kernel_release: Optional[str], running: str,
            in_container: bool, kernel: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Everything :func:`plan` needs, read from the node.  Raises ValueError when the request does
    not fit this node (a module its kernel lacks, a soft-RoCE netdev that does not exist).
    ``kernel``: what :func:`check_modules` found, when the caller checked the names already."""
    node: Dict[str, Any] = {"files": {}, "kmods": {}, "rxe": {}, "netns": None, "devnodes": {}, "gid": None,
                            "memlock_gid": None, "loaded": None,
                            "runtime_possible": mode in ("runtime", "both") and not in_container}
    node.update(kernel if kernel is not None
                else check_modules(host, norm, mode, kernel_release, running, in_container))
    if node["runtime_possible"]:
        node["loaded"] = _rdma.loaded_modules(host)
        for name in node["load_order"]:
            node["kmods"][name] = _rdma.KMOD.read_value(host, name)
        missing = [r["netdev"] for r in norm["soft_roce"] if not host.exists("/sys/class/net/" + r["netdev"])]
        if missing:
            raise ValueError("soft_roce: no interface %s on this node (interfaces: %s)"
                             % (", ".join(missing), ", ".join(_iproute.interfaces(host))))
        for link in norm["soft_roce"]:
            node["rxe"][link["name"]] = _rdma.RXE.read_value(host, link["name"])
        node["netns"] = _rdma.RDMA_SYSTEM.read_value(host, "netns_mode")
    access = norm["device_access"]
    if access:
        node["gid"] = _rdma.group_gid(host, access["group"])
        for path in _rdma.device_nodes(host, access["devices"]):
            node["devnodes"][path] = host.node_perms(path)
    if norm["memlock"]:
        node["memlock_gid"] = _rdma.group_gid(host, norm["memlock"]["group"])
    rdma_bin = (host.which("rdma") or "/usr/bin/rdma") if norm["soft_roce"] else "rdma"
    if norm["soft_roce"] and mode != "persist":
        host.bin("rdma")   # needed now: fails naming the package that provides it
    node["wanted_files"] = _stack_config.planned_files(norm, rdma_bin)
    for path, _wanted in node["wanted_files"]:
        node["files"][path] = host.file_state(path)
    return node


# ---------------------------------------------------------------------- plan (pure)
def plan(norm: Dict[str, Any], node: Dict[str, Any], mode: str) -> Dict[str, Any]:
    """The plan and ``previous`` (_stack_config.plan) and what the module returns besides them:
    ``notes``, ``kernel_release``, ``modules`` (state of each module to load, before)."""
    notes = [node["tree_note"]] if node["tree_note"] else []
    access = norm["device_access"]
    if access and node["gid"] is None:
        notes.append("group %s does not exist (yet): the udev rule and limits apply once it does; existing device "
                     "nodes were left as they are" % access["group"])
    if norm["memlock"] and node["memlock_gid"] is None:
        notes.append("group %s does not exist (yet): the memlock limit applies to its members once it does"
                     % norm["memlock"]["group"])
    out = _stack_config.plan(norm, node, mode)
    tree = node["tree"]
    return {"plan": out["plan"], "previous": out["previous"], "notes": notes,
            "kernel_release": tree["release"] if tree is not None else None,
            "modules": dict(node["kmods"]) if node["runtime_possible"] else {}}


# ---------------------------------------------------------------------- after the apply
def may_load_more(result: Dict[str, Any], node: Dict[str, Any]) -> bool:
    """Whether the apply loaded modules or created RDMA links, which makes udev load more modules."""
    return node.get("loaded") is not None and any(c["key"].startswith(("kmod:", "rxe:"))
                                                  for c in result.get("changes", []))


def new_modules(result: Dict[str, Any], before: List[str], now: List[str]) -> List[str]:
    """Modules loaded now that were neither loaded before nor planned by this call (pure)."""
    planned = set(k[5:] for k in result["current"] if k.startswith("kmod:"))
    return [m for m in now if m not in before and m not in planned]


def consequences(host: Host, node: Dict[str, Any], result: Dict[str, Any]) -> Tuple[List[str], Plan]:
    """The modules that loaded because of this call without being planned (rdma-core's udev rules
    load ULPs such as ib_iser and rpcrdma when an RDMA device appears) and their plan, to journal
    as a second generation so rollback unloads them too and the modules they hold are not left in use."""
    _rdma.settle(host)
    new = new_modules(result, node["loaded"], _rdma.loaded_modules(host))
    return new, _rdma.consequence_plan(node["tree"], new)


def add_consequences(result: Dict[str, Any], new: List[str], follow: Dict[str, Any]) -> None:
    """Fold the second generation's result into the call's (pure)."""
    result["loaded_as_a_consequence"] = new
    if not new:
        return
    result["changes"] += follow.get("changes", [])
    result["current"].update(follow.get("current", {}))
    result["previous"].update(dict((c["key"], c["before"]) for c in follow.get("changes", [])))
    result["notes"].append("loading the modules / creating the devices made the system load %s too (rdma-core's "
                           "udev rules load ULP modules for new RDMA devices); they are journaled, so rollback "
                           "unloads them" % ", ".join(new))


def outcome(result: Dict[str, Any]) -> None:
    """``reboot_required`` and the notes that follow from what changed or was refused (pure)."""
    keys = set(c["key"] for c in result.get("changes", []))
    refused = set(r["key"] for r in result.get("refused", []))
    if "rdma:netns_mode" in refused or "file:" + _stack_config.SYSTEMD_MANAGER_DROPIN in keys:
        result["reboot_required"] = True
    if "file:" + _stack_config.LIMITS_CONF in keys:
        result["notes"].append("the memlock limit applies to new login sessions of the group's members")


def reapply_udev_rule(host: Host, result: Dict[str, Any]) -> None:
    """After the access rule changed, make udev apply it to the device nodes that already exist."""
    keys = set(c["key"] for c in result.get("changes", []))
    if "file:" + _stack_config.UDEV_RULE not in keys or not host.exists("/run/udev/control"):
        return
    try:
        _systemd.UDEVADM.call(host, "reload")
        _systemd.UDEVADM.call(host, "trigger_rdma_subsystems")
        _systemd.UDEVADM.call(host, "trigger_sysname", sysname="rdma_cm")
        _systemd.UDEVADM.call(host, "settle", timeout=10)
    except HostError as e:
        result["notes"].append("udev did not re-apply the rule to existing devices: %s" % e)


def device_nodes(host: Host, norm: Dict[str, Any]) -> Dict[str, Any]:
    """Owner group and mode of each RDMA device node now (what ``device_access`` manages)."""
    if not norm["device_access"]:
        return {}
    return dict((p, host.node_perms(p)) for p in _rdma.device_nodes(host, norm["device_access"]["devices"]))
