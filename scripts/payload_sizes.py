# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What AnsiballZ ships to the node for each module of the collection, measured offline.

Runs ansible-core's own dependency walk (``ansible.executor.module_common.recursive_finder``, the
function that builds every module's payload) on each file in plugins/modules and prints a table:

  module | mu files | mu lines | mu bytes | zip bytes

``mu`` counts this collection's module_utils files in the payload (the part the collection
controls); ``zip bytes`` is the whole payload zip as ansible-core deflates it (the module, the
collection's module_utils and ansible.module_utils), before base64.

  .venv/bin/python scripts/payload_sizes.py [--root CHECKOUT] [--markdown] [--files]

``--root`` measures another checkout (e.g. a ``git worktree`` of an older commit); ``--files``
lists each module's module_utils files.  Needs ansible-core (the project's venv); no network.
"""
from __future__ import annotations

import argparse
import datetime
import io
import os
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Dict, List, Tuple

NAMESPACE, NAME = "hpcnet", "rdma"
PREFIX = "ansible_collections/%s/%s/" % (NAMESPACE, NAME)

Row = Dict[str, object]


def install_collection_finder(root: Path, workdir: Path) -> None:
    """Make ``ansible_collections.hpcnet.rdma`` resolve to ``root`` (and only there)."""
    link = workdir / "ansible_collections" / NAMESPACE / NAME
    link.parent.mkdir(parents=True)
    link.symlink_to(root.resolve(), target_is_directory=True)
    from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder
    _AnsibleCollectionFinder(paths=[str(workdir)], scan_sys_paths=False)._install()


def payload(module_path: Path) -> Tuple[List[Tuple[str, bytes]], int]:
    """(collection module_utils files in the payload as (path, source), deflated zip size)."""
    from ansible.executor import module_common
    from ansible.executor.module_common import _builder, recursive_finder
    from ansible.module_utils.common.text.converters import to_bytes

    name = module_path.stem
    fqn = "ansible_collections.%s.%s.plugins.modules.%s" % (NAMESPACE, NAME, name)
    data = module_path.read_bytes()
    when = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, mode="w", compression=zipfile.ZIP_DEFLATED) as zf:
        recursive_finder(name, fqn, data, zf, when, _builder.ExtensionManager.create(task_vars={}))
        zf.writestr(module_common._make_zinfo(fqn.replace(".", "/") + ".py", when, zf=zf), to_bytes(data))
        mine = [(i.filename, zf.read(i.filename)) for i in zf.infolist()
                if i.filename.startswith(PREFIX + "plugins/module_utils/") and not i.filename.endswith("__init__.py")]
    return sorted(mine), len(buf.getvalue())


def measure(root: Path) -> List[Row]:
    rows: List[Row] = []
    for path in sorted((root / "plugins" / "modules").glob("*.py")):
        if path.name == "__init__.py":
            continue
        files, zip_bytes = payload(path)
        rows.append({"module": path.stem, "files": len(files),
                     "lines": sum(src.count(b"\n") for _name, src in files),
                     "bytes": sum(len(src) for _name, src in files), "zip": zip_bytes,
                     "names": [f[len(PREFIX + "plugins/module_utils/"):] for f, _src in files]})
    return rows


def table(rows: List[Row], markdown: bool, names: bool) -> str:
    head = ("module", "mu files", "mu lines", "mu bytes", "zip bytes")
    body = [(str(r["module"]), str(r["files"]), str(r["lines"]), str(r["bytes"]), str(r["zip"])) for r in rows]
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" if i == 0 else "--:" for i in range(len(head))) + "|"]
        out += ["| " + " | ".join(b) + " |" for b in body]
    else:
        width = [max(len(x) for x in col) for col in zip(head, *body)]
        fmt = "  ".join("%-*s" if i == 0 else "%*s" for i in range(len(head)))
        out = [fmt % tuple(v for pair in zip(width, row) for v in pair) for row in [head] + body]
    if names:
        out.append("")
        out += ["%s: %s" % (r["module"], " ".join(r["names"])) for r in rows]  # type: ignore[arg-type]
    return "\n".join(out)


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                    help="collection checkout to measure (default: this one)")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    ap.add_argument("--files", action="store_true", help="list each module's module_utils files")
    args = ap.parse_args(argv)
    if not (args.root / "galaxy.yml").is_file():
        ap.error("--root %s is not a collection checkout (no galaxy.yml)" % args.root)
    with tempfile.TemporaryDirectory(prefix="payload-sizes-") as tmp:
        os.environ.setdefault("ANSIBLE_LOCAL_TEMP", tmp)
        install_collection_finder(args.root, Path(tmp))
        print(table(measure(args.root), args.markdown, args.files))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
