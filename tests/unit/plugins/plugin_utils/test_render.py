# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Hostile node text through the Jinja2 report templates, both formats, both reports (issue 29, item 6).

Every string a node controls (host, device and pair names, labels, run ids, profiles, errors, evidence)
is set to HTML, Markdown table breakers, headings, links and a device name that closes its cell.  The
Markdown is rendered by a CommonMark renderer with raw HTML allowed (what a Markdown viewer does) and the
HTML parsed: no element the reports did not write, and every table row has its header's number of cells.
"""
from __future__ import annotations

from html.parser import HTMLParser

import pytest
from markdown_it import MarkdownIt

from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchreport as rep
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchrun as br
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchstats as bs
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _findings as F
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _findings_catalogue as C
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _findings_report as R
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _render

DEVICE = "mlx5_0</td><script>alert(1)</script><td>"
HOSTILE = [
    DEVICE,
    "<img src=x onerror=alert(1)>",
    "a | b | c",
    "`code` *em* [link](http://evil.example/) ![img](http://evil.example/i.png) <http://evil.example/>",
    "two\nlines\n| x | y |\n|---|---|",
    "# heading",
    "> quote",
    "\\| backslash then pipe",
    "&lt;entity&gt;",
]
# The elements each report writes itself; anything else came from node text.
ALLOWED = {"h1", "h2", "p", "ul", "li", "table", "thead", "tbody", "tr", "th", "td", "code", "strong", "b",
           "small", "br", "img", "html", "head", "meta", "title", "style", "body"}


class Elements(HTMLParser):
    """Tags, attributes of <img>, and the cells of each table row."""

    def __init__(self):
        super().__init__()
        self.tags, self.imgs, self.rows = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "img":
            self.imgs.append(dict(attrs))
        if tag == "tr":
            self.rows.append(0)
        if tag in ("td", "th"):
            self.rows[-1:] = [self.rows[-1] + 1] if self.rows else [-1]     # -1: a cell outside any row


def parse(page):
    p = Elements()
    p.feed(page)
    p.close()
    return p


def tables_of(page):
    """Rows per table as cell counts: [[header cells, row cells...], ...]."""
    out = []
    for chunk in page.split("<table")[1:]:
        out.append(parse("<table" + chunk.split("</table>")[0] + "</table>").rows)
    return out


def markdown_as_html(text):
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(text)


def assert_inert(page, images=()):
    p = parse(page)
    assert set(p.tags) <= ALLOWED, set(p.tags) - ALLOWED
    assert "script" not in p.tags and "a" not in p.tags and "h3" not in p.tags and "blockquote" not in p.tags
    assert [i.get("src") for i in p.imgs] == list(images)
    for rows in tables_of(page):
        assert rows and all(n == rows[0] for n in rows), rows


def hostile_verify():
    found = []
    for i, text in enumerate(HOSTILE):
        found.append(C.finding("consistency.mtu", [text, "n%d" % i], "MTU differs: %s" % text,
                               [C.ev(text, text, {"device": text}, text)], text))
    found.append(C.finding("rdma.no_device", [DEVICE], DEVICE, [C.ev(DEVICE, "devices", [DEVICE], "/sys")], DEVICE))
    return R.build(F.sort_findings(found), HOSTILE, list(C.FAMILIES), "error", "2026-12-04T00:00:00Z")


def hostile_runs():
    runs = []
    for n, label in enumerate(("# before", DEVICE)):
        results = {"iperf3": dict((pair, {"gbits_received": 8.0 + n, "retransmits": 0}) for pair in HOSTILE),
                   "sockperf": {DEVICE: bs.summarize([float(i + n) for i in range(1, 200)])}}
        runs.append({"schema": br.SCHEMA, "run_id": "%s-%d" % (HOSTILE[3], n), "label": label,
                     "started_at": HOSTILE[1], "hosts": [], "nodes": {}, "pairs": [],
                     "profiles": dict(("h%d" % i, text) for i, text in enumerate(HOSTILE)), "results": results,
                     "errors": ["iperf3 %s: %s" % (text, text) for text in HOSTILE]})
    return runs


def test_verify_html_keeps_node_text_text():
    page = R.to_html(hostile_verify())
    assert_inert(page)
    assert "mlx5_0&lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;td&gt;" in page


def test_verify_markdown_keeps_node_text_text():
    text = R.to_markdown(hostile_verify())
    assert_inert(markdown_as_html(text))
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    assert rows and all(line.replace("\\|", "").count("|") == 6 for line in rows), rows
    assert "<script" not in text and "<img" not in text and "\n# heading" not in text
    assert "mlx5_0&lt;/td>&lt;script>alert(1)&lt;/script>&lt;td>" in text


def test_bench_html_keeps_node_text_text():
    table = rep.compare(hostile_runs())
    page = rep.to_html(table, {"iperf3": "/out/bench-iperf3.png"})
    assert_inert(page, images=["bench-iperf3.png"])
    assert page.count("mlx5_0&lt;/td&gt;&lt;script&gt;") >= 3          # run name, pair, error


def test_bench_markdown_keeps_node_text_text():
    table = rep.compare(hostile_runs())
    text = rep.to_markdown(table, {"iperf3": "/out/bench-iperf3.png"})
    rendered = markdown_as_html(text)
    assert_inert(rendered, images=["bench-iperf3.png"])
    # the runs' names in the header and the baseline line stay one cell / one bold run, never a heading
    assert "<h1>Benchmark comparison</h1>" in rendered and rendered.count("<h1>") == 1
    assert "<strong># before</strong>" in rendered
    assert "<li># before: iperf3" in rendered                          # "- # before: ..." is not a heading
    for line in (x for x in text.splitlines() if x.startswith("| ")):
        assert line.replace("\\|", "").count("|") in (5, 6), line


@pytest.mark.parametrize("text, inert", [
    ("# h", "\\# h"),
    ("> q", "\\> q"),
    ("a # b > c", "a # b > c"),
    ("\n\n# after blank lines", "\\# after blank lines"),
    (None, "null"),
    (3, "3"),
])
def test_md_text_leading_block_markers(text, inert):
    assert _render.md_text(text) == inert


def test_templates_ship_with_the_plugin_utils():
    """The templates sit beside _render.py (plugins/plugin_utils/templates/), which the tarball keeps."""
    import os
    names = sorted(os.listdir(_render.TEMPLATES))
    assert names == ["bench-report.html.j2", "bench-report.md.j2", "verify-report.html.j2", "verify-report.md.j2"]
