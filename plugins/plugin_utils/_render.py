# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The reports' templates (``plugin_utils/templates/*.j2``, shipped in the collection) rendered with Jinja2,
which every Ansible controller has.  Both formats escape by default, so text a node controls (host and device
names, labels, pairs, errors, evidence) stays text whatever it holds:

- HTML (``*.html.j2``): Jinja2's autoescape.
- Markdown (``*.md.j2``): every ``{{ value }}`` goes through :func:`md_text` (the environment's ``finalize``,
  also the filter ``md``): one line, no HTML tag, link, image, code span, emphasis or table-cell break, no
  heading or quote at its start.

In both, ``|safe`` marks the few values the code formatted itself (numbers, a verdict with its interval).
"""
from __future__ import annotations

import json
import os
from typing import Any, Dict

import jinja2
from markupsafe import Markup

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")

_MD_ESCAPES = {"&": "&amp;", "<": "&lt;", "\\": "\\\\", "|": "\\|", "`": "\\`", "*": "\\*", "[": "\\[",
               "]": "\\]"}


def plain(value: Any) -> str:
    """A value as text: strings as they are, anything else as compact JSON."""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def md_text(text: Any) -> str:
    """Text from a node as inert Markdown, on one line: newlines and runs of blanks made one space; no HTML
    (``&`` and ``<`` as entities, so no tag or autolink can open and a ``>`` after it is plain text), no link,
    image, code span or emphasis (``[ ] ` *`` escaped), pipes escaped for a table cell, and a leading ``#``
    (heading) or ``>`` (block quote) escaped."""
    out = "".join(_MD_ESCAPES.get(c, c) for c in " ".join(plain(text).split()))
    return "\\" + out if out[:1] in ("#", ">") else out


def _finalize(value: Any) -> Any:
    if isinstance(value, Markup):
        return value
    return "" if value is None else md_text(value)


def _environment(fmt: str) -> jinja2.Environment:
    options: Dict[str, Any] = {"loader": jinja2.FileSystemLoader(TEMPLATES), "trim_blocks": True,
                               "lstrip_blocks": True, "keep_trailing_newline": True,
                               "undefined": jinja2.StrictUndefined}
    if fmt == "html":
        env = jinja2.Environment(autoescape=True, **options)
    else:
        env = jinja2.Environment(autoescape=False, finalize=_finalize, **options)
        env.filters["md"] = lambda v: Markup(md_text(v))
    env.filters["plain"] = plain
    return env


_ENVS: Dict[str, jinja2.Environment] = {}


def render(template: str, **context: Any) -> str:
    """``templates/<template>`` rendered; ``*.html.j2`` autoescaped as HTML, anything else as Markdown."""
    fmt = "html" if template.endswith(".html.j2") else "markdown"
    if fmt not in _ENVS:
        _ENVS[fmt] = _environment(fmt)
    return _ENVS[fmt].get_template(template).render(**context)
