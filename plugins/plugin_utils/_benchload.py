# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A stored benchmark run read back (pure, no Ansible): :func:`load_run` reads the JSON that
``_benchrun.build_run`` made and :func:`check_run` proves it is a run the report can read (schema
``_benchrun.SCHEMA``, every field the report reads of the right type), else :class:`NotARun` naming
the file and the field.

The format is published as ``schemas/bench-run.schema.json`` (JSON Schema draft 2020-12, at the top of the
collection).  A run that passes the hand checks below is also validated against it when ``jsonschema`` (4.0 or
later) is importable on the controller; without it only the hand checks run, which cover every field the report
reads.
"""
from __future__ import annotations

import json
import os
import re
from typing import Any, Dict, List, Optional

from ansible_collections.hpcnet.rdma.plugins.plugin_utils._benchrun import SCHEMA


class NotARun(ValueError):
    """A file that is not a stored benchmark run."""


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# The fields of a pair's result the report reads, and what each must be (anything else is kept, never read).
_RESULT_NUMBERS = ("gbits_received", "gbits_average", "retransmits")


def _result_problem(res: Any, where: str) -> Optional[str]:
    if not isinstance(res, dict):
        return "%s is %s, not an object" % (where, type(res).__name__)
    if "error" in res and not isinstance(res["error"], str):
        return "%s.error is %s, not a string" % (where, type(res["error"]).__name__)
    for key in _RESULT_NUMBERS:
        if res.get(key) is not None and not _is_number(res[key]):
            return "%s.%s: %r is not a number" % (where, key, res[key])
    pct = res.get("percentiles")
    if pct is not None:
        if not isinstance(pct, dict):
            return "%s.percentiles is %s, not an object" % (where, type(pct).__name__)
        for k, v in pct.items():
            if not re.match(r"^p\d+(\.\d+)?$", str(k)) or not _is_number(v):
                return "%s.percentiles.%s: %r is not a number under a key pNN" % (where, k, v)
    cdf = res.get("cdf")
    if cdf is not None:
        if not isinstance(cdf, list):
            return "%s.cdf is %s, not a list" % (where, type(cdf).__name__)
        for i, point in enumerate(cdf):
            if not isinstance(point, list) or len(point) != 2 or not all(_is_number(x) for x in point):
                return "%s.cdf[%d]: %r is not [percentile, value]" % (where, i, point)
    series = res.get("series")
    if series is not None:
        if not isinstance(series, list):
            return "%s.series is %s, not a list" % (where, type(series).__name__)
        for i, entry in enumerate(series):
            if not isinstance(entry, dict) or not isinstance(entry.get("op"), str) \
                    or not isinstance(entry.get("bytes"), int) or isinstance(entry.get("bytes"), bool):
                return "%s.series[%d] is not an object with op (string) and bytes (integer)" % (where, i)
            problem = _result_problem(entry, "%s.series[%d]" % (where, i))
            if problem:
                return problem
    return None


def run_problem(data: Dict[str, Any]) -> Optional[str]:
    """The first field of a stored run (its schema checked) that the report cannot read, named with its path."""
    for key in ("label", "started_at", "finished_at"):
        if data.get(key) is not None and not isinstance(data[key], str):
            return "%s: %r is not a string" % (key, data[key])
    for test, per_pair in data["results"].items():
        if not isinstance(per_pair, dict):
            return "results.%s is %s, not an object of pairs" % (test, type(per_pair).__name__)
        for pair, res in per_pair.items():
            problem = _result_problem(res, "results.%s[%s]" % (test, json.dumps(pair)))
            if problem:
                return problem
    profiles = data.get("profiles")
    if profiles is not None and (not isinstance(profiles, dict)
                                 or not all(v is None or isinstance(v, str) for v in profiles.values())):
        return "profiles: %r is not an object of profile names (or null)" % (profiles,)
    errors = data.get("errors")
    if errors is not None and (not isinstance(errors, list) or not all(isinstance(e, str) for e in errors)):
        return "errors: %r is not a list of strings" % (errors,)
    return None


SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "schemas", "bench-run.schema.json")
_VALIDATOR: List[Any] = []


def validator(path: str = SCHEMA_FILE) -> Any:
    """A Draft 2020-12 validator of ``schemas/bench-run.schema.json``; None without jsonschema >= 4.0 (or the file)."""
    if not _VALIDATOR:
        try:
            import jsonschema
            with open(path, encoding="utf-8") as f:
                schema = json.load(f)
            _VALIDATOR.append(jsonschema.Draft202012Validator(schema))
        except (ImportError, AttributeError, OSError):
            _VALIDATOR.append(None)
    return _VALIDATOR[0]


def field_path(path: Any) -> str:
    """A JSON path as the hand checks name fields: ``results.iperf3["a->b"].cdf[0]``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += "[%d]" % part
        elif re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", part):
            out += ("." if out else "") + part
        else:
            out += "[%s]" % json.dumps(part)
    return out


def schema_problem(data: Any, check: Any = None) -> Optional[str]:
    """The first place ``data`` breaks the published schema, as ``field: what is wrong``; None when it fits or
    when there is no validator (no jsonschema on this controller)."""
    check = check or validator()
    if check is None:
        return None
    import jsonschema
    error = jsonschema.exceptions.best_match(check.iter_errors(data))
    if error is None:
        return None
    return "%s: %s" % (field_path(error.absolute_path) or "the run", error.message)


def check_run(data: Any, source: str) -> Dict[str, Any]:
    """``data`` when it is a stored run the report can read, else NotARun naming ``source`` and the field."""
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise NotARun("%s is not a stored hpcnet.rdma benchmark run (no \"schema\": \"%s\"; write one with "
                      "playbooks/bench_rdma.yml)" % (source, SCHEMA))
    for key, kind in (("run_id", str), ("results", dict), ("pairs", list), ("nodes", dict)):
        if not isinstance(data.get(key), kind):
            raise NotARun("%s: a stored run needs %r (%s); it has %r"
                          % (source, key, kind.__name__, type(data.get(key)).__name__))
    problem = run_problem(data)
    if problem:
        raise NotARun("%s: not a stored run the report can read: %s" % (source, problem))
    problem = schema_problem(data)
    if problem:
        raise NotARun("%s: not a stored run of schema %s (schemas/bench-run.schema.json): %s" % (source, SCHEMA, problem))
    return data


def load_run(path: str) -> Dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise NotARun("%s: cannot read it: %s" % (path, e.strerror or e))
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise NotARun("%s is not a stored hpcnet.rdma benchmark run: not JSON (%s)" % (path, e))
    return check_run(data, path)
