"""Check the built documentation site in headless Chromium (`make docs`, the docs tier of `make test`).

  docsite_check.py [--site build/docs/html] [--json FILE] [--screenshot PAGE=PNG ...]

One Chromium (Debian's `chromium`, headless, driven over its DevTools pipe: standard library only)
loads every HTML page of the site, waits for its load event and reads the rendered DOM.  Then:

- every page: its stylesheets loaded and the theme's CSS applied (the side menu is fixed), its
  images decoded, a non-empty body;
- every module, role and filter of the collection (found in the repository, not in the site) has
  its page, titled "hpcnet.rdma.NAME module|role|filter", holding every option of the plugin's
  own DOCUMENTATION and of this collection's doc fragments it extends (roles: of every entry
  point of meta/argument_specs.yml) as a rendered parameter, and every top-level return value;
- the collection's index page links to every one of those pages; the site's index leads to it;
- every local link (a, link, script, img) names an existing file of the site and every #fragment
  an id (or a name) of the rendered target page.  "/..." is the site's root (the theme's logo
  link; the site is meant to be served from its root).  External links are counted, not fetched
  (the check runs offline).

Every problem is printed as "PAGE: what is wrong" and the exit code is 1; the last line says how
many pages, links and anchors were checked.
"""

from __future__ import annotations

import argparse
import ast
import base64
import fcntl
import json
import os
import posixpath
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional
from urllib.parse import unquote, urlsplit

import yaml

ROOT = Path(__file__).resolve().parent.parent
NAMESPACE, NAME = "hpcnet", "rdma"
COLL_DIR = "collections/%s/%s" % (NAMESPACE, NAME)
EXTERNAL = ("http:", "https:", "mailto:", "ftp:", "data:", "javascript:")

# What the page reports about itself once loaded (returned by value through Runtime.evaluate).
PAGE_PROBE = r"""(() => {
  const attr = (sel, name) => [...document.querySelectorAll(sel)].map(e => e.getAttribute(name));
  const side = document.querySelector('.wy-nav-side');
  const h1 = document.querySelector('h1');
  return {
    url: location.href,
    title: document.title,
    h1: h1 ? h1.textContent.trim() : null,
    text_length: document.body ? document.body.innerText.trim().length : 0,
    links: attr('a[href]', 'href'),
    resources: attr('link[href]', 'href').concat(attr('script[src]', 'src'), attr('img[src]', 'src')),
    ids: [...document.querySelectorAll('[id]')].map(e => e.id).concat(attr('a[name]', 'name')),
    sheets: [...document.querySelectorAll('link[rel=stylesheet]')].map(l => [l.getAttribute('href'), !!l.sheet]),
    images: [...document.images].map(i => [i.getAttribute('src'), i.complete && i.naturalWidth > 0]),
    side_menu: side ? getComputedStyle(side).position : null,
  };
})()"""


class ChromiumError(RuntimeError):
    """Chromium did not start, answer or load a page."""


def _above_9(fd: int) -> int:
    new = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return new


