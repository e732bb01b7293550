# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The body of module hpcnet.rdma.roce_qos: its argument spec and ``run(module, host)``.

The module calls it, and so does hpcnet.rdma.node_tuning, which runs several tuning modules in
one module call (one Python start, one payload, one connection round trip for all of them).
"""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _domain as _qos
from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _check as _qoscheck
from ansible_collections.hpcnet.rdma.plugins.module_utils.qos import _plan as _qosplan
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _spec
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._engine import Engine
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._plan import Plan

ARGUMENT_SPEC = _spec.argument_spec(dict(
    interfaces=dict(type="list", elements="dict", required=True, options=_spec.argument_spec(_spec.SELECTOR)),
    trust=dict(type="str", choices=["dscp", "pcp"], default="dscp"),
    pfc=dict(type="list", elements="int"),
    dscp_map=dict(type="dict", default={}),
    tos=dict(type="int", default=106),
    roce_mode=dict(type="str", choices=["v1", "v2"], default="v2"),
    ecn=dict(type="dict", options=dict(
        priorities=dict(type="list", elements="int"),
        np=dict(type="bool", default=True),
        rp=dict(type="bool", default=True),
    )),
    cnp=dict(type="dict", options=dict(dscp=dict(type="int"), priority=dict(type="int"))),
    rdma_mtu=dict(type="int", choices=list(_qoscheck.RDMA_MTUS)),
    backend=dict(type="str", choices=["auto", "dcb", "mlnx_qos"], default="auto"),
    on_unsupported=dict(type="str", choices=["warn", "fail"], default="warn"),
), _spec.MODE, _spec.JOURNAL_DIR, _spec.RUN)


def run(module, host: Host) -> dict:
    params = module.params
    if not params["interfaces"] and not params["release_scope"]:
        module.fail_json(msg="interfaces: at least one selection is required (or release_scope, to return what "
                             "earlier calls of that scope set to the originals)")
    try:
        desired = _qoscheck.validate(params)
    except ValueError as e:
        module.fail_json(msg=str(e))
    engine = Engine(module, host, params["journal_dir"], domains=(_qos.DOMAINS,))
    extra = {}
    notes = []

    def build():
        if not params["interfaces"]:   # release only (release_scope): the engine plans every earlier key back
            return Plan(), {}
        seen = _qosplan.observe(host, params["interfaces"], params["backend"], desired["roce_mode"], params["mode"])
        planned = _qosplan.plan(desired, seen, params["on_unsupported"], params["mode"])
        extra.update(_qosplan.returned(planned))
        notes[:] = _qosplan.notes(planned)
        return planned["plan"], planned["previous"]

    out = engine.run("roce_qos", build, extra)
    for note in notes:
        module.warn(note)
    return out
