"""The docs site's tooling without a browser: scripts/docsite_check.py's link, anchor and content
rules on pages described as Chromium reports them, what it expects from the collection's own files,
scripts/docsite.py's offline intersphinx inventory, and the docs tier's record in scripts/results.py.
(The check in a real Chromium, on the built site and on a broken copy of it, is the docs tier:
tests/docs.)"""
import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / ("%s.py" % name))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check = _load("docsite_check")
docsite = _load("docsite")
results = _load("results")

COLL = "collections/hpcnet/rdma"


@pytest.mark.parametrize("page, ref, target, fragment", [
    ("%s/x_module.html" % COLL, "y_module.html#opt", "%s/y_module.html" % COLL, "opt"),
    ("%s/x_module.html" % COLL, "#parameter-files/files", "%s/x_module.html" % COLL, "parameter-files/files"),
    ("%s/x_module.html" % COLL, "../../index.html#list-of-collections", "collections/index.html", "list-of-collections"),
    ("%s/x_module.html" % COLL, "../../../_static/css/ansible.css?v=1", "_static/css/ansible.css", ""),
    ("%s/x_module.html" % COLL, "/", "index.html", ""),
    ("index.html", "a%20b.html#x%2Fy", "a b.html", "x/y"),
    ("index.html", "../outside.html", None, ""),
])
def test_resolve(page, ref, target, fragment):
    assert check._resolve(page, ref) == (target, fragment)


def _page(links=(), resources=(), ids=(), h1="hpcnet.rdma.x module - X", sheets=(("s.css", True),), side="fixed"):
    return {"links": list(links), "resources": list(resources), "ids": list(ids), "h1": h1, "text_length": 500,
            "sheets": [list(s) for s in sheets], "images": [], "side_menu": side, "title": "", "url": ""}