class Chromium:
    """Headless Chromium over --remote-debugging-pipe (fd 3: commands in, fd 4: replies out, NUL-separated)."""

    def __init__(self, binary: str = "chromium", timeout: float = 30.0) -> None:
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="docsite-chromium-")
        cmd_r, self._cmd_w = os.pipe()
        self._out_r, out_w = os.pipe()
        # The child's ends above 9, so moving them to 3 and 4 cannot overwrite one with the other.
        cmd_r, out_w = _above_9(cmd_r), _above_9(out_w)
        argv = ["bash", "-c", 'exec "$0" "$@" 3<&%d 4>&%d' % (cmd_r, out_w), binary, "--headless=new",
                "--no-sandbox", "--disable-gpu", "--no-first-run", "--remote-debugging-pipe",
                "--user-data-dir=" + self.profile, "--allow-file-access-from-files", "about:blank"]
        # pylint: disable-next=consider-using-with
        self.proc = subprocess.Popen(argv, pass_fds=(cmd_r, out_w), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(cmd_r)
        os.close(out_w)
        self._buf = b""
        self._next_id = 0
        self._events: List[Dict[str, Any]] = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Page.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session=True)

    def _read(self, deadline: float) -> Dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._out_r], [], [], left)[0]:
                raise ChromiumError("no answer from Chromium within %.0f s" % self.timeout)
            chunk = os.read(self._out_r, 1 << 20)
            if not chunk:
                raise ChromiumError("Chromium exited (code %s)" % self.proc.poll())
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method: str, params: Optional[Dict[str, Any]] = None, session: bool = False) -> Dict[str, Any]:
        self._next_id += 1
        msg: Dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise ChromiumError("%s: %s" % (method, reply["error"].get("message")))
                return reply.get("result", {})
            if "method" in reply:
                self._events.append(reply)

    def _wait_event(self, method: str) -> None:
        deadline = time.monotonic() + self.timeout
        while True:
            for i, event in enumerate(self._events):
                if event["method"] == method and event.get("sessionId") == self.session:
                    del self._events[i]
                    return
            self._events.append(self._read(deadline))

    def load(self, url: str) -> Dict[str, Any]:
        """Navigate, wait for the load event, return what PAGE_PROBE reports."""
        self._events.clear()
        nav = self.call("Page.navigate", {"url": url}, session=True)
        if nav.get("errorText"):
            raise ChromiumError("%s: %s" % (url, nav["errorText"]))
        self._wait_event("Page.loadEventFired")
        res = self.call("Runtime.evaluate", {"expression": PAGE_PROBE, "returnByValue": True}, session=True)
        if "exceptionDetails" in res:
            raise ChromiumError("%s: probe failed: %s" % (url, res["exceptionDetails"].get("text")))
        return res["result"]["value"]

    def screenshot(self, url: str, path: Path) -> None:
        self.load(url)
        data = self.call("Page.captureScreenshot", {"format": "png"}, session=True)["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except ChromiumError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._cmd_w)
        os.close(self._out_r)
        shutil.rmtree(self.profile, ignore_errors=True)


def _doc_strings(path: Path) -> Dict[str, Any]:
    """DOCUMENTATION and RETURN of a Python plugin, parsed without importing it."""
    found: Dict[str, Any] = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id in ("DOCUMENTATION", "RETURN"):
                    found[target.id] = yaml.safe_load(node.value.value) or {}
    return found


def _fragment_options(repo: Path, name: str) -> Dict[str, Any]:
    """Options of one of this collection's doc fragments ("hpcnet.rdma.NAME[.VARIANT]"); others add none we check."""
    parts = name.split(".")
    if parts[:2] != [NAMESPACE, NAME] or len(parts) not in (3, 4):
        return {}
    attr = parts[3].upper() if len(parts) == 4 else "DOCUMENTATION"
    tree = ast.parse((repo / "plugins" / "doc_fragments" / ("%s.py" % parts[2])).read_text())
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ModuleDocFragment"):
        for node in cls.body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == attr for t in node.targets):
                return (yaml.safe_load(ast.literal_eval(node.value)) or {}).get("options") or {}
    raise ValueError("doc fragment %s: no %s in plugins/doc_fragments/%s.py" % (name, attr, parts[2]))


