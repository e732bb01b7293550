#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: rdma_stack
short_description: RDMA kernel modules, soft-RoCE, locked-memory limits, device access and netns mode
version_added: 0.1.0
author:
  - hpcnet.rdma contributors (@hpcnet)
description:
  - B(Kernel modules) (O(modules), for example C(ib_umad), C(rdma_ucm)) are loaded now with
    C(modprobe), one module at a time with everything modprobe would pull in (modules.dep and
    soft dependencies), and at boot through C(/etc/modules-load.d/hpcnet-rdma.conf). Rollback
    unloads exactly the modules this collection loaded, newest first, with C(rmmod) of that one
    module; a module in use is left loaded and named in RV(refused).
  - B(Soft-RoCE) (O(soft_roce)) for labs and clouds without RDMA NICs loads C(rdma_rxe), runs
    C(rdma link add NAME type rxe netdev IF) and installs a oneshot boot unit that re-creates the
    links.
  - B(Locked memory) (O(memlock)) for RDMA users is scoped to a group in
    C(/etc/security/limits.d/90-hpcnet-rdma.conf) (C(@group - memlock unlimited)) instead of
    C(* unlimited), plus a systemd C(DefaultLimitMEMLOCK) drop-in or per-service drop-ins for
    daemons (PAM limits do not apply to services).
  - B(Device access) (O(device_access)) gives the C(/dev/infiniband) nodes a group and a group-only
    mode through a udev rule, and sets existing nodes now.
  - B(Netns mode) (O(netns_mode)) of the RDMA subsystem is set now with C(rdma system set netns)
    and persisted as C(options ib_core netns_mode=) in C(/etc/modprobe.d/hpcnet-rdma.conf). The
    kernel refuses a change while other network namespaces exist; that is a named RV(refused)
    result and RV(reboot_required) is true.
  - Before anything changes, every module must exist in the kernel's modules tree
    (C(/lib/modules/RELEASE/modules.dep) or C(modules.builtin)) and every soft-RoCE netdev must
    exist; otherwise the task fails naming it.
  - Inside a container (which shares the host's kernel) loading modules, creating soft-RoCE links
    and changing the netns mode are not possible; they are named in RV(not_possible) (fail, or
    O(on_not_possible=warn)), the persistent files are still written.
options:
  modules:
    description: Kernel modules to load now and at boot.
    type: list
    elements: str
    default: []
  soft_roce:
    description: Soft-RoCE devices, each on an Ethernet interface. Adds C(rdma_rxe) to O(modules).
    type: list
    elements: dict
    default: []
    suboptions:
      netdev:
        description: The Ethernet interface carrying RoCE.
        type: str
        required: true
      name:
        description: RDMA device name; C(rxeN) by position when omitted.
        type: str
  memlock:
    description: Locked-memory limit for the members of one group.
    type: dict
    suboptions:
      group:
        description: Group whose members get the limit (C(@group) in limits.d).
        type: str
        required: true
      limit:
        description: C(unlimited), or a size in KiB.
        type: str
        default: unlimited
      systemd:
        description:
          - C(default) also sets C(DefaultLimitMEMLOCK) for every systemd service (a manager drop-in,
            effective after C(systemctl daemon-reexec) or a reboot); C(services) sets C(LimitMEMLOCK)
            only for O(memlock.services); C(none) leaves systemd alone.
        type: str
        choices: [default, services, none]
        default: default
      services:
        description: Services that get a C(LimitMEMLOCK) drop-in (for example C(slurmd.service)).
        type: list
        elements: str
        default: []
  device_access:
    description: Group and mode of the RDMA device nodes.
    type: dict
    suboptions:
      group:
        description: Group that may use the devices (Debian's libibverbs1 creates C(rdma)).
        type: str
        required: true
      mode:
        description: Octal mode with no access for others, for example C(0660).
        type: str
        default: "0660"
      devices:
        description: Which nodes; C(uverbs) (verbs), C(rdma_cm) (connection manager), C(umad) and
          C(issm) (management datagrams, subnet manager).
        type: list
        elements: str
        choices: [uverbs, rdma_cm, umad, issm]
        default: [uverbs, rdma_cm]
  netns_mode:
    description: RDMA subsystem network-namespace mode; C(exclusive) binds each RDMA device to one netns.
    type: str
    choices: [exclusive, shared]
  kernel_release:
    description:
      - Kernel whose modules tree validates O(modules). Defaults to the running kernel; in
        O(mode=persist) inside an image build, the image's only or newest C(/lib/modules) tree
        when the running kernel has none.
    type: str
  on_not_possible:
    description: What to do when a runtime part is not possible here (a container); C(warn) reports it in RV(not_possible).
    type: str
    choices: [fail, warn]
    default: fail
attributes:
  diff_mode:
    details: Shows each runtime value and every file.
extends_documentation_fragment:
  - hpcnet.rdma.attributes
  - hpcnet.rdma.journal
  - hpcnet.rdma.mode
"""

EXAMPLES = r"""
- name: Verbs, RDMA CM and MAD access, memlock for the rdma group, exclusive netns mode
  hpcnet.rdma.rdma_stack:
    modules: [ib_umad, ib_uverbs, rdma_ucm]
    memlock:
      group: rdma
      systemd: services
      services: [slurmd.service]
    device_access:
      group: rdma
    netns_mode: exclusive

- name: Soft-RoCE on the lab data link
  hpcnet.rdma.rdma_stack:
    soft_roce:
      - netdev: data0
        name: rxe0
"""

RETURN = r"""
changes:
  description: Every change planned (check mode) or made. Keys are C(kmod:NAME), C(rxe:NAME),
    C(rdma:netns_mode), C(devnode:PATH) and C(file:PATH).
  returned: always
  type: list
  elements: dict
  sample: [{"key": "kmod:ib_core", "before": "absent", "after": "loaded"}]
previous:
  description: Value of every managed key before this call.
  returned: always
  type: dict
current:
  description: Value of every managed key after this call, read back (predicted in check mode).
  returned: always
  type: dict
not_possible:
  description: Runtime parts that cannot be done here, each with the reason (a container).
  returned: always
  type: list
  elements: dict
  sample: [{"part": "kernel_modules", "reason": "not possible in a container: ..."}]
refused:
  description: Changes the kernel refused (nothing changed for them), with the reason.
  returned: always
  type: list
  elements: dict
modules:
  description: Every module of the load order (requested and pulled in) and its state before this call.
  returned: always
  type: dict
  sample: {"ib_core": "absent", "ib_umad": "absent"}
loaded_as_a_consequence:
  description:
    - Modules the system loaded during this call without being asked (rdma-core's udev rules load ULP
      modules such as C(ib_iser), C(rpcrdma) when an RDMA device appears). They are journaled in a second
      generation, so rollback unloads them first and the modules they use are not left in use.
  returned: always
  type: list
  elements: str
  sample: [sunrpc, rpcrdma, scsi_transport_iscsi, libiscsi, ib_iser]
kernel_release:
  description: The kernel whose modules tree was checked (null when none was available).
  returned: always
  type: str
device_nodes:
  description: C(/dev/infiniband) nodes with their group id and mode after this call.
  returned: always
  type: dict
reboot_required:
  description: True when a change only takes effect at the next boot (a refused netns mode, the systemd manager default).
  returned: always
  type: bool
notes:
  description: What takes effect later or was not verified, in words.
  returned: always
  type: list
  elements: str
generation:
  description: Journal generation recorded by this call.
  returned: when changed and not in check mode
  type: int
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpcnet.rdma.plugins.module_utils import _iproute, _rdma, _spec
from ansible_collections.hpcnet.rdma.plugins.module_utils._engine import Engine
from ansible_collections.hpcnet.rdma.plugins.module_utils._host import Host, HostError

ARGUMENT_SPEC = _spec.argument_spec(dict(
    modules=dict(type="list", elements="str", default=[]),
    soft_roce=dict(type="list", elements="dict", default=[], options=dict(
        netdev=dict(type="str", required=True),
        name=dict(type="str"),
    )),
    memlock=dict(type="dict", options=dict(
        group=dict(type="str", required=True),
        limit=dict(type="str", default="unlimited"),
        systemd=dict(type="str", choices=["default", "services", "none"], default="default"),
        services=dict(type="list", elements="str", default=[]),
    )),
    device_access=dict(type="dict", options=dict(
        group=dict(type="str", required=True),
        mode=dict(type="str", default="0660"),
        devices=dict(type="list", elements="str", choices=list(_rdma.DEVICES), default=["uverbs", "rdma_cm"]),
    )),
    netns_mode=dict(type="str", choices=["exclusive", "shared"]),
    kernel_release=dict(type="str"),
    on_not_possible=dict(type="str", choices=["fail", "warn"], default="fail"),
), _spec.MODE, _spec.JOURNAL_DIR)


def _tree(host: Host, params: dict, running: str, in_container: bool):
    """The modules tree that validates module names, and a note when none could."""
    if params["kernel_release"]:
        tree = _rdma.kernel_tree(host, params["kernel_release"])
        if tree is None:
            raise ValueError("kernel_release: /lib/modules/%s/modules.dep does not exist (installed kernels: %s)"
                             % (params["kernel_release"], ", ".join(host.listdir("/lib/modules")) or "none"))
        return tree, None
    tree = _rdma.kernel_tree(host, running)
    if tree is not None:
        return tree, None
    others = [r for r in host.listdir("/lib/modules") if host.exists("/lib/modules/%s/modules.dep" % r)]
    if others and (params["mode"] == "persist" or in_container):
        return _rdma.kernel_tree(host, others[-1]), (
            "module names were checked against the installed kernel %s (the running kernel %s has no modules "
            "tree here)" % (others[-1], running))
    if in_container or params["mode"] == "persist":
        return None, ("module names were not checked: no kernel modules tree here (the running kernel %s has no "
                      "/lib/modules/%s)" % (running, running))
    raise ValueError("modules: the running kernel %s has no /lib/modules/%s/modules.dep: install its modules "
                     "package (linux-modules/kernel-modules) before loading RDMA modules" % (running, running))


def _consequences(module, host: Host, engine: Engine, result: dict, seen: dict) -> None:
    """Journal the modules that loaded because of this call without being planned (rdma-core's udev
    rules load ULPs such as ib_iser and rpcrdma when an RDMA device appears), as a second generation,
    so rollback unloads them too and the modules they hold are not left in use."""
    _rdma.settle(host)
    planned = set(k[5:] for k in result["current"] if k.startswith("kmod:"))
    new = [m for m in _rdma.loaded_modules(host) if m not in seen["loaded"] and m not in planned]
    result["loaded_as_a_consequence"] = new
    if not new:
        return
    follow = engine.run("rdma_stack", lambda: (_rdma.consequence_plan(seen["tree"], new), {}), {})
    result["changes"] += follow.get("changes", [])
    result["current"].update(follow.get("current", {}))
    result["previous"].update(dict((c["key"], c["before"]) for c in follow.get("changes", [])))
    result["notes"].append("loading the modules / creating the devices made the system load %s too (rdma-core's "
                           "udev rules load ULP modules for new RDMA devices); they are journaled, so rollback "
                           "unloads them" % ", ".join(new))


def run(module, host: Host) -> dict:
    params = module.params
    try:
        norm = _rdma.normalize(params)
    except ValueError as e:
        module.fail_json(msg=str(e))
    if not (norm["modules"] or norm["memlock"] or norm["device_access"] or norm["netns_mode"]):
        module.fail_json(msg="nothing to do: give modules, soft_roce, memlock, device_access or netns_mode")
    mode = params["mode"]
    in_container = host.in_container()
    running = (host.read("/proc/sys/kernel/osrelease") or "").strip() or "unknown"
    extra = {"not_possible": [], "refused": [], "modules": {}, "kernel_release": None, "notes": [],
             "device_nodes": {}, "reboot_required": False, "loaded_as_a_consequence": []}
    runtime = mode in ("runtime", "both")
    kernel_parts = runtime and (norm["modules"] or norm["netns_mode"])
    if kernel_parts and in_container:
        why = ("not possible in a container: it shares the host's kernel (%s) and cannot load modules, create "
               "RDMA links or change the RDMA netns mode" % running)
        extra["not_possible"] = [{"part": part, "reason": why} for part, wanted in
                                 (("kernel_modules", norm["modules"]), ("soft_roce", norm["soft_roce"]),
                                  ("netns_mode", norm["netns_mode"])) if wanted]
        if params["on_not_possible"] == "fail":
            module.fail_json(msg="%s: %s (on_not_possible: warn writes the boot-time files and reports this)"
                             % (", ".join(n["part"] for n in extra["not_possible"]), why), **extra)
    engine = Engine(module, host, params["journal_dir"], domains=(_rdma.DOMAINS,))
    seen = {"tree": None, "loaded": None}

    def build():
        node = {"files": {}, "kmods": {}, "rxe": {}, "netns": None, "devnodes": {}, "gid": None,
                "load_order": [], "runtime_possible": runtime and not in_container}
        tree, note = _tree(host, params, running, in_container) if norm["modules"] else (None, None)
        extra["notes"] = [note] if note else []
        if tree is not None:
            extra["kernel_release"] = tree["release"]
            unknown = _rdma.unknown_modules(tree, norm["modules"])
            if unknown:
                raise ValueError("modules: kernel %s has no module %s (not in /lib/modules/%s/modules.dep or "
                                 "modules.builtin)" % (tree["release"], ", ".join(repr(u) for u in unknown),
                                                       tree["release"]))
            node["load_order"] = _rdma.closure(tree, norm["modules"])
        seen["tree"] = tree
        if node["runtime_possible"]:
            seen["loaded"] = _rdma.loaded_modules(host)
            for name in node["load_order"]:
                node["kmods"][name] = _rdma.KMOD.read_value(host, name)
            extra["modules"] = dict(node["kmods"])
            missing = [r["netdev"] for r in norm["soft_roce"] if not host.exists("/sys/class/net/" + r["netdev"])]
            if missing:
                raise ValueError("soft_roce: no interface %s on this node (interfaces: %s)"
                                 % (", ".join(missing), ", ".join(_iproute.interfaces(host))))
            if norm["soft_roce"]:
                for link in norm["soft_roce"]:
                    node["rxe"][link["name"]] = _rdma.RXE.read_value(host, link["name"])
            node["netns"] = _rdma.RDMA_SYSTEM.read_value(host, "netns_mode")
        access = norm["device_access"]
        if access:
            node["gid"] = _rdma.group_gid(host, access["group"])
            if node["gid"] is None:
                extra["notes"].append("group %s does not exist (yet): the udev rule and limits apply once it does; "
                                      "existing device nodes were left as they are" % access["group"])
            for path in _rdma.device_nodes(host, access["devices"]):
                node["devnodes"][path] = host.node_perms(path)
        if norm["memlock"] and _rdma.group_gid(host, norm["memlock"]["group"]) is None:
            extra["notes"].append("group %s does not exist (yet): the memlock limit applies to its members once "
                                  "it does" % norm["memlock"]["group"])
        rdma_bin = (host.which("rdma") or "/usr/bin/rdma") if norm["soft_roce"] else "rdma"
        if norm["soft_roce"] and mode != "persist":
            host.bin("rdma")   # needed now: fails naming the package that provides it
        node["wanted_files"] = _rdma.planned_files(norm, rdma_bin)
        for path, _wanted in node["wanted_files"]:
            node["files"][path] = host.file_state(path)
        out = _rdma.plan(norm, node, mode)
        return out["plan"], out["previous"]

    result = engine.run("rdma_stack", build, extra)
    keys = set(c["key"] for c in result.get("changes", []))
    if not module.check_mode and seen["loaded"] is not None and any(k.startswith(("kmod:", "rxe:")) for k in keys):
        _consequences(module, host, engine, result, seen)
    refused = set(r["key"] for r in result.get("refused", []))
    if "rdma:netns_mode" in refused or "file:" + _rdma.SYSTEMD_MANAGER_DROPIN in keys:
        result["reboot_required"] = True
    if "file:" + _rdma.LIMITS_CONF in keys:
        result["notes"].append("the memlock limit applies to new login sessions of the group's members")
    if not module.check_mode and "file:" + _rdma.UDEV_RULE in keys and host.exists("/run/udev/control"):
        try:
            host.run_ok(["udevadm", "control", "--reload"])
            host.run_ok(["udevadm", "trigger", "--action=change", "--subsystem-match=infiniband_verbs",
                         "--subsystem-match=infiniband_mad"])
            host.run_ok(["udevadm", "trigger", "--action=change", "--sysname-match=rdma_cm"])
            host.run_ok(["udevadm", "settle", "--timeout=10"])
        except HostError as e:
            result["notes"].append("udev did not re-apply the rule to existing devices: %s" % e)
    if norm["device_access"]:
        result["device_nodes"] = dict((p, host.node_perms(p)) for p in
                                      _rdma.device_nodes(host, norm["device_access"]["devices"]))
    return result


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    result = run(module, Host.from_module(module))
    for item in result.get("not_possible", []):
        module.warn("%s: %s" % (item["part"], item["reason"]))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
