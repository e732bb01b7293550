# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Verify reports: the JSON schema keys, one Markdown/HTML table per finding class worst first,
escaping, and the action plugin's report-directory check and writing."""
from __future__ import annotations

import json
import os

import pytest

from ansible_collections.hpcnet.rdma.plugins.action import fabric_verify_info
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _findings as F
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _findings_catalogue as C
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _findings_report as R


def sample():
    found = [
        C.finding("rdma.no_device", ["n1"], "n1: no RDMA port", [C.ev("n1", "devices", [], "/sys/class/infiniband")], "x"),
        C.finding("consistency.mtu", ["vm2"], "MTU differs: vm2 has 1500 | <b>pipe</b>",
                  [C.ev("vm2", "data-interface MTU", 1500, "/sys/class/net/data0/mtu")], "set nic.mtu & re-run",
                  majority={"value": 9000, "hosts": 1, "of": 2, "tie": True}),
        C.finding("drift.irq", ["vm1"], "irq:virtio2-output.0 drifted", [C.ev("vm1", "irq", {"applied": "1", "current": "0-1"}, "s")], "f"),
        C.finding("path_mtu.failed", ["vm2", "vm1"], "vm2 -> vm1 fails", [], "f"),
    ]
    return R.build(F.sort_findings(found), ["vm1", "vm2"], list(C.FAMILIES), "error", "2026-12-04T00:00:00Z")


def test_json_schema_keys():
    doc = json.loads(R.to_json(sample()))
    assert tuple(doc) == R.REPORT_KEYS
    assert doc["schema"] == "hpcnet.rdma.verify/1"
    assert set(doc["gate"]) == {"fail_on", "failed", "counts", "worst", "reached"}
    assert doc["gate"]["failed"] and doc["gate"]["counts"] == {"error": 2, "warning": 1, "info": 1}
    for f in doc["findings"]:
        assert set(R.FINDING_KEYS) <= set(f)
        for e in f["evidence"]:
            assert set(e) == {"node", "what", "value", "source"}
    assert [f["severity"] for f in doc["findings"]] == ["error", "error", "warning", "info"]


def test_markdown_one_table_per_class_worst_first_pipes_and_html_escaped():
    md = R.to_markdown(sample())
    heads = [line for line in md.splitlines() if line.startswith("## ")]
    assert heads == ["## error `consistency.mtu` (consistency, 1)", "## error `path_mtu.failed` (path_mtu, 1)",
                     "## warning `drift.irq` (drift, 1)", "## info `rdma.no_device` (checklist, 1)"]
    assert md.count("| severity | nodes | finding | evidence | fix |") == 4
    row = [line for line in md.splitlines() if line.startswith("| error | vm2 |")][0]
    assert "1500 \\| &lt;b>pipe&lt;/b>" in row and row.count(" | ") == 4 and "<b>" not in md   # as inert as the HTML
    assert "set nic.mtu &amp; re-run" in row
    assert "result: 2 error, 1 warning, 1 info; fail_on error: FAILED" in md


def test_html_is_self_contained_and_escaped():
    page = R.to_html(sample())
    assert page.startswith("<!DOCTYPE html>") and "<style>" in page
    assert "src=" not in page and "href=" not in page
    assert "&lt;b&gt;pipe&lt;/b&gt;" in page and "<b>pipe</b>" not in page
    assert "set nic.mtu &amp; re-run" in page
    assert page.count("<table>") == 4
    assert page.index("consistency.mtu") < page.index("drift.irq") < page.index("rdma.no_device")


def test_no_findings():
    report = R.build([], ["n1"], ["drift"], "error", "t")
    assert "No findings." in R.to_markdown(report) and "No findings." in R.to_html(report)
    assert not report["gate"]["failed"]


@pytest.mark.parametrize("make,ok", [
    (lambda d: os.path.join(d, "new", "sub"), True),           # created
    (lambda d: d, True),
    (lambda d: os.path.join(d, "file", "sub"), False),         # a file in the way
    (lambda d: os.path.join(d, "ro"), False),                  # read-only directory
])
def test_report_dir_check(tmp_path, make, ok):
    (tmp_path / "file").write_text("x")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    path = make(str(tmp_path))
    problem = fabric_verify_info.check_report_dir(path)
    if ok:
        assert problem is None and os.path.isdir(path)
        assert not [n for n in os.listdir(path) if n.startswith(".hpcnet-rdma-")]   # the probe file is gone
    elif os.geteuid() != 0 or "file" in path:   # root may write into a 0555 directory
        assert problem.startswith("rdma_verify_report_dir: cannot write reports to %s: " % path)


def test_write_reports(tmp_path):
    written = fabric_verify_info.write_reports(str(tmp_path), sample(), ["json", "markdown", "html"])
    assert sorted(os.path.basename(p) for p in written.values()) == ["rdma-verify.html", "rdma-verify.json", "rdma-verify.md"]
    assert json.loads((tmp_path / "rdma-verify.json").read_text())["schema"] == R.SCHEMA
    assert sorted(os.listdir(str(tmp_path))) == ["rdma-verify.html", "rdma-verify.json", "rdma-verify.md"]


def test_the_action_spec_matches_the_rules():
    """The module doc stub's literal spec agrees with _findings and _findings_report."""
    from ansible_collections.hpcnet.rdma.plugins.modules.fabric_verify_info import ARGUMENT_SPEC
    assert ARGUMENT_SPEC["families"]["default"] == list(C.FAMILIES)
    assert ARGUMENT_SPEC["formats"]["choices"] == list(R.NAMES)
    for option in ("retrans_ratio", "memlock", "device_mode"):
        assert ARGUMENT_SPEC[option]["default"] == C.DEFAULTS[option]


@pytest.mark.parametrize("text, inert", [
    ("<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)>"),
    ("[click](http://evil)", "\\[click\\](http://evil)"),
    ("a | b `c` *d* e\\f", "a \\| b \\`c\\` \\*d\\* e\\\\f"),
    ("mlx5_0 a->b &amp;", "mlx5_0 a->b &amp;amp;"),
    ("two\nlines", "two lines"),
    ({"k": "<v>"}, '{"k": "&lt;v>"}'),
])
def test_md_text_is_inert(text, inert):
    assert R.md_text(text) == inert
