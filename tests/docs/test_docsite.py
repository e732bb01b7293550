"""The docs check fails, loudly, on a broken site: a copy of the built site (`make docs` builds it;
DOCSITE names it) is broken in four ways and scripts/docsite_check.py, run in a real headless
Chromium, must exit 1 naming each page and what is wrong with it.  (The same check passing on the
real site is the step before this one in `make docs`.)"""
import importlib.util
import os
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SITE = Path(os.environ.get("DOCSITE") or ROOT / "build" / "docs" / "html")
_spec = importlib.util.spec_from_file_location("docsite_check", ROOT / "scripts" / "docsite_check.py")
docsite_check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(docsite_check)

COLL = "collections/hpcnet/rdma"


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, "%s no longer holds %r: update this test's breakage" % (path, old)
    path.write_text(text.replace(old, new, 1))


def test_a_broken_copy_of_the_site_fails_the_check_naming_page_and_link(tmp_path, capsys):
    assert (SITE / "index.html").is_file(), "no built site in %s: run `make docs` (it builds it first)" % SITE
    site = tmp_path / "html"
    shutil.copytree(SITE, site)
    # 1. a link to a module page that does not exist
    _edit(site / COLL / "node_tuning_module.html", 'href="sysctl_tuning_module.html', 'href="sysctl_tunning_module.html')
    # 2. a role option's anchor gone: the in-page link to it breaks and the documented option is missing
    _edit(site / COLL / "tuning_role.html", 'id="parameter-main--rdma_fast_rerun"', 'id="gone"')
    # 3. a module page gone
    (site / COLL / "bench_run_module.html").unlink()
    # 4. the theme's stylesheet gone: pages render unstyled
    (site / "_static" / "css" / "ansible.css").unlink()

    rc = docsite_check.main(["--site", str(site), "--json", str(tmp_path / "check.json")])
    out = capsys.readouterr().out
    assert rc == 1
    expected = [
        "docs check: %s/node_tuning_module.html: broken link 'sysctl_tunning_module.html" % COLL,
        "(no file %s/sysctl_tunning_module.html in the site)" % COLL,
        "docs check: %s/tuning_role.html: broken anchor '#parameter-main--rdma_fast_rerun' "
        "(%s/tuning_role.html has no id 'parameter-main--rdma_fast_rerun')" % (COLL, COLL),
        "docs check: %s/tuning_role.html: 1 of its documented options/return values not rendered: "
        "parameter-main--rdma_fast_rerun" % COLL,
        "docs check: %s/bench_run_module.html: missing - the site has no page for hpcnet.rdma.bench_run module" % COLL,
        "docs check: %s/index.html: broken link 'bench_run_module.html#ansible-collections-hpcnet-rdma-bench-run-module'"
        % COLL,
        "docs check: index.html: the theme's CSS is not applied (side menu position 'static')",
        "docs check: index.html: broken link '_static/css/ansible.css",
    ]
    for line in expected:
        assert line in out, "the check did not say %r; it said:\n%s" % (line, out)
    # Every page but the deleted one still loads.
    pages = len(list(SITE.rglob("*.html"))) - 1
    assert "docs check: %d pages rendered in headless Chromium" % pages in out
