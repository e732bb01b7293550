# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The published formats (issue 29, item 6): schemas/bench-run.schema.json and schemas/verify-report.schema.json
are JSON Schema draft 2020-12; real stored runs and verify reports fit them, broken ones fail naming the field,
and _benchload refuses a run that breaks the schema where the hand checks do not look."""
from __future__ import annotations

import base64
import copy
import json
import os
import re

import jsonschema
import pytest

from ansible_collections.hpcnet.rdma.plugins.action import fabric_verify_info
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchload as bl
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchopts as bo
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchrun as br
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _findings_catalogue as C
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _findings_report as R

from .test_benchreport import LAB_RUN, synthetic
from .test_benchrun import OPTS, client_results, fixture, nodes
from .test_findings_report import sample

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..")


def schema(name):
    with open(os.path.join(ROOT, "schemas", name), encoding="utf-8") as f:
        return json.load(f)


BENCH = jsonschema.Draft202012Validator(schema("bench-run.schema.json"))
VERIFY = jsonschema.Draft202012Validator(schema("verify-report.schema.json"))


def problems(validator, doc):
    return ["%s: %s" % (bl.field_path(e.absolute_path), e.message) for e in validator.iter_errors(doc)]


def test_the_schemas_are_draft_2020_12():
    for name in ("bench-run.schema.json", "verify-report.schema.json"):
        doc = schema(name)
        assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        jsonschema.Draft202012Validator.check_schema(doc)
    assert schema("bench-run.schema.json")["properties"]["schema"]["const"] == br.SCHEMA
    assert schema("verify-report.schema.json")["properties"]["schema"]["const"] == R.SCHEMA
    assert os.path.samefile(bl.SCHEMA_FILE, os.path.join(ROOT, "schemas", "bench-run.schema.json"))


def test_the_schemas_enums_are_the_codes():
    bench, verify = schema("bench-run.schema.json")["$defs"], schema("verify-report.schema.json")["$defs"]
    assert bench["test"]["enum"] == list(bo.TESTS)
    assert verify["family"]["enum"] == list(C.FAMILIES) and verify["severity"]["enum"] == list(C.SEVERITIES)
    assert verify["fail_on"]["enum"] == list(C.FAIL_ON)
    assert all(re.match(verify["finding"]["properties"]["id"]["pattern"], rule) for rule in C.RULES)


def built_runs():
    """Runs as _benchrun.build_run stores them, from the captured tool outputs the unit tests parse."""
    p = br.plan(nodes(2), ["n1", "n2"], OPTS)
    log = base64.b64encode(fixture("sockperf-ping-pong.full-log.captured.csv").encode()).decode()
    full = br.build_run(p, client_results(), OPTS, ["n1", "n2"], "2026-12-04T15:00:00Z", "2026-12-04T15:01:00Z",
                        "20261204T150000Z-run", {"n1": {"sockperf": [{"content": log, "encoding": "base64"}]}})
    killed = br.build_run(p, {"n1": {"ib_send_lat": [{"rc": -11, "stdout": "", "stderr": ""}]}}, OPTS, ["n1", "n2"],
                          "2026-12-04T15:00:00.5+01:00", "2026-12-04T15:01:00Z", "20261204T140000Z-run")
    return [full, killed]


def stored_runs():
    with open(LAB_RUN, encoding="utf-8") as f:
        lab = json.load(f)
    return [lab, synthetic("untuned", 8.0, 2.0, 1.0, None), synthetic("mpi", 12.0, 3.0, 0.5, "mpi", ["x: y"])] + built_runs()


def test_stored_runs_fit_the_schema(tmp_path):
    for i, run in enumerate(stored_runs()):
        assert problems(BENCH, run) == [], run["run_id"]
        path = tmp_path / ("%d.json" % i)
        path.write_text(json.dumps(run))
        assert bl.load_run(str(path))["run_id"] == run["run_id"]


def verify_reports(tmp_path):
    out = [sample(), R.build([], ["n1"], ["drift"], "never", "2026-12-04T00:00:00Z")]
    written = fabric_verify_info.write_reports(str(tmp_path), sample(), ["json"])
    with open(written["json"], encoding="utf-8") as f:
        out.append(json.load(f))
    with open(os.path.join(ROOT, "docs", "verify.md"), encoding="utf-8") as f:       # the documented example
        out.append(json.loads(re.search(r"JSON schema `hpcnet.rdma.verify/1`:\n\n```json\n(.*?)\n```", f.read(), re.S).group(1)))
    return out


def test_verify_reports_fit_the_schema(tmp_path):
    for report in verify_reports(tmp_path):
        assert problems(VERIFY, json.loads(R.to_json(report))) == []


def _set(doc, path, value):
    *parents, last = path
    for key in parents:
        doc = doc[key]
    if value is KeyError:
        del doc[last]
    else:
        doc[last] = value


LAB = ["results", "sockperf", "node1->node2"]


@pytest.mark.parametrize("path, value, message", [
    (["schema"], "hpcnet.rdma.bench/2", "schema: 'hpcnet.rdma.bench/1' was expected"),
    (["run_id"], KeyError, ": 'run_id' is a required property"),
    (["pairs", 0, "client"], KeyError, "pairs[0]: 'client' is a required property"),
    (["started_at"], "yesterday", "started_at: 'yesterday' does not match"),
    (["options", "pairing"], "star", "options.pairing: 'star' is not one of ['ring', 'pairs']"),
    (["nodes", "node1", "mtu"], "1500", "nodes.node1.mtu: '1500' is not of type 'integer', 'null'"),
    (LAB + ["count"], "many", 'results.sockperf["node1->node2"].count: \'many\' is not of type \'integer\', \'null\''),
    (LAB + ["mean"], "fast", 'results.sockperf["node1->node2"].mean: \'fast\' is not of type \'number\', \'null\''),
    (LAB + ["cdf", 3], [50.0], 'results.sockperf["node1->node2"].cdf[3]: [50.0] is too short'),
    (LAB + ["percentiles", "median"], 1.0, 'results.sockperf["node1->node2"].percentiles: \'median\' does not match'),
    (["results", "iperf3", "node1->node2", "intervals_gbits", 0], None,
     'results.iperf3["node1->node2"].intervals_gbits[0]: None is not of type \'number\''),
])
def test_a_broken_run_fails_naming_the_field(tmp_path, path, value, message):
    with open(LAB_RUN, encoding="utf-8") as f:
        run = json.load(f)
    _set(run, path, value)
    found = problems(BENCH, run)
    assert len(found) == 1 and found[0].startswith(message), found
    if path[0] in ("schema", "run_id"):
        return          # the hand checks refuse these first (test_benchrun)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(run))
    with pytest.raises(bl.NotARun) as e:
        bl.load_run(str(bad))
    field = message.split(": ")[0]
    if path[-1] in (3, "median"):        # what the report reads: the hand checks name it first, their way
        assert str(e.value).startswith("%s: not a stored run the report can read: %s" % (bad, field)), str(e.value)
    else:
        assert str(e.value).startswith("%s: not a stored run of schema hpcnet.rdma.bench/1 (schemas/bench-run.schema.json): "
                                       "%s" % (bad, message)), str(e.value)


@pytest.mark.parametrize("path, value, message", [
    (["schema"], "hpcnet.rdma.verify/2", "schema: 'hpcnet.rdma.verify/1' was expected"),
    (["generated_at"], KeyError, ": 'generated_at' is a required property"),
    (["fail_on"], "fatal", "fail_on: 'fatal' is not one of ['error', 'warning', 'info', 'never']"),
    (["gate", "counts", "error"], "2", "gate.counts.error: '2' is not of type 'integer'"),
    (["gate", "failed"], "yes", "gate.failed: 'yes' is not of type 'boolean'"),
    (["findings", 1, "severity"], "fatal", "findings[1].severity: 'fatal' is not one of ['error', 'warning', 'info']"),
    (["findings", 0, "evidence", 0, "node"], 7, "findings[0].evidence[0].node: 7 is not of type 'string'"),
    (["findings", 2, "fix"], KeyError, "findings[2]: 'fix' is required"),
    (["families", 0], "speed", "families[0]: 'speed' is not one of"),
])
def test_a_broken_verify_report_fails_naming_the_field(path, value, message):
    report = json.loads(R.to_json(sample()))
    _set(report, path, value)
    found = problems(VERIFY, report)
    assert len(found) == 1 and found[0].replace("is a required property", "is required").startswith(
        message.replace("is a required property", "is required")), found


def test_without_jsonschema_only_the_hand_checks_run(monkeypatch):
    """A controller without jsonschema (>= 4.0) still reads runs: the schema check is skipped, not failed."""
    run = copy.deepcopy(stored_runs()[0])
    run["options"]["pairing"] = "star"
    assert bl.schema_problem(run).startswith("options.pairing: 'star' is not one of")
    monkeypatch.setattr(bl, "_VALIDATOR", [])
    monkeypatch.setitem(__import__("sys").modules, "jsonschema", None)          # import jsonschema -> ImportError
    assert bl.validator() is None and bl.schema_problem(run) is None
    assert bl.check_run(run, "x.json") is run
