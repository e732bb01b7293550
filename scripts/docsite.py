"""Build the collection's documentation site with antsibull-docs and Sphinx (`make docs`).

  docsite.py build [--out build/docs]

The steps are antsibull-docs's own (what the build.sh that `antsibull-docs sphinx-init` writes
does), run from here so the result lands in OUT/html:

1. `antsibull-docs sphinx-init --use-current hpcnet.rdma` writes the Sphinx project into OUT/src;
2. `antsibull-docs collection --use-current` turns the collection's own DOCUMENTATION, role
   argument specs and filter docs (found through ANSIBLE_COLLECTIONS_PATH) into RST;
3. `sphinx-build -W --keep-going` renders it: every warning (a broken reference too) fails.

Two changes to what sphinx-init writes, both because the build must run offline:
- intersphinx reads one local inventory instead of fetching docs.python.org, jinja's site and
  docs.ansible.com.  Our docs refer to that site only (ansible.builtin plugins named with M(),
  and the "action plugin" / "common return values" / "configuration settings" pages the
  templates link to); the inventory names those targets with their addresses on it, built from
  the installed ansible-core's own plugin files, so a reference to a plugin that does not exist
  still fails the build.
- "This module is part of the hpcnet.rdma collection" links to the collection's index page of
  this site (the collection is not published in a registry, so the default link would lead
  nowhere), and "To install it" names the tarball, as docs/README-galaxy.md does.
And the site's front page says what the collection is (galaxy.yml's description) instead of
sphinx-init's "Welcome to my Ansible collection documentation"; its tables of contents are the
ones sphinx-init writes.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import yaml

COLLECTION = "hpcnet.rdma"
ROOT = Path(__file__).resolve().parent.parent
# Where antsibull-docs 2.28's sphinx-init points its ansible_devel intersphinx entry.
ANSIBLE_DOCS = "https://docs.ansible.com/projects/ansible/devel/"
# Pages of the Ansible docs (not plugins) the antsibull-docs templates refer to: label -> path.
ANSIBLE_PAGES = {
    "action_plugins": ("plugins/action.html#action-plugins", "Action plugins"),
    "common_return_values": ("reference_appendices/common_return_values.html#common-return-values",
                             "Return Values"),
    "ansible_configuration_settings": ("reference_appendices/config.html#ansible-configuration-settings",
                                       "Ansible Configuration Settings"),
}
# ansible-core plugin folders -> the plugin type antsibull-docs names in its labels.
PLUGIN_DIRS = ("become", "cache", "callback", "cliconf", "connection", "filter", "httpapi", "inventory",
               "lookup", "netconf", "shell", "strategy", "test", "vars")


def builtin_targets() -> dict[str, tuple[str, str]]:
    """Label -> (path, title) of every ansible.builtin plugin of the installed ansible-core."""
    import ansible  # pylint: disable=import-outside-toplevel

    base = Path(ansible.__file__).parent
    found: dict[str, set[str]] = {"module": {p.stem for p in (base / "modules").glob("*.py")}}
    for kind in PLUGIN_DIRS:
        # Python plugins, and the filters/tests documented by one YAML file each.
        found[kind] = {p.stem for p in (base / "plugins" / kind).glob("*.py")}
        found[kind] |= {p.stem for p in (base / "plugins" / kind).glob("*.yml")}
    targets = {}
    for kind, names in found.items():
        for name in sorted(n for n in names if not n.startswith("_")):
            label = "ansible_collections.ansible.builtin.%s_%s" % (name, kind)
            anchor = label.replace(".", "-").replace("_", "-")
            targets[label] = ("collections/ansible/builtin/%s_%s.html#%s" % (name, kind, anchor),
                              "ansible.builtin.%s %s" % (name, kind))
    return targets


def write_inventory(path: Path) -> int:
    """A Sphinx (intersphinx) inventory, format version 2, of the Ansible docs' targets we use."""
    targets = dict(ANSIBLE_PAGES)
    targets.update(builtin_targets())
    lines = "".join("%s std:label -1 %s %s\n" % (label, uri, title) for label, (uri, title) in sorted(targets.items()))
    header = b"# Sphinx inventory version 2\n# Project: Ansible\n# Version: devel\n" \
             b"# The remainder of this file is compressed using zlib.\n"
    path.write_bytes(header + zlib.compress(lines.encode()))
    return len(targets)


