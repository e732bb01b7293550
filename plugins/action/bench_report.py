# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action ``hpcnet.rdma.bench_report``: compares stored benchmark runs on the controller
(docs and ARGUMENT_SPEC: plugins/modules/bench_report.py; the logic: plugin_utils/_benchreport.py)."""
from __future__ import annotations

from ansible.plugins.action import ActionBase

from ansible_collections.hpcnet.rdma.plugins.modules.bench_report import ARGUMENT_SPEC
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchload, _benchreport


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        validation, args = self.validate_argument_spec(ARGUMENT_SPEC)
        del validation
        if len(args["runs"]) < 2:
            result.update(failed=True, msg="runs: %r - give two or more stored runs (the baseline first)" % args["runs"])
            return result
        try:
            if self._play_context.check_mode:
                table = _benchreport.compare([_benchload.load_run(p) for p in args["runs"]])
                result.update(changed=False, table=table, files={}, plots={},
                              msg="would write the report of %d runs to %s" % (len(args["runs"]), args["output_dir"]))
                return result
            out = _benchreport.report(args["runs"], args["output_dir"], plots=args["plots"])
        except (_benchload.NotARun, RuntimeError, ValueError, OSError) as e:
            result.update(failed=True, msg=str(e))
            return result
        result.update(changed=True, table=out["table"], files=out["files"], plots=out["plots"],
                      msg="report of %d runs: %s" % (len(args["runs"]), ", ".join(
                          list(out["files"].values()) + list(out["plots"].values()))))
        if out["notes"]:
            result["warnings"] = out["notes"]
        return result