def expected_pages(repo: Path = ROOT) -> Dict[str, Dict[str, Any]]:
    """Site path -> what the page must show, from the collection's own files."""
    pages: Dict[str, Dict[str, Any]] = {}
    for path in sorted((repo / "plugins" / "modules").glob("*.py")):
        if path.name.startswith("_"):
            continue
        docs = _doc_strings(path)
        doc = docs.get("DOCUMENTATION", {})
        options = dict(doc.get("options") or {})
        for fragment in doc.get("extends_documentation_fragment") or []:
            options.update(_fragment_options(repo, fragment))
        pages["%s/%s_module.html" % (COLL_DIR, path.stem)] = {
            "title": "%s.%s.%s module" % (NAMESPACE, NAME, path.stem),
            "ids": ["parameter-" + o for o in options] + ["return-" + r for r in (docs.get("RETURN") or {})]}
    for spec in sorted((repo / "roles").glob("*/meta/argument_specs.yml")):
        role = spec.parent.parent.name
        entry_points = (yaml.safe_load(spec.read_text()) or {}).get("argument_specs") or {}
        pages["%s/%s_role.html" % (COLL_DIR, role)] = {
            "title": "%s.%s.%s role" % (NAMESPACE, NAME, role),
            "ids": ["parameter-%s--%s" % (ep, o) for ep, body in entry_points.items()
                    for o in (body.get("options") or {})]}
    for path in sorted((repo / "plugins" / "filter").glob("*.yml")):
        doc = yaml.safe_load(path.read_text()) or {}
        name = doc["DOCUMENTATION"]["name"]
        pages["%s/%s_filter.html" % (COLL_DIR, name)] = {
            "title": "%s.%s.%s filter" % (NAMESPACE, NAME, name),
            "ids": ["parameter-" + o for o in (doc["DOCUMENTATION"].get("options") or {})]}
    return pages


def _resolve(page: str, ref: str) -> tuple[Optional[str], str]:
    """(site path of a local reference from PAGE or None when it leaves the site, its fragment)."""
    parts = urlsplit(ref)
    path = unquote(parts.path)
    if not path:
        target = page
    elif path.startswith("/"):
        target = posixpath.normpath(path.lstrip("/") or ".")
    else:
        target = posixpath.normpath(posixpath.join(posixpath.dirname(page), path))
    if target == ".":
        target = "index.html"
    elif not target.endswith(".html") and not posixpath.splitext(target)[1]:
        target = posixpath.join(target, "index.html")
    if target.startswith("../"):
        return None, unquote(parts.fragment)
    return target, unquote(parts.fragment)


def check_links(site: Path, dom: Dict[str, Dict[str, Any]]) -> tuple[List[str], Dict[str, int]]:
    problems: List[str] = []
    counts = {"links": 0, "anchors": 0, "external": 0}
    for page, info in sorted(dom.items()):
        refs = [(r, True) for r in info["links"]] + [(r, False) for r in info["resources"]]
        for ref, is_link in refs:
            if ref.lower().startswith(EXTERNAL) or ref.startswith("//"):
                counts["external"] += 1
                continue
            if ref in ("#", ""):
                continue  # "to the top" / script-handled buttons of the theme
            target, fragment = _resolve(page, ref)
            counts["links"] += 1
            if target is None:
                problems.append("%s: broken link %r (leads out of the site)" % (page, ref))
                continue
            if not (site / target).is_file():
                problems.append("%s: broken link %r (no file %s in the site)" % (page, ref, target))
                continue
            if fragment and is_link and target.endswith(".html"):
                counts["anchors"] += 1
                if target not in dom:
                    problems.append("%s: link %r to a page that was not rendered (%s)" % (page, ref, target))
                elif fragment not in dom[target]["ids"]:
                    problems.append("%s: broken anchor %r (%s has no id %r)" % (page, ref, target, fragment))
    # A broken link repeated on one page (a module named in several places) is said once, with its count.
    said = {p: problems.count(p) for p in problems}
    return [p if n == 1 else "%s (%d times)" % (p, n) for p, n in said.items()], counts


