# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``version_added`` agrees with the releases in changelogs/changelog.yaml, as ansible-doc renders it.

- A module, role or plugin listed in a release's ``modules:`` / ``plugins:`` / ``objects:`` has that
  release as its ``version_added``; listed in two releases, or in none, fails - unless it is not released
  yet and its ``version_added`` is the version ``galaxy.yml`` prepares (greater than every release).
- Options and return values: tests/unit/version_added/VERSION.yml records, for every release, the option
  and return value paths (aliases included) each module, role and plugin had in it.  A path gets the
  first release that has it; an option as old as its module carries no ``version_added`` (or the
  module's), a newer one carries that release's; a path in no release has a version greater than the
  newest release.  A choice added to an old option is said in its description (no field for it).

Cutting a release (CONTRIBUTING.md, "Release checklist") writes that release's file:

    PYTHONPATH=build/collections .venv/bin/python tests/unit/test_version_added.py snapshot VERSION
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any, Dict, List, Optional, Tuple

import pytest
import yaml
from packaging.version import Version

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.dirname(os.path.abspath(sys.executable))
COLLECTION = "hpcnet.rdma"
SNAPSHOTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "version_added")
# ansible-doc's type -> the changelog's key for it (modules, plugins: TYPE, objects: role).
PLUGIN_DIRS = {"filter": "filter", "test": "test", "lookup": "lookup", "callback": "callback", "inventory": "inventory"}


def collections_path() -> str:
    return os.path.join(ROOT, "build", "collections")


def ansible_doc(path: str, kind: str, names: List[str]) -> Dict[str, Any]:
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=path, ANSIBLE_NOCOLOR="1")
    if not names:
        return {}
    out = subprocess.run([os.path.join(BIN, "ansible-doc"), "-t", kind, "--json"] + names, env=env,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def listed(path: str, kind: str) -> List[str]:
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=path, ANSIBLE_NOCOLOR="1")
    out = subprocess.run([os.path.join(BIN, "ansible-doc"), "-t", kind, "--list", "--json", COLLECTION], env=env,
                         check=True, capture_output=True, text=True).stdout
    return sorted(n for n in json.loads(out) if n.startswith(COLLECTION + "."))


def walk(entries: Optional[Dict[str, Any]], child: str, prefix: str = "") -> Dict[str, Dict[str, Any]]:
    """Every option (``child="suboptions"``/``"options"``) or return value (``"contains"``) by dotted path."""
    acc = {}  # type: Dict[str, Dict[str, Any]]
    for name, entry in (entries or {}).items():
        entry = entry or {}
        acc[prefix + name] = entry
        acc.update(walk(entry.get(child), child, prefix + name + "."))
    return acc


def current(path: str) -> Dict[Tuple[str, str], Dict[str, Any]]:
    """(kind, short name) -> version_added, options and return values, as ansible-doc renders them."""
    found = {}  # type: Dict[Tuple[str, str], Dict[str, Any]]
    plugins = os.path.join(path, "ansible_collections", "hpcnet", "rdma", "plugins")
    kinds = ["module"] + [k for k, d in PLUGIN_DIRS.items() if os.path.isdir(os.path.join(plugins, d))]
    for kind in kinds:
        for fqcn, data in ansible_doc(path, kind, listed(path, kind)).items():
            doc = data.get("doc") or {}
            found[(kind, fqcn.split(".")[-1])] = {
                "version_added": doc.get("version_added"),
                "options": walk(doc.get("options"), "suboptions"),
                "returns": walk(data.get("return"), "contains"),
            }
    for fqcn, data in ansible_doc(path, "role", listed(path, "role")).items():
        options = {}  # type: Dict[str, Dict[str, Any]]
        main = (data.get("entry_points") or {}).get("main") or {}
        for entry, spec in (data.get("entry_points") or {}).items():
            prefix = "" if entry == "main" else entry + ":"
            options.update(walk((spec or {}).get("options"), "options", prefix))
        found[("role", fqcn.split(".")[-1])] = {"version_added": main.get("version_added"), "options": options, "returns": {}}
    return found


