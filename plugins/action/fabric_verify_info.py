# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action ``hpcnet.rdma.fabric_verify_info``: compares the nodes on the controller (docs and ARGUMENT_SPEC: plugins/modules/fabric_verify_info.py).

The rules live in ``plugin_utils/_findings*.py`` and the reports in ``plugin_utils/_findings_report.py``
(pure, table-tested); this file validates the options, calls them and writes the report files.
Nothing runs on the nodes.
"""
from __future__ import annotations

import datetime
import os
from typing import Any, Dict, List, Optional

from ansible.plugins.action import ActionBase

from ansible_collections.hpcnet.rdma.plugins.module_utils.health import _manifest
from ansible_collections.hpcnet.rdma.plugins.modules.fabric_verify_info import ARGUMENT_SPEC
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _findings, _findings_catalogue, _findings_path, _findings_report


def check_report_dir(path: Optional[str]) -> Optional[str]:
    """Create the report directory and prove a file can be written there; the problem, else None."""
    if not path:
        return None
    return _findings_report.writable_dir(path, "rdma_verify_report_dir", "reports") or None


def write_reports(path: str, report: Dict[str, Any], formats: List[str]) -> Dict[str, str]:
    render = {"json": _findings_report.to_json, "markdown": _findings_report.to_markdown,
              "html": _findings_report.to_html}
    return dict((fmt, _findings_report.write_text(os.path.join(path, _findings_report.NAMES[fmt]), render[fmt](report)))
                for fmt in formats)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        validation, args = self.validate_argument_spec(ARGUMENT_SPEC)
        del validation
        errors = _findings_catalogue.validate_options(args["families"], args["fail_on"], args["severity"], args["memlock"],
                                                      args["device_mode"], args["retrans_ratio"])
        if args["path_mtu"] is not None and not 576 <= args["path_mtu"] <= 65535:
            errors.append("rdma_verify_path_mtu: %r is outside 576..65535" % args["path_mtu"])
        if args["stage"] == "validate" or args["report_dir"]:
            problem = check_report_dir(args["report_dir"])
            if problem:
                errors.append(problem)
        if errors:
            result.update(failed=True, msg="; ".join(errors), errors=errors)
            return result
        args["families"] = [f for f in _findings_catalogue.FAMILIES if f in args["families"]]
        nodes = dict((h, dict(n or {})) for h, n in args["nodes"].items())
        for h, ping in args["pings"].items():
            if h in nodes:
                nodes[h]["ping"] = ping
        hosts = args["hosts"] if args["hosts"] is not None else list(nodes)
        result["changed"] = False
        if args["stage"] == "validate":
            result.update(msg="verify options are valid", families=args["families"], fail_on=args["fail_on"])
            return result
        if args["stage"] == "probes":
            result["probes"] = _findings_path.plan_probes(nodes, hosts, args["path_mtu"])
            return result
        options = {"retrans_ratio": args["retrans_ratio"], "memlock": args["memlock"],
                   "device_mode": args["device_mode"], "path_mtu": args["path_mtu"]}
        found = _findings.evaluate(nodes, hosts, args["families"], args["probes"], options, args["severity"],
                                   args["hosts_all"])
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        report = _findings_report.build(found, hosts, args["families"], args["fail_on"], now)
        files = write_reports(args["report_dir"], report, args["formats"]) if args["report_dir"] else {}
        # the fleet manifest (issue 27): the majority of each attribute, the odd hosts named; rdma_health puts it on the nodes
        manifest = _manifest.learn(dict((h, _manifest.attributes(nodes[h]["info"])) for h in hosts if _findings_catalogue.usable(nodes.get(h))),
                                   hosts)
        result.update(findings=found, gate=report["gate"], reports=files, hosts=hosts, families=args["families"], manifest=manifest,
                      schema=_findings_report.SCHEMA, generated_at=now,
                      msg=_findings_report.summary_line(report))
        return result
