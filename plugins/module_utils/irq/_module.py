# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The body of module hpcnet.rdma.irq_affinity: its argument spec and ``run(module, host)``.

The module calls it, and so does hpcnet.rdma.node_tuning, which runs several tuning modules in
one module call (one Python start, one payload, one connection round trip for all of them).
"""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _applier
from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _domain as _irq
from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _plan as _irqplan
from ansible_collections.hpcnet.rdma.plugins.module_utils.services import _domain as _service
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _spec
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._engine import Engine
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Plan

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any

_POLICY = dict(type="str", choices=list(_irq.POLICIES))

ARGUMENT_SPEC = _spec.argument_spec(dict(
    interfaces=dict(type="list", elements="dict", required=True, options=dict(
        name=dict(type="str", required=True),
        policy=_POLICY,
        reserved_cpus=dict(type="str"),
        cpu=dict(type="int"),
        explicit=dict(type="dict"),
    )),
    policy=dict(_POLICY, default="spread-local"),
    reserved_cpus=dict(type="str", default=""),
    irqbalance=dict(type="str", choices=["ban", "stop", "leave"], default="ban"),
), _spec.MODE, _spec.JOURNAL_DIR, _spec.RUN)


def entries_of(params: dict) -> list:
    """Each interface's full policy entry (module-level defaults filled in): what the boot applier reads."""
    out = []
    for i in params["interfaces"]:
        out.append({
            "interface": i["name"],
            "policy": i.get("policy") or params["policy"],
            "reserved_cpus": i["reserved_cpus"] if i.get("reserved_cpus") is not None else params["reserved_cpus"],
            "cpu": i.get("cpu"),
            "explicit": dict((str(k), str(v)) for k, v in (i.get("explicit") or {}).items()),
        })
    return out


def _source(module: Any) -> str:
    loader = getattr(module, "__loader__", None)
    source = loader.get_source(module.__name__) if loader is not None else None
    if not source:
        with open(module.__file__, encoding="utf-8") as f:
            source = f.read()
    return source


def applier_source() -> str:
    """The boot applier: _domain.py's text, then _applier.py's - one planner at tune time and at boot, in
    one standard-library file on the node."""
    return _source(_irq).rstrip("\n") + "\n\n\n" + _source(_applier)


def run(module, host: Host) -> dict:
    params = module.params
    if not params["interfaces"] and not params["release_scope"]:
        module.fail_json(msg="interfaces: at least one interface is required (or release_scope, to return what "
                             "earlier calls of that scope set to the originals)")
    try:   # the input itself first, on every node and in every mode (a bake has no target NICs)
        entries = _irqplan.validate(entries_of(params))
    except ValueError as e:
        module.fail_json(msg=str(e))
    engine = Engine(module, host, params["journal_dir"], domains=(_irq.DOMAINS, _service.DOMAINS))
    extra = {"irqs": {}, "notes": [], "refused": []}

    def build():
        if not entries:   # release only (release_scope): the engine plans every earlier key back
            return Plan(), {}
        assignments = {}
        current = {}
        if params["mode"] != "persist":
            planned = _applier.plan_all(host, entries)
            for ifname, p in planned.items():
                nic = p["nic"]
                assignments[ifname] = p["assign"]
                extra["irqs"][ifname] = {
                    "numa_node": nic["numa_node"], "local_cpus": _irq.format_cpulist(nic["local_cpus"]),
                    "driver": nic.get("driver"), "driver_profile": nic.get("driver_profile", "generic"),
                    "other_irqs": nic.get("other_irqs", []),
                    "assignments": dict((i["name"], {"irq": i["irq"], "cpus": p["assign"][i["name"]]})
                                        for i in nic["irqs"] if i["name"] in p["assign"])}
                for name in p["assign"]:
                    current[name] = _irq.read_value(host, name)
        installed = _irqplan.irqbalance_installed(host)
        state = _service.read_value(host, _irqplan.IRQBALANCE_UNIT) if installed else None
        env_path = _irqplan.read_env_file(host)
        files = dict((path, host.file_state(path))
                     for path in _irqplan.planned_paths(params["mode"], params["irqbalance"], env_path))
        out = _irqplan.plan(assignments, current, entries, params["mode"], params["irqbalance"], installed, state,
                            files, applier_source(), env_path)
        extra["notes"] = out["notes"]
        return out["plan"], out["previous"]

    result = engine.run("irq_affinity", build, extra)
    if not module.check_mode:
        for info in result.get("irqs", {}).values():
            for name, a in info["assignments"].items():
                a["effective"] = _irq.effective(host, name)
    return result
