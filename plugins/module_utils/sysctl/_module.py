# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The body of module hpcnet.rdma.sysctl_tuning: its argument spec and ``run(module, host)``.

The module calls it, and so does hpcnet.rdma.node_tuning, which runs several tuning modules in
one module call (one Python start, one payload, one connection round trip for all of them).
"""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _spec
from ansible_collections.hpcnet.rdma.plugins.module_utils.sysctl import _domain as _sysctl
from ansible_collections.hpcnet.rdma.plugins.module_utils.sysctl import _keys as _sysctl_keys
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._engine import Engine
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Plan


ARGUMENT_SPEC = _spec.argument_spec(dict(
    sysctls=dict(type="dict", required=True),
    file=dict(type="path", default=_sysctl_keys.DEFAULT_FILE),
    on_unsupported=dict(type="str", choices=["fail", "warn"], default="fail", aliases=["on_unsettable"]),
    context=dict(type="str", choices=["auto", "host", "container"], default="auto"),
), _spec.MODE, _spec.JOURNAL_DIR, _spec.RUN)


def run(module, host: Host) -> dict:
    params = module.params
    if not params["sysctls"] and not params["release_scope"]:
        # nothing asked: a no-op that reads and creates nothing (no journal, no lock, no file)
        return {"changed": False, "changes": [], "previous": {}, "current": {}, "unsettable": [], "sysctls": {},
                "msg": "sysctls is empty: nothing to do"}
    try:
        file_path = _sysctl_keys.check_file(params["file"])
        raw = _sysctl_keys.normalize_keys(params["sysctls"])
    except ValueError as e:
        module.fail_json(msg=str(e))
    engine = Engine(module, host, params["journal_dir"], domains=(_sysctl.DOMAINS,))
    extra = {"unsettable": [], "sysctls": {}}

    def build():
        if not raw:   # release only (release_scope): the engine plans every earlier key back
            return Plan(), {}
        keys = list(raw)
        in_container = host.in_container() if params["context"] == "auto" else params["context"] == "container"
        planned = _sysctl.plan(
            raw, _sysctl.observe(host, keys), params["mode"], in_container, params["on_unsupported"],
            file_path, host.file_state(file_path), params["journal_dir"])
        extra["unsettable"] = planned["unsettable"]
        extra["sysctls"] = planned["desired"]
        if params["mode"] != "runtime":
            for warning in _sysctl.boot_overrides(file_path, planned["desired"],
                                                  _sysctl.boot_files(host, file_path)):
                module.warn(warning)
        for u in planned["unsettable"]:
            module.warn("sysctl %s not settable here: %s" % (u["key"], u["reason"]))
        for warning in planned["warnings"]:
            module.warn(warning)
        return planned["plan"], planned["previous"]

    return engine.run("sysctl_tuning", build, extra)
