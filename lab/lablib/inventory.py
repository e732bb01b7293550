# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab inventories: one group, rdma_nodes, with the lab's nodes (or none), written by `up` and
reset by `down`.  Rendered as text, without a YAML library (the lab is standard library only)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple, Sequence, Tuple, Union


class Folded(NamedTuple):
    """A value written as a YAML folded block scalar (`key: >-` and the text on the next line)."""

    text: str


Value = Union[str, int, Folded]
Vars = Sequence[Tuple[str, Value]]


def _vars(items: Vars, indent: str) -> list[str]:
    lines = []
    for key, value in items:
        if isinstance(value, Folded):
            lines += [f"{indent}{key}: >-", f"{indent}  {value.text}"]
        else:
            lines.append(f"{indent}{key}: {value}")
    return lines


def render(command: str, run_label: str, run_note: str, group_vars: Vars,
           hosts: Sequence[Tuple[str, Vars]]) -> str:
    """The inventory text.  `command` is the labctl command that writes it ("up", "vm up"), for
    the header; without hosts the group is empty (`hosts: {}`) and group_vars are left out."""
    down = command[:-len("up")] + "down"
    lines = [
        "---",
        f"# Written by `lab/labctl.py {command}`; reset by `lab/labctl.py {down}`. Do not edit by hand.",
        f"# {run_label}: {run_note}",
        "all:",
        "  children:",
        "    rdma_nodes:",
    ]
    if hosts:
        lines += ["      vars:", *_vars(group_vars, "        "), "      hosts:"]
        for name, host_vars in hosts:
            lines += [f"        {name}:", *_vars(host_vars, "          ")]
    else:
        lines.append("      hosts: {}")
    return "\n".join(lines) + "\n"


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