def names_of(paths: Dict[str, Dict[str, Any]]) -> List[str]:
    """Every path, and each path with its last part replaced by one of its aliases."""
    out = set()
    for p, entry in paths.items():
        out.add(p)
        head = p.rsplit(".", 1)[0] + "." if "." in p else ""
        for alias in entry.get("aliases") or []:
            out.add(head + alias)
    return sorted(out)


def changelog() -> Dict[str, Any]:
    with open(os.path.join(ROOT, "changelogs", "changelog.yaml"), encoding="utf-8") as f:
        return yaml.safe_load(f)


def releases() -> List[str]:
    return sorted(changelog().get("releases") or {}, key=Version)


def galaxy_version() -> str:
    with open(os.path.join(ROOT, "galaxy.yml"), encoding="utf-8") as f:
        return str(yaml.safe_load(f)["version"])


def release_of() -> Dict[Tuple[str, str], List[str]]:
    """(kind, name) -> the releases whose entry lists it as new."""
    out = {}  # type: Dict[Tuple[str, str], List[str]]
    for version, release in (changelog().get("releases") or {}).items():
        entries = [("module", m) for m in release.get("modules") or []]
        entries += [(kind, p) for kind, ps in (release.get("plugins") or {}).items() for p in ps or []]
        entries += [(kind, o) for kind, os_ in (release.get("objects") or {}).items() for o in os_ or []]
        for kind, entry in entries:
            name = entry["name"] if not entry.get("namespace") else entry["namespace"] + "." + entry["name"]
            out.setdefault((kind, name), []).append(str(version))
    return out


class _IndentedDumper(yaml.SafeDumper):  # pylint: disable=too-many-ancestors
    """Lists indented under their key, as yamllint (ansible-lint's yaml rule) wants them."""

    def increase_indent(self, flow=False, indentless=False):
        return super().increase_indent(flow, False)


def snapshot(version: str) -> Dict[str, Any]:
    with open(os.path.join(SNAPSHOTS, version + ".yml"), encoding="utf-8") as f:
        return yaml.safe_load(f) or {}


def undocumented_children(snaps: Dict[str, Any], kind: str, name: str, field: str, path: str, release: Optional[str]) -> bool:
    """Whether PATH's parent was in RELEASE without a word on what it holds (no suboptions, no contains).

    Its children, first documented later, may be as old as the parent (0.1.0 documented roce_qos_info's
    ``interfaces`` by a sample only), so a child without ``version_added`` passes; one with it must be right.
    """
    if "." not in path or release is None:
        return False
    parent = path.rsplit(".", 1)[0]
    paths = ((snaps[release].get(kind) or {}).get(name) or {}).get(field) or []
    return not any(p.startswith(parent + ".") for p in paths)


@pytest.fixture(scope="module")
def docs() -> Dict[Tuple[str, str], Dict[str, Any]]:
    return current(collections_path())


def test_galaxy_version_is_not_older_than_the_newest_release():
    newest = releases()[-1]
    assert Version(galaxy_version()) >= Version(newest), \
        "galaxy.yml version %s is older than the newest release %s in changelogs/changelog.yaml" % (galaxy_version(), newest)


def test_every_release_has_its_snapshot():
    missing = [v for v in releases() if not os.path.exists(os.path.join(SNAPSHOTS, v + ".yml"))]
    assert not missing, "no tests/unit/version_added/VERSION.yml for %s: run this file's 'snapshot VERSION' (see its docstring)" % missing


