# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Verify reports: the JSON document (schema ``hpcnet.rdma.verify/1``, docs/verify.md), and the
self-contained Markdown and HTML renderings of it - one table per finding class (id), worst first.
Pure: builds strings; the action plugin writes them.
"""
from __future__ import annotations

import html
import json
import os
import tempfile
from collections import OrderedDict
from typing import Any, Dict, List

from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _findings, _findings_catalogue

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


def _value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


_MD_ESCAPES = {"&": "&amp;", "<": "&lt;", "\\": "\\\\", "|": "\\|", "`": "\\`", "*": "\\*", "[": "\\[",
               "]": "\\]"}


def md_text(text: Any) -> str:
    """Text from a node as inert Markdown, on one line: no HTML (``&`` and ``<`` as entities, so no tag can
    open), no link, image, code span or emphasis (``[ ] ` *`` escaped), pipes escaped for a table cell."""
    return "".join(_MD_ESCAPES.get(c, c) for c in " ".join(_value(text).split()))


def _md(text: Any) -> str:
    """A Markdown table cell (see md_text)."""
    return md_text(text)


def summary_line(report: Dict[str, Any]) -> str:
    g = report["gate"]
    return ("%d error, %d warning, %d info; fail_on %s: %s"
            % (g["counts"]["error"], g["counts"]["warning"], g["counts"]["info"], report["fail_on"],
               "FAILED" if g["failed"] else "passed"))


def to_markdown(report: Dict[str, Any]) -> str:
    lines = ["# RDMA fabric verify report", "",
             "- generated: %s" % md_text(report["generated_at"]),
             "- hosts (%d): %s" % (len(report["hosts"]), md_text(", ".join(report["hosts"]))),
             "- check families: %s" % md_text(", ".join(report["families"])),
             "- result: %s" % summary_line(report), ""]
    groups = classes(report["findings"])
    if not groups:
        lines += ["No findings.", ""]
    for rule, items in groups.items():
        family, _sev, meaning = _findings_catalogue.RULES.get(rule, ("?", "?", ""))
        heading = "## %s `%s` (%s, %d)" % (md_text(items[0]["severity"]), rule.replace("`", "'"), md_text(family),
                                           len(items))
        lines += [heading, "", md_text(meaning), "",
                  "| severity | nodes | finding | evidence | fix |", "|---|---|---|---|---|"]
        for f in items:
            evidence = "; ".join("%s %s = %s (%s)" % (e["node"], e["what"], _value(e["value"]), e["source"])
                                 for e in f["evidence"]) or "-"
            lines.append("| %s | %s | %s | %s | %s |" % (_md(f["severity"]), _md(", ".join(f["nodes"])), _md(f["title"]),
                                                         _md(evidence), _md(f["fix"])))
        lines.append("")
    return "\n".join(lines)


_CSS = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:2em}"
        "td,th{border:1px solid #999;padding:4px 8px;vertical-align:top;text-align:left}"
        ".error{background:#fdd}.warning{background:#ffd}.info{background:#eef}code{font-size:90%}")


def to_html(report: Dict[str, Any]) -> str:
    e = html.escape
    out = ["<!DOCTYPE html>", "<html><head><meta charset=\"utf-8\"><title>RDMA fabric verify report</title>",
           "<style>%s</style></head><body>" % _CSS, "<h1>RDMA fabric verify report</h1>", "<ul>",
           "<li>generated: %s</li>" % e(report["generated_at"]),
           "<li>hosts (%d): %s</li>" % (len(report["hosts"]), e(", ".join(report["hosts"]))),
           "<li>check families: %s</li>" % e(", ".join(report["families"])),
           "<li>result: %s</li></ul>" % e(summary_line(report))]
    groups = classes(report["findings"])
    if not groups:
        out.append("<p>No findings.</p>")
    for rule, items in groups.items():
        family, _sev, meaning = _findings_catalogue.RULES.get(rule, ("?", "?", ""))
        out.append("<h2 class=\"%s\">%s <code>%s</code> (%s, %d)</h2><p>%s</p>"
                   % (e(items[0]["severity"]), e(items[0]["severity"]), e(rule), e(family), len(items), e(meaning)))
        out.append("<table><tr><th>severity</th><th>nodes</th><th>finding</th><th>evidence</th><th>fix</th></tr>")
        for f in items:
            evidence = "<br>".join("%s %s = <code>%s</code> <small>(%s)</small>"
                                   % (e(x["node"]), e(x["what"]), e(_value(x["value"])), e(x["source"]))
                                   for x in f["evidence"]) or "-"
            out.append("<tr class=\"%s\"><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>"
                       % (e(f["severity"]), e(f["severity"]), e(", ".join(f["nodes"])), e(f["title"]), evidence, e(f["fix"])))
        out.append("</table>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