def test_links_and_anchors(tmp_path):
    for rel in ("index.html", "%s/x_module.html" % COLL, "_static/s.css"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    dom = {
        "index.html": _page(links=["%s/x_module.html#parameter-a" % COLL, "%s/x_module.html#parameter-b" % COLL,
                                   "%s/gone_module.html" % COLL, "https://example.invalid/", "#", "/"],
                            resources=["_static/s.css", "_static/gone.js"]),
        "%s/x_module.html" % COLL: _page(ids=["parameter-a"], links=["#parameter-a", "#nowhere", "#nowhere"]),
    }
    problems, counts = check.check_links(tmp_path, dom)
    assert problems == [
        "%s/x_module.html: broken anchor '#nowhere' (%s/x_module.html has no id 'nowhere') (2 times)" % (COLL, COLL),
        "index.html: broken anchor '%s/x_module.html#parameter-b' (%s/x_module.html has no id 'parameter-b')"
        % (COLL, COLL),
        "index.html: broken link '%s/gone_module.html' (no file %s/gone_module.html in the site)" % (COLL, COLL),
        "index.html: broken link '_static/gone.js' (no file _static/gone.js in the site)",
    ]
    assert counts == {"links": 9, "anchors": 5, "external": 1}


def test_pages_hold_their_content():
    expected = {"%s/x_module.html" % COLL: {"title": "hpcnet.rdma.x module", "ids": ["parameter-a", "return-r"]},
                "%s/y_role.html" % COLL: {"title": "hpcnet.rdma.y role", "ids": ["parameter-main--y_a"]}}
    dom = {
        "index.html": _page(links=["collections/index.html"], h1="hpcnet.rdma"),
        "%s/index.html" % COLL: _page(links=["x_module.html#top"], h1="Hpcnet.Rdma"),
        "%s/x_module.html" % COLL: _page(ids=["parameter-a"], h1="hpcnet.rdma.x module - X",
                                         sheets=[("../../../_static/css/ansible.css", False)], side="static"),
    }
    assert check.check_pages(dom, expected) == [
        "%s/x_module.html: stylesheet(s) not loaded: ../../../_static/css/ansible.css" % COLL,
        "%s/x_module.html: the theme's CSS is not applied (side menu position 'static')" % COLL,
        "%s/x_module.html: 1 of its documented options/return values not rendered: return-r" % COLL,
        "%s/y_role.html: missing - the site has no page for hpcnet.rdma.y role" % COLL,
        "%s/index.html: does not link to %s/y_role.html" % (COLL, COLL),
    ]


def test_expected_pages_come_from_the_collections_files():
    pages = check.expected_pages()
    modules = [p for p in (ROOT / "plugins" / "modules").glob("*.py") if not p.name.startswith("_")]
    roles = list((ROOT / "roles").glob("*/meta/argument_specs.yml"))
    filters = list((ROOT / "plugins" / "filter").glob("*.yml"))
    assert len(pages) == len(modules) + len(roles) + len(filters)
    node = pages["%s/node_tuning_module.html" % COLL]
    assert node["title"] == "hpcnet.rdma.node_tuning module"
    # its own options, and those of the doc fragments it extends (node_tuning_sections, journal, mode)
    assert {"parameter-sysctl", "parameter-nic", "parameter-irq", "parameter-journal_dir",
            "parameter-mode", "return-results", "return-previous"} <= set(node["ids"])
    assert "parameter-main--rdma_profile" in pages["%s/tuning_role.html" % COLL]["ids"]
    assert "parameter-_input" in pages["%s/fleet_manifest_filter.html" % COLL]["ids"]


def test_offline_inventory_names_the_ansible_docs_targets(tmp_path):
    inventory = pytest.importorskip("sphinx.util.inventory")
    path = tmp_path / "ansible_devel.inv"
    count = docsite.write_inventory(path)
    labels = inventory.InventoryFile.loads(path.read_bytes(), uri="https://docs.example.invalid/").data["std:label"]
    assert len(labels) == count > 100
    assert labels["ansible_collections.ansible.builtin.copy_module"].uri == (
        "https://docs.example.invalid/collections/ansible/builtin/copy_module.html"
        "#ansible-collections-ansible-builtin-copy-module")
    assert labels["common_return_values"].display_name == "Return Values"
    assert "ansible_collections.ansible.builtin.set_stats_module" in labels
    assert "ansible_collections.ansible.builtin.no_such_thing_module" not in labels


@pytest.mark.parametrize("check_result, junit, count, ok, said", [
    ({"pages": 44, "plugin_pages": 34, "links": 3670, "anchors": 2329, "problems": []}, (1, 0), 44, True,
     "44 pages rendered in headless Chromium (34 of modules, roles, filters), 3670 local links and 2329 anchors "
     "checked, 0 problem(s); "
     "failure proofs: 1 passed, 0 failed, 0 skipped"),
    ({"pages": 44, "links": 1, "anchors": 1, "problems": ["index.html: broken link 'x'"]}, (1, 0), 44, False,
     "1 problem(s) (first: index.html: broken link 'x')"),
    ({"pages": 44, "links": 1, "anchors": 1, "problems": []}, (1, 1), 44, False, "failure proofs: 0 passed, 1 failed"),
    ({"pages": 44, "links": 1, "anchors": 1, "problems": []}, None, 44, False, "failure proofs: no junit report"),
    (None, (1, 0), 0, False, "no docs check result"),
])
def test_results_records_the_docs_tier(tmp_path, check_result, junit, count, ok, said):
    check_json = tmp_path / "docs-check.json"
    if check_result is not None:
        check_json.write_text(json.dumps(check_result))
    junit_xml = tmp_path / "docs.xml"
    if junit is not None:
        junit_xml.write_text('<testsuites><testsuite tests="%d" failures="%d" errors="0" skipped="0"/></testsuites>'
                             % junit)
    got_count, detail, got_ok = results.count_docs(check_json, junit_xml)
    assert (got_count, got_ok) == (count, ok)
    assert said in detail
