"""Generate the variable table of each role's README.md from its meta/argument_specs.yml.

meta/argument_specs.yml is the one contract of a role's variables; the README shows it as a table
between the markers below, so the two can never disagree:

    <!-- BEGIN VARIABLES -->
    ...generated...
    <!-- END VARIABLES -->

    python3 scripts/role_docs.py                    # rewrite the table of every role under roles/
    python3 scripts/role_docs.py roles/tuning       # one role
    python3 scripts/role_docs.py --check            # exit 1 naming every README that is stale

A README without the markers gets a "## Variables" section with them appended (write mode); in
--check mode a missing marker is stale too. tests/unit/roles/tuning/test_role_docs.py runs --check.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import Any, Dict, Iterable, List, Mapping, Tuple

import yaml

BEGIN = "<!-- BEGIN VARIABLES -->"
END = "<!-- END VARIABLES -->"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTE = ("<!-- generated from meta/argument_specs.yml by scripts/role_docs.py: edit the specs, then run it -->")

# Ansible's documentation markup -> Markdown: C(code), O(option), V(value), M(module), I(italic), B(bold).
_MARKUP = [
    (re.compile(r"\b[COVMRLU]\(([^()]*(?:\([^()]*\)[^()]*)*)\)"), r"`\1`"),
    (re.compile(r"\bI\(([^()]*)\)"), r"*\1*"),
    (re.compile(r"\bB\(([^()]*)\)"), r"**\1**"),
]


def markdown(text: str) -> str:
    for pattern, repl in _MARKUP:
        text = pattern.sub(repl, text)
    return text


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _description(spec: Mapping[str, Any]) -> str:
    desc = spec.get("description", "")
    if isinstance(desc, list):
        desc = " ".join(str(d) for d in desc)
    return markdown(str(desc))


def _value(value: Any) -> str:
    return "`%s`" % json.dumps(value, sort_keys=True)


def _type(spec: Mapping[str, Any]) -> str:
    kind = spec.get("type", "str")
    if spec.get("elements"):
        kind = "%s of %s" % (kind, spec["elements"])
    return kind


def _default(spec: Mapping[str, Any]) -> str:
    if spec.get("required"):
        return "required"
    if "default" in spec:
        return _value(spec["default"])
    return "unset"


def rows(options: Mapping[str, Any], prefix: str = "") -> Iterable[Tuple[str, str, str, str, str]]:
    """One row per option, suboptions as ``parent.child`` right after their parent."""
    for name in sorted(options):
        spec = options[name] or {}
        choices = ", ".join(_value(c) for c in spec.get("choices", []))
        yield (prefix + name, _type(spec), _default(spec), choices, _description(spec))
        if spec.get("options"):
            yield from rows(spec["options"], prefix + name + ".")


def table(specs: Mapping[str, Any]) -> str:
    """The generated block (without the markers) for every entry point of a role's argument_specs."""
    out: List[str] = [NOTE, ""]
    entries = specs.get("argument_specs") or {}
    for entry in sorted(entries, key=lambda e: (e != "main", e)):
        spec = entries[entry] or {}
        if len(entries) > 1:
            out += ["### Entry point `%s`" % entry, ""]
        out += ["| Variable | Type | Default | Choices | Description |", "|---|---|---|---|---|"]
        for name, kind, default, choices, desc in rows(spec.get("options") or {}):
            out.append("| `%s` | %s | %s | %s | %s |" % (name, _cell(kind), _cell(default), _cell(choices), _cell(desc)))
        out.append("")
    return "\n".join(out)


def render(readme: str, specs: Mapping[str, Any]) -> str:
    """README text with the block between the markers replaced (or a Variables section appended)."""
    block = "%s\n%s%s" % (BEGIN, table(specs), END)
    if BEGIN in readme and END in readme and readme.index(BEGIN) < readme.index(END):
        head, rest = readme.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        return head + block + tail
    return readme.rstrip("\n") + "\n\n## Variables\n\n" + block + "\n"


def role_dirs(root: str = ROOT) -> List[str]:
    base = os.path.join(root, "roles")
    return sorted(os.path.join(base, d) for d in os.listdir(base)
                  if os.path.isfile(os.path.join(base, d, "meta", "argument_specs.yml")))


def load(role: str) -> Tuple[Dict[str, Any], str, str]:
    with open(os.path.join(role, "meta", "argument_specs.yml"), encoding="utf-8") as f:
        specs = yaml.safe_load(f) or {}
    path = os.path.join(role, "README.md")
    readme = ""
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            readme = f.read()
    else:
        readme = "# hpcnet.rdma.%s\n\n`meta/argument_specs.yml` is the contract of this role.\n" % os.path.basename(role)
    return specs, path, readme


def stale(role: str) -> bool:
    specs, path, readme = load(role)
    return not os.path.exists(path) or render(readme, specs) != readme


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a README's table is stale; write nothing")
    parser.add_argument("roles", nargs="*", help="role directories (default: every role under roles/ with argument specs)")
    args = parser.parse_args(argv)
    bad = []
    for role in args.roles or role_dirs():
        specs, path, readme = load(role)
        new = render(readme, specs)
        if new == readme and os.path.exists(path):
            continue
        if args.check:
            bad.append(path)
            continue
        with open(path, "w", encoding="utf-8") as f:
            f.write(new)
        print("wrote %s" % os.path.relpath(path))
    for path in bad:
        print("%s: the variable table disagrees with meta/argument_specs.yml; run python3 scripts/role_docs.py"
              % os.path.relpath(path), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
