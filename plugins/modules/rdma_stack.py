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
    C(* unlimited), plus a C(LimitMEMLOCK) drop-in for each named daemon (PAM limits do not apply
    to services). A systemd-wide C(DefaultLimitMEMLOCK) is only written on request
    (O(memlock.systemd=global)) and warns, since it reaches every login.
  - B(Device access) (O(device_access)) gives the C(/dev/infiniband) nodes a group and a group-only
    mode through a udev rule, and sets existing nodes now.
  - B(Netns mode) (O(netns_mode)) of the RDMA subsystem is set now with C(rdma system set netns)
    and persisted as C(options ib_core netns_mode=) in C(/etc/modprobe.d/hpcnet-rdma.conf). The
    kernel refuses a change while other network namespaces exist; that is a named RV(refused)
    result and RV(reboot_required) is true.
  - Before anything changes, every module must exist in the kernel's modules tree
    (C(/lib/modules/RELEASE/modules.dep) or C(modules.builtin)) and every soft-RoCE netdev must
    exist; otherwise the task fails naming it. The input is checked first everywhere, module and
    interface names always, module names against a modules tree also in a container and in
    O(mode=persist) whenever one is there, before what the node cannot do is reported.
  - Inside a container (which shares the host's kernel) loading modules, creating soft-RoCE links
    and changing the netns mode are not possible; they are named in RV(not_possible) (fail, or
    O(on_unsupported=warn)), the persistent files are still written.
requirements:
  - kmod (C(modprobe), C(rmmod)), systemd (C(systemctl), C(udevadm)) and C(getent) on the node.
  - iproute2's C(rdma) for soft-RoCE links and the RDMA netns mode.
  - rdma-core (C(ibv_devinfo)) to read RDMA devices, when installed.
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
        description: The Ethernet interface carrying RoCE (an interface name, at most 15 characters; one
          soft-RoCE device per interface).
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
          - C(services) gives each of O(memlock.services) a C(LimitMEMLOCK) drop-in and no other
            service any limit (none named, none touched); C(none) leaves systemd alone.
          - C(global) also sets C(DefaultLimitMEMLOCK) for every systemd service (a manager drop-in in
            C(/etc/systemd/system.conf.d/), effective after C(systemctl daemon-reexec) or a reboot).
            sshd, getty and C(user@.service) pass it to every login session, so every user, not only
            the group, may then lock that much memory; it is an explicit opt-in and the module warns.
          - Naming a service that starts login sessions (C(ssh.service), C(getty@.service), C(user@.service))
            in O(memlock.services) warns for the same reason.
        type: str
        choices: [services, global, none]
        default: services
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
  on_unsupported:
    description:
      - What to do when a runtime part is not possible here (a container); C(warn) reports it in RV(not_possible).
      - The collection's one name for this switch (M(hpcnet.rdma.sysctl_tuning) and M(hpcnet.rdma.roce_qos)
        have it too); C(on_not_possible) is its old name, kept as an alias.
    aliases: [on_not_possible]
    type: str
    choices: [fail, warn]
    default: fail
attributes:
  diff_mode:
    details: Shows each runtime value and every file.
extends_documentation_fragment:
  - hpcnet.rdma.attributes
  - hpcnet.rdma.journal
  - hpcnet.rdma.run
  - hpcnet.rdma.mode
"""

EXAMPLES = r"""
- name: Verbs, RDMA CM and MAD access, memlock for the rdma group, exclusive netns mode
  hpcnet.rdma.rdma_stack:
    modules: [ib_umad, ib_uverbs, rdma_ucm]
    memlock:
      group: rdma
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
  description: True when a change only takes effect at the next boot (a refused netns mode, the systemd manager
    default of O(memlock.systemd=global)).
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

from ansible_collections.hpcnet.rdma.plugins.module_utils.stack import _domain as _rdma
from ansible_collections.hpcnet.rdma.plugins.module_utils.stack import _config as _stack_config
from ansible_collections.hpcnet.rdma.plugins.module_utils.stack import _plan as _rdmaplan
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _spec
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._engine import Engine
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host

ARGUMENT_SPEC = _spec.argument_spec(dict(
    modules=dict(type="list", elements="str", default=[]),
    soft_roce=dict(type="list", elements="dict", default=[], options=dict(
        netdev=dict(type="str", required=True),
        name=dict(type="str"),
    )),
    memlock=dict(type="dict", options=dict(
        group=dict(type="str", required=True),
        limit=dict(type="str", default="unlimited"),
        systemd=dict(type="str", choices=list(_stack_config.MEMLOCK_SYSTEMD), default="services"),
        services=dict(type="list", elements="str", default=[]),
    )),
    device_access=dict(type="dict", options=dict(
        group=dict(type="str", required=True),
        mode=dict(type="str", default="0660"),
        devices=dict(type="list", elements="str", choices=list(_stack_config.DEVICES), default=["uverbs", "rdma_cm"]),
    )),
    netns_mode=dict(type="str", choices=["exclusive", "shared"]),
    kernel_release=dict(type="str"),
    on_unsupported=dict(type="str", choices=["fail", "warn"], default="fail", aliases=["on_not_possible"]),
), _spec.MODE, _spec.JOURNAL_DIR, _spec.RUN)


def run(module, host: Host) -> dict:
    params = module.params
    mode = params["mode"]
    try:
        norm = _rdmaplan.validate(params)
    except ValueError as e:
        module.fail_json(msg=str(e))
    in_container = host.in_container()
    running = _rdmaplan.running_kernel(host)
    try:   # the module names first, wherever a modules tree is (a container, a bake), then what is not possible
        kernel = _rdmaplan.check_modules(host, norm, mode, params["kernel_release"], running, in_container)
    except ValueError as e:
        module.fail_json(msg=str(e))
    for warning in _stack_config.memlock_warnings(norm):
        module.warn(warning)
    extra = {"not_possible": [], "refused": [], "modules": {}, "kernel_release": None, "notes": [],
             "device_nodes": {}, "reboot_required": False, "loaded_as_a_consequence": []}
    extra["not_possible"] = _rdmaplan.not_possible(norm, mode, in_container, running)
    if extra["not_possible"] and params["on_unsupported"] == "fail":
        module.fail_json(msg=_rdmaplan.not_possible_message(extra["not_possible"]), **extra)
    engine = Engine(module, host, params["journal_dir"], domains=(_rdma.DOMAINS,))
    node = {}

    def build():
        node.clear()
        node.update(_rdmaplan.observe(host, norm, mode, params["kernel_release"], running, in_container, kernel))
        planned = _rdmaplan.plan(norm, node, mode)
        extra.update(notes=planned["notes"], kernel_release=planned["kernel_release"], modules=planned["modules"])
        return planned["plan"], planned["previous"]

    result = engine.run("rdma_stack", build, extra)
    if not module.check_mode and _rdmaplan.may_load_more(result, node):
        new, follow = _rdmaplan.consequences(host, node, result)
        # udev's consequences: a follow-up generation that releases nothing (Engine.run release=False)
        follow_result = engine.run("rdma_stack", lambda: (follow, {}), {}, release=False) if new else {}
        _rdmaplan.add_consequences(result, new, follow_result)
    _rdmaplan.outcome(result)
    if not module.check_mode:
        _rdmaplan.reapply_udev_rule(host, result)
    if norm["device_access"]:
        result["device_nodes"] = _rdmaplan.device_nodes(host, norm)
    return result


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    result = run(module, Host.from_module(module))
    for item in result.get("not_possible", []):
        module.warn("%s: %s" % (item["part"], item["reason"]))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