def check_pages(dom: Dict[str, Dict[str, Any]], expected: Dict[str, Dict[str, Any]]) -> List[str]:
    problems: List[str] = []
    for page, info in sorted(dom.items()):
        unloaded = [href for href, ok in info["sheets"] if not ok]
        if unloaded:
            problems.append("%s: stylesheet(s) not loaded: %s" % (page, ", ".join(unloaded)))
        if info["side_menu"] != "fixed":
            problems.append("%s: the theme's CSS is not applied (side menu position %r)" % (page, info["side_menu"]))
        broken = [src for src, ok in info["images"] if not ok]
        if broken:
            problems.append("%s: image(s) not rendered: %s" % (page, ", ".join(broken)))
        # Sphinx's search page is the one without a heading of its own.
        if info["text_length"] < 40 or not (info["h1"] or page == "search.html"):
            problems.append("%s: rendered empty (%d characters, heading %r)" % (page, info["text_length"], info["h1"]))
    for page, want in sorted(expected.items()):
        info = dom.get(page)
        if info is None:
            problems.append("%s: missing - the site has no page for %s" % (page, want["title"]))
            continue
        if not (info["h1"] or "").startswith(want["title"]):
            problems.append("%s: heading %r does not name %s" % (page, info["h1"], want["title"]))
        ids = set(info["ids"])
        missing = [i for i in want["ids"] if i not in ids]
        if missing:
            problems.append("%s: %d of its documented options/return values not rendered: %s"
                            % (page, len(missing), ", ".join(missing)))
    index = dom.get(COLL_DIR + "/index.html")
    if index is None:
        problems.append("%s/index.html: missing - the collection has no index page" % COLL_DIR)
    else:
        linked = {_resolve(COLL_DIR + "/index.html", ref)[0] for ref in index["links"]}
        for page in sorted(set(expected) - linked):
            problems.append("%s/index.html: does not link to %s" % (COLL_DIR, page))
    root = dom.get("index.html")
    if root is not None and "collections/index.html" not in {_resolve("index.html", r)[0] for r in root["links"]}:
        problems.append("index.html: does not link to collections/index.html")
    return problems


def check_site(site: Path, chromium: str = "chromium", repo: Path = ROOT,
               screenshots: Optional[Dict[str, Path]] = None) -> Dict[str, Any]:
    """Load every page of SITE in Chromium and check it; the result names every problem."""
    site = site.resolve()
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html") if "_static" not in p.parts)
    if "index.html" not in pages:
        return {"pages": 0, "links": 0, "anchors": 0, "external": 0, "plugin_pages": 0, "documented": 0,
                "problems": ["%s: no index.html" % site]}
    browser = Chromium(chromium)
    dom: Dict[str, Dict[str, Any]] = {}
    problems: List[str] = []
    try:
        for page in pages:
            try:
                dom[page] = browser.load((site / page).as_uri())
            except ChromiumError as exc:
                problems.append("%s: did not load in Chromium: %s" % (page, exc))
        for page, png in (screenshots or {}).items():
            browser.screenshot((site / page).as_uri(), png)
    finally:
        browser.close()
    expected = expected_pages(repo)
    problems += check_pages(dom, expected)
    link_problems, counts = check_links(site, dom)
    return dict(counts, pages=len(dom), plugin_pages=len(expected),
                documented=sum(len(want["ids"]) for want in expected.values()), problems=problems + link_problems)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--site", type=Path, default=ROOT / "build" / "docs" / "html")
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM", "chromium"))
    parser.add_argument("--json", type=Path, help="write the result here too")
    parser.add_argument("--screenshot", action="append", default=[], metavar="PAGE=PNG",
                        help="also save a 1280x900 screenshot of a page of the site")
    args = parser.parse_args(argv)
    shots = {}
    for item in args.screenshot:
        page, _sep, png = item.partition("=")
        shots[page] = Path(png)
    started = time.monotonic()
    result = check_site(args.site, args.chromium, screenshots=shots)
    result["seconds"] = round(time.monotonic() - started, 1)
    for problem in result["problems"]:
        print("docs check: " + problem)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    print("docs check: %d pages rendered in headless Chromium (%d module/role/filter pages, %d documented options "
          "and return values looked for), %d local links and %d anchors checked, %d external links not fetched, "
          "%d problem(s), %.1f s"
          % (result["pages"], result["plugin_pages"], result["documented"], result["links"], result["anchors"],
             result["external"], len(result["problems"]), result["seconds"]))
    return 1 if result["problems"] or not result["pages"] else 0


if __name__ == "__main__":
    sys.exit(main())