def test_each_module_role_and_plugin_has_the_version_of_the_release_listing_it(docs):
    rel = release_of()
    newest = releases()[-1]
    problems = []
    for (kind, name), doc in sorted(docs.items()):
        got = doc["version_added"]
        where = rel.get((kind, name), [])
        if len(where) > 1:
            problems.append("%s %s is listed as new in releases %s" % (kind, name, ", ".join(where)))
        elif where:
            if str(got) != where[0]:
                problems.append("%s %s: version_added %r, but changelogs/changelog.yaml lists it in release %s"
                                % (kind, name, got, where[0]))
        elif not (got and Version(str(got)) > Version(newest) and str(got) == galaxy_version()):
            problems.append("%s %s (version_added %r) is in no release of changelogs/changelog.yaml; a new one says the "
                            "version galaxy.yml prepares, greater than %s (galaxy.yml has %s)"
                            % (kind, name, got, newest, galaxy_version()))
    listed_only = sorted("%s %s" % k for k in rel if k not in docs)
    assert not listed_only, "listed as new in changelogs/changelog.yaml but not in the collection: %s" % listed_only
    assert not problems, "\n".join(problems)


def test_options_and_return_values_have_the_version_they_were_added_in(docs):
    order = releases()
    snaps = {v: snapshot(v) for v in order}
    problems = []
    for (kind, name), doc in sorted(docs.items()):
        own = str(doc["version_added"]) if doc["version_added"] else None
        for field in ("options", "returns"):
            firsts = {}  # type: Dict[str, Optional[str]]
            for path, entry in sorted(doc[field].items()):
                # sorted: a parent comes before its children
                names = set(names_of({path: entry}))
                firsts[path] = next((v for v in order
                                     if names & set(((snaps[v].get(kind) or {}).get(name) or {}).get(field) or [])), None)
                got = entry.get("version_added")
                got = str(got) if got is not None else None
                # what the entry inherits: its parent's release, or the module's, role's or plugin's own
                above = firsts[path.rsplit(".", 1)[0]] if "." in path else own
                what = "%s %s %s %s" % (kind, name, "option" if field == "options" else "return value", path)
                if firsts[path] is None:
                    if above is None and "." in path:
                        ok = got is None or Version(got) > Version(order[-1])
                    elif own is not None and Version(own) > Version(order[-1]):
                        ok = got in (None, own)
                    else:
                        ok = got is not None and Version(got) > Version(order[-1])
                    if not ok:
                        problems.append("%s is in no release: version_added must be the coming version (> %s), got %r"
                                        % (what, order[-1], got))
                elif firsts[path] == above:
                    if got not in (None, above):
                        problems.append("%s came in %s with what holds it: no version_added (got %r)" % (what, above, got))
                elif got != firsts[path] and not (got is None and undocumented_children(snaps, kind, name, field, path, above)):
                    problems.append("%s was added in %s: version_added %s, got %r" % (what, firsts[path], firsts[path], got))
    assert not problems, "\n".join(problems)


def write_snapshot(version: str, path: str) -> str:
    """The option and return value paths of what the changelog lists in releases up to VERSION."""
    rel = release_of()
    out = {}  # type: Dict[str, Dict[str, Dict[str, List[str]]]]
    for (kind, name), doc in sorted(current(path).items()):
        where = rel.get((kind, name), [])
        if not where or Version(where[0]) > Version(version):
            continue
        out.setdefault(kind, {})[name] = {"options": names_of(doc["options"]), "returns": names_of(doc["returns"])}
    target = os.path.join(SNAPSHOTS, version + ".yml")
    with open(target, "w", encoding="utf-8") as f:
        f.write("---\n# Option and return value paths (aliases included) of every module, role and plugin in release %s,\n"
                "# written by tests/unit/test_version_added.py snapshot %s; never edited by hand.\n" % (version, version))
        yaml.dump(out, f, Dumper=_IndentedDumper, default_flow_style=False, sort_keys=True, width=160)
    return target


if __name__ == "__main__":
    # snapshot VERSION [COLLECTIONS_PATH]: COLLECTIONS_PATH holds ansible_collections/hpcnet/rdma as released.
    if len(sys.argv) not in (3, 4) or sys.argv[1] != "snapshot":
        sys.exit("usage: %s snapshot VERSION [COLLECTIONS_PATH]" % sys.argv[0])
    print(write_snapshot(sys.argv[2], sys.argv[3] if len(sys.argv) == 4 else collections_path()))
