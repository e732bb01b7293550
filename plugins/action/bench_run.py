# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action ``hpcnet.rdma.bench_run``: plans a benchmark and stores its run on the controller
(docs and ARGUMENT_SPEC: plugins/modules/bench_run.py; the logic: plugin_utils/_benchrun.py)."""
from __future__ import annotations

import datetime
import json
import os
from typing import Any, Dict

from ansible.plugins.action import ActionBase

from ansible_collections.hpcnet.rdma.plugins.modules.bench_run import ARGUMENT_SPEC
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchopts, _benchrun, _findings_report


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def check_dir(path: str) -> str:
    """Create the results directory and prove a file can be written there; the problem, else ''."""
    return _findings_report.writable_dir(path, "rdma_bench_results_dir", "runs")


def write_run(path: str, run: Dict[str, Any]) -> str:
    name = run["run_id"] + ".json"
    if os.path.basename(name) != name or name.startswith("."):
        raise ValueError("run_id %r is not a file name" % run["run_id"])   # started_at and label are validated
    return _findings_report.write_text(os.path.join(path, name), json.dumps(run, indent=1, sort_keys=True) + "\n")


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        validation, args = self.validate_argument_spec(ARGUMENT_SPEC)
        del validation
        opts = _benchopts.options(args["options"])
        errors = _benchopts.validate_options(opts)
        if args["started_at"] is not None:
            problem = _benchrun.timestamp_problem("started_at", args["started_at"])
            if problem:
                errors.append(problem)
        if args["stage"] == "validate":
            problem = check_dir(args["results_dir"])
            if problem:
                errors.append(problem)
        if errors:
            result.update(failed=True, msg="; ".join(errors), errors=errors)
            return result
        result["changed"] = False
        hosts = args["hosts"] if args["hosts"] is not None else list(args["nodes"])
        if args["stage"] == "validate":
            result.update(msg="benchmark options are valid", options=opts)
            return result
        if args["stage"] == "plan":
            plan = _benchrun.plan(args["nodes"], hosts, opts, args["node_dir"])
            plan["problems"] += _benchrun.reach_problems(args["pings"], plan["pairs"])
            result["plan"] = plan
            if plan["problems"]:
                result.update(failed=True, errors=plan["problems"],
                              msg="the benchmark cannot run: " + "; ".join(plan["problems"]))
            return result
        if not isinstance(args["plan"], dict) or "steps" not in args["plan"]:
            result.update(failed=True, msg="plan: stage=%s needs the plan stage=plan returned" % args["stage"])
            return result
        if args["stage"] == "retry":
            again = _benchrun.retry_plan(args["plan"], args["results"], opts["tests"])
            result.update(again, msg="run again, once: %s" % (
                "; ".join("%s %s" % (t, ", ".join(again["pairs"][t])) for t in again["tests"]) or "nothing"))
            return result
        finished = now()
        started = args["started_at"] or finished
        run_id = "%s-%s" % (started.replace("-", "").replace(":", ""), opts["label"])
        run = _benchrun.build_run(args["plan"], args["results"], opts, hosts, started, finished, run_id, args["logs"],
                                  args["retried"], args["retried_logs"])
        path = None
        if not self._play_context.check_mode:
            problem = check_dir(args["results_dir"])
            if problem:
                result.update(failed=True, msg=problem)
                return result
            path = write_run(args["results_dir"], run)
            result["changed"] = True
        rows = ["%-12s %-24s %s" % r for r in _benchrun.summary_rows(run)]
        stored = ", stored in %s" % path if path else ""
        msg = "benchmark run %s: %d pair(s), %d error(s)%s" % (run_id, len(run["pairs"]), len(run["errors"]), stored)
        result.update(run=run, path=path, rows=rows, msg=msg)
        return result
