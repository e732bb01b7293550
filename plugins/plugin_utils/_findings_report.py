# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Verify reports: the JSON document (schema ``hpcnet.rdma.verify/1``, docs/verify.md), and the
self-contained Markdown and HTML renderings of it - one table per finding class (id), worst first -
from the Jinja2 templates ``templates/verify-report.{md,html}.j2`` (``_render``: node text escaped in both).
The JSON's format is published as ``schemas/verify-report.schema.json`` (JSON Schema 2020-12).
Pure: builds strings; the action plugin writes them.
"""
from __future__ import annotations

import json
import os
import tempfile
from collections import OrderedDict
from typing import Any, Dict, List

from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _findings, _findings_catalogue, _render

SCHEMA = "hpcnet.rdma.verify/1"


def writable_dir(path: str, field: str, what: str) -> str:
    """Create the directory and prove a file can be written there: the problem (naming ``field``), else ''."""
    try:
        os.makedirs(path, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".hpcnet-rdma-", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        return "%s: cannot write %s to %s: %s" % (field, what, path, e.strerror or e)
    return ""


def write_text(path: str, text: str) -> str:
    """Write ``path`` (mode 0644) through a temp file beside it and a rename: a reader never sees half a file."""
    fd, tmp = tempfile.mkstemp(prefix=".hpcnet-rdma-", dir=os.path.dirname(path) or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


NAMES = {"json": "rdma-verify.json", "markdown": "rdma-verify.md", "html": "rdma-verify.html"}
REPORT_KEYS = ("schema", "generated_at", "hosts", "families", "fail_on", "gate", "findings")
FINDING_KEYS = ("id", "family", "severity", "nodes", "title", "evidence", "fix")


def build(found: List[Dict[str, Any]], hosts: List[str], families: List[str], fail_on: str,
          generated_at: str) -> Dict[str, Any]:
    return OrderedDict([("schema", SCHEMA), ("generated_at", generated_at), ("hosts", list(hosts)),
                        ("families", list(families)), ("fail_on", fail_on),
                        ("gate", _findings.gate(found, fail_on)), ("findings", found)])


def classes(found: List[Dict[str, Any]]) -> "OrderedDict[str, List[Dict[str, Any]]]":
    """Findings grouped by id, the classes ordered by their worst severity, then id."""
    groups: "OrderedDict[str, List[Dict[str, Any]]]" = OrderedDict()
    for f in _findings.sort_findings(found):
        groups.setdefault(f["id"], []).append(f)
    return OrderedDict(sorted(groups.items(), key=lambda kv: (-max(_findings_catalogue.RANK[f["severity"]] for f in kv[1]), kv[0])))


def to_json(report: Dict[str, Any]) -> str:
    return json.dumps(report, indent=2, sort_keys=False, default=str) + "\n"


md_text = _render.md_text     # text from a node as inert Markdown (the Markdown templates' escaping)


def summary_line(report: Dict[str, Any]) -> str:
    g = report["gate"]
    return ("%d error, %d warning, %d info; fail_on %s: %s"
            % (g["counts"]["error"], g["counts"]["warning"], g["counts"]["info"], report["fail_on"],
               "FAILED" if g["failed"] else "passed"))


def _groups(report: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The finding classes as the templates show them: rule, its worst severity, family, meaning, findings."""
    out = []
    for rule, items in classes(report["findings"]).items():
        family, _sev, meaning = _findings_catalogue.RULES.get(rule, ("?", "?", ""))
        out.append({"rule": rule, "severity": items[0]["severity"], "family": family, "meaning": meaning,
                    "findings": items})
    return out


def to_markdown(report: Dict[str, Any]) -> str:
    """templates/verify-report.md.j2: one table per finding class, every node's text inert."""
    return _render.render("verify-report.md.j2", report=report, summary=summary_line(report), groups=_groups(report))


def to_html(report: Dict[str, Any]) -> str:
    """templates/verify-report.html.j2 (autoescaped), self-contained: no script, link or image."""
    return _render.render("verify-report.html.j2", report=report, summary=summary_line(report), groups=_groups(report))