INDEX = """\
.. _docsite_root_index:

{title}
{underline}

{description}

The pages are generated from the collection's own documentation: each module's DOCUMENTATION,
each role's ``meta/argument_specs.yml``, each filter's documentation file.

.. toctree::
   :maxdepth: 2
   :caption: Collections:

   collections/index

.. toctree::
   :maxdepth: 1
   :caption: Plugin indexes:
   :glob:

   collections/index_*

.. toctree::
   :maxdepth: 1
   :caption: Reference indexes:

   collections/environment_variables
"""


def replace_block(text: str, key: str, value: str) -> str:
    """antsibull-docs.cfg: KEY's mapping replaced by one wildcard entry."""
    start = text.index(key + " = {")
    end = text.index("\n}", start) + 2
    return text[:start] + '%s = {\n  * = "%s"\n}' % (key, value) + text[end:]


def run(argv: list[str], cwd: Path) -> None:
    print("docs: " + " ".join(argv), flush=True)
    subprocess.run(argv, cwd=str(cwd), check=True)


def build(out: Path) -> int:
    if not os.environ.get("ANSIBLE_COLLECTIONS_PATH"):
        print("docs: ANSIBLE_COLLECTIONS_PATH is not set (make docs sets it to build/collections)", file=sys.stderr)
        return 2
    src, html = out / "src", out / "html"
    shutil.rmtree(out, ignore_errors=True)
    src.mkdir(parents=True)
    galaxy = yaml.safe_load((ROOT / "galaxy.yml").read_text())
    title = "%s - %s" % (COLLECTION, "RDMA and HPC network tuning for Linux nodes")
    index = out / "index.rst"
    index.write_text(INDEX.format(title=title, underline="=" * len(title), description=galaxy["description"]))
    run(["antsibull-docs", "sphinx-init", "--use-current", "--fail-on-error", "--dest-dir", str(src),
         "--index-rst-source", str(index),
         "--project", COLLECTION, "--copyright", "the hpcnet.rdma contributors",
         "--title", "hpcnet.rdma collection documentation", "--html-short-title", COLLECTION, COLLECTION], ROOT)

    cfg = src / "antsibull-docs.cfg"
    text = replace_block(cfg.read_text(), "collection_url", "index.html")
    tarball = "{namespace}-{name}-%s.tar.gz" % galaxy["version"]
    cfg.write_text(replace_block(text, "collection_install", "ansible-galaxy collection install " + tarball))

    inventory = src / "ansible_devel.inv"
    count = write_inventory(inventory)
    with (src / "conf.py").open("a") as conf:
        conf.write("\n# scripts/docsite.py: offline, one local inventory of the Ansible docs' targets (%d).\n"
                   "intersphinx_mapping = {'ansible_devel': (%r, %r)}\n" % (count, ANSIBLE_DOCS, str(inventory)))

    rst = src / "rst"
    rst.chmod(0o755)  # antsibull-docs wants the folder writable by its owner only
    run(["antsibull-docs", "--config-file", str(cfg), "collection", "--use-current", "--fail-on-error",
         "--cleanup", "everything", "--dest-dir", str(rst), COLLECTION], ROOT)
    run(["sphinx-build", "-b", "html", "-q", "-W", "--keep-going", "-c", str(src), str(rst), str(html)], ROOT)
    print("docs: site in %s (index: %s)" % (html, html / "index.html"))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    sub = parser.add_subparsers(dest="command", required=True)
    bld = sub.add_parser("build")
    bld.add_argument("--out", type=Path, default=ROOT / "build" / "docs")
    args = parser.parse_args(argv)
    try:
        return build(args.out.resolve())
    except subprocess.CalledProcessError as exc:
        print("docs: FAILED - %s exited %d" % (exc.cmd[0], exc.returncode), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
