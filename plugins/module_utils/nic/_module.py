# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The body of module hpcnet.rdma.nic_tuning: its argument spec and ``run(module, host)``.

The module calls it, and so does hpcnet.rdma.node_tuning, which runs several tuning modules in
one module call (one Python start, one payload, one connection round trip for all of them).
"""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _domain as _nic
from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _guard
from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _linkfile
from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _plan
from ansible_collections.hpcnet.rdma.plugins.module_utils.nic import _select
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _spec
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._engine import Engine
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Plan

# mtu, then one section per ethtool group with an option per knob of the table (_nic.KNOBS)
_SETTINGS = dict([("mtu", dict(type="int"))] + [
    (group, dict(type="dict", options=dict((k.field, dict(type=k.kind)) for k in _nic.KNOBS if k.group == group)))
    for group in _nic.GROUPS])

_MATCH = dict(
    match=dict(type="str", choices=list(_linkfile.MATCHES)),
    match_value=dict(type="str"),
)

ARGUMENT_SPEC = _spec.argument_spec(dict(
    interfaces=dict(type="list", elements="dict", required=True,
                    options=_spec.argument_spec(_spec.SELECTOR, _SETTINGS, _MATCH)),
    match=dict(type="str", choices=list(_linkfile.MATCHES), default="auto"),
    defaults=dict(type="dict", default={}, options=_SETTINGS),
    cap=dict(type="bool", default=False),
    allow_management_interface=dict(type="bool", default=False),
    management_address=dict(type="str"),
    management_connection=dict(type="str", choices=["network", "none"], default="network"),
    allow_low_mtu=dict(type="bool", default=False),
), _spec.MODE, _spec.JOURNAL_DIR, _spec.RUN)


def run(module, host: Host) -> dict:
    params = module.params
    if not params["interfaces"] and not params["release_scope"]:
        module.fail_json(msg="interfaces: at least one selection is required (or release_scope, to return what "
                             "earlier calls of that scope set to the originals)")
    engine = Engine(module, host, params["journal_dir"], domains=(_nic.DOMAINS,))
    extra = {"interfaces": {}, "capped": [], "unsupported": []}

    persist = params["mode"] in ("persist", "both")
    persist_only = params["mode"] == "persist"
    warned = set()

    def warn(msg):
        if msg not in warned:   # build runs twice (unlocked, then under the lock)
            warned.add(msg)
            module.warn(msg)

    def build():
        if not params["interfaces"]:   # release only (release_scope): the engine plans every earlier key back
            return Plan(), {}
        net = _nic.read_network(host)
        links = _nic.observe(host, net)
        absent = {} if persist_only else None
        chosen = _select.select(params["interfaces"], links, params["defaults"], absent)
        observed = {}
        for name, settings in chosen.items():
            observed[name] = dict(links[name])
            observed[name].update(_nic.observe_ethtool(host, name, _nic.groups_needed(settings)))
            if persist:
                observed[name].update(_nic.observe_identity(host, name, links[name].get("ifindex")))
        extra["unsupported"] = _select.drop_unsupported_defaults(chosen, observed)
        for u in extra["unsupported"]:
            warn("%s %s from defaults skipped: %s" % (u["interface"], u["setting"], u["reason"]))
        if persist:
            _nic.mark_shared_paths(host, observed, links)
        if persist_only:   # nothing changes at runtime: no connection to protect (and none to look for in a chroot)
            mgmt = _guard.ManagementPath(required=False)
            mgmt.notes.append("mode persist: no runtime change")
        else:
            mgmt = _guard.read_management_path(host, net, params["management_address"],
                                               params["management_connection"] == "network")
        planned = _plan.plan(chosen, observed, params["mode"], params["cap"], mgmt,
                             params["allow_management_interface"], _linkfile.FileStates(host), params["journal_dir"],
                             net=net, allow_low_mtu=params["allow_low_mtu"], absent=absent, match=params["match"])
        extra["capped"] = planned["capped"]
        extra["interfaces"] = dict((n, {"driver": observed[n].get("driver"),
                                        "selected_by": chosen[n]["selected_by"],
                                        "values": planned["desired"][n],
                                        "lowered_with_it": planned["dragged"].get(n, [])}) for n in chosen)
        for label in sorted(absent or {}):
            extra["interfaces"][label] = {"driver": None, "selected_by": absent[label]["selected_by"],
                                          "values": planned["desired"][label], "lowered_with_it": [],
                                          "present": False}
            warn("%s is not present here: its .link file is planned from the entry alone and its values are not "
                 "checked against a NIC; udev applies what the device accepts when it appears at boot" % label)
        extra["management"] = {"interfaces": mgmt.protected, "determined": mgmt.determined, "notes": mgmt.notes}
        for c in planned["capped"]:
            warn("%s %s capped from %d to the hardware maximum %d"
                 % (c["interface"], c["setting"], c["requested"], c["applied"]))
        for n in sorted(chosen) if persist else []:
            how = chosen[n].get("match", (params["match"], None))
            _lines, driver = _linkfile.match_lines(n, observed[n], *how, persist_only=persist_only)
            for msg in _linkfile.earlier_link_files(host, n, observed[n], _linkfile.link_file_path(n, driver)):
                warn(msg)
        return planned["plan"], planned["previous"]

    return engine.run("nic_tuning", build, extra)
