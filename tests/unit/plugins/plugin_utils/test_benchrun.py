# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The benchmark plan (pairs, servers, clients, every missing piece named) and the stored run."""
from __future__ import annotations

import base64
import copy
import json
import os

import pytest

from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchload as bl
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchopts as bo
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchrun as br
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _findings_path

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures")
ALL_TOOLS = "/usr/bin/iperf3\n/usr/bin/sockperf\n/usr/bin/ib_write_bw\n/usr/bin/ib_send_lat\n/usr/bin/ib_write_lat\n"


def fixture(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as f:
        return f.read()


def node(i, rdma=True, address=True, tools=ALL_TOOLS, profile="mpi"):
    devices = {"rxe0": {"driver": "rdma_rxe", "fw_ver": None, "parent": "data0",
                        "ports": {1: {"state": "ACTIVE", "netdevs": ["data0"], "link_layer": "Ethernet",
                                      "active_mtu": 4096}}}} if rdma else {}
    info = {"fabric": {"netdevs": {"data0": {"mtu": 9000, "driver": "virtio_net"}}, "devices": devices},
            "data_interfaces": ["data0"], "addresses": {"data0": ["10.77.0.%d" % i] if address else []},
            "kernel": "6.1.0-57-amd64", "rdma_core": {"version": "44.0-2"}}
    state = {"profile": {"name": profile, "digest": "sha256:ab", "chain": [profile], "generation": 3}} if profile else {}
    return {"info": info, "state": state, "which": {"rc": 0, "stdout": tools}}


def nodes(n, **overrides):
    out = dict(("n%d" % i, node(i)) for i in range(1, n + 1))
    for host, kw in overrides.items():
        out[host] = node(int(host[1:]), **kw)
    return out


OPTS = bo.options({})


@pytest.mark.parametrize("hosts, mode, pairs", [
    (["a", "b"], "pairs", [("a", "b")]),
    (["a", "b", "c"], "pairs", [("a", "b")]),
    (["a", "b", "c", "d"], "pairs", [("a", "b"), ("c", "d")]),
    (["a", "b"], "ring", [("a", "b"), ("b", "a")]),
    (["a", "b", "c"], "ring", [("a", "b"), ("b", "c"), ("c", "a")]),
    (["a"], "ring", []),
    (["a"], "pairs", []),
])
def test_pairs_of(hosts, mode, pairs):
    assert _findings_path.pairs_of(hosts, mode) == pairs


def test_pairs_of_refuses_unknown_mode():
    with pytest.raises(ValueError, match="pairing 'mesh' is not one of ring, pairs"):
        _findings_path.pairs_of(["a", "b"], "mesh")


@pytest.mark.parametrize("given, message", [
    ({}, None),
    ({"tests": []}, "rdma_bench_tests: [] - give one or more of iperf3, sockperf"),
    ({"tests": ["iperf3", "netperf"]}, "rdma_bench_tests: ['iperf3', 'netperf'] - give one or more"),
    ({"tests": ["iperf3", "iperf3"]}, "rdma_bench_tests: ['iperf3', 'iperf3'] names a test twice"),
    ({"pairing": "mesh"}, "rdma_bench_pairing: 'mesh' is not one of ring, pairs"),
    ({"duration": 0}, "rdma_bench_duration: 0 is not an integer in 1..3600"),
    ({"duration": "5"}, None),                 # -e rdma_bench_duration=5 is text
    ({"duration": "5s"}, "rdma_bench_duration: '5s' is not an integer in 1..3600"),
    ({"rdma_cm": "no", "tests": "iperf3, sockperf"}, None),
    ({"rdma_cm": "maybe"}, "rdma_bench_rdma_cm: 'maybe' is not a boolean"),
    ({"streams": True}, "rdma_bench_streams: True is not an integer in 1..128"),
    ({"port_base": 80}, "rdma_bench_port_base: 80 is not an integer in 1024..65000"),
    ({"gid_index": -1}, "rdma_bench_gid_index: -1 is not null or an integer in 0..255"),
    ({"label": "../x"}, "rdma_bench_label: '../x' - letters, digits"),
    ({"label": ""}, "rdma_bench_label: ''"),
])
def test_validate_options(given, message):
    errors = bo.validate_options(bo.options(given))
    if message is None:
        assert errors == []
    else:
        assert len(errors) == 1 and errors[0].startswith(message), errors


@pytest.mark.parametrize("given, expected", [
    ({"duration": "7", "rdma_cm": "false", "tests": "iperf3,sockperf", "gid_index": ""},
     {"duration": 7, "rdma_cm": False, "tests": ["iperf3", "sockperf"], "gid_index": None}),
    ({"duration": 7, "rdma_cm": True, "gid_index": "3"}, {"duration": 7, "rdma_cm": True, "gid_index": 3}),
])
def test_options_read_extra_vars_text(given, expected):
    opts = bo.options(given)
    assert dict((k, opts[k]) for k in expected) == expected


def test_plan_two_nodes_pairs():
    p = br.plan(nodes(2), ["n1", "n2"], OPTS)
    assert p["problems"] == [] and p["left_out"] == []
    assert [x["id"] for x in p["pairs"]] == ["n1->n2"]
    assert p["packages"] == ["iperf3", "perftest", "sockperf"]
    iperf_srv = p["steps"]["iperf3"]["n2"]["servers"]
    assert iperf_srv == [{"name": "iperf3.18500", "listen": 18500,
                          "argv": ["iperf3", "-s", "-1", "-B", "10.77.0.2", "-p", "18500"]}]
    assert p["steps"]["iperf3"]["n1"]["clients"][0]["argv"] == [
        "iperf3", "-c", "10.77.0.2", "-B", "10.77.0.1", "-p", "18500", "-J", "-t", "5", "-P", "4"]
    sp = p["steps"]["sockperf"]["n1"]["clients"][0]
    assert sp["argv"][:8] == ["sockperf", "ping-pong", "--tcp", "-i", "10.77.0.2", "-p", "18501", "-t"]
    assert sp["log"] == "/run/hpcnet-rdma-bench/sockperf.0.full-log.csv" and sp["argv"][-1] == sp["log"]
    assert p["steps"]["ib_write_bw"]["n2"]["servers"][0]["argv"] == [
        "ib_write_bw", "-d", "rxe0", "-i", "1", "-p", "18502", "-F", "-R", "-s", "65536", "-D", "5", "--report_gbits"]
    assert p["steps"]["ib_write_bw"]["n2"]["servers"][0]["listen"] is None
    lat = p["steps"]["ib_send_lat"]["n1"]["clients"][0]["argv"]
    assert lat == ["ib_send_lat", "-d", "rxe0", "-i", "1", "-p", "18503", "-F", "-R", "-s", "2", "-n", "10000", "-H",
                   "10.77.0.2"]
    assert p["steps"]["ib_send_lat"]["n2"]["clients"] == [] and p["steps"]["ib_send_lat"]["n1"]["servers"] == []
    assert p["nodes"]["n1"]["profile"]["name"] == "mpi" and p["nodes"]["n1"]["mtu"] == 9000
    assert p["nodes"]["n1"]["rdma_device"] == "rxe0" and p["nodes"]["n1"]["rdma_mtu"] == 4096


def test_plan_gid_index_without_rdma_cm():
    p = br.plan(nodes(2), ["n1", "n2"], bo.options({"rdma_cm": False, "gid_index": 1, "tests": ["ib_write_bw"]}))
    argv = p["steps"]["ib_write_bw"]["n1"]["clients"][0]["argv"]
    assert "-R" not in argv and argv[argv.index("-x") + 1] == "1"


@pytest.mark.parametrize("n, pairing, ids, left_out", [
    (3, "pairs", ["n1->n2"], ["n3"]),
    (3, "ring", ["n1->n2", "n2->n3", "n3->n1"], []),
    (4, "pairs", ["n1->n2", "n3->n4"], []),
])
def test_plan_pairing_and_distinct_ports(n, pairing, ids, left_out):
    hosts = ["n%d" % i for i in range(1, n + 1)]
    p = br.plan(nodes(n), hosts, bo.options({"pairing": pairing}))
    assert [x["id"] for x in p["pairs"]] == ids and p["left_out"] == left_out
    ports = [s["argv"][s["argv"].index("-p") + 1] for t in p["steps"].values() for h in hosts
             for s in t[h]["servers"]]
    assert len(ports) == len(set(ports)) == len(ids) * len(OPTS["tests"])


@pytest.mark.parametrize("overrides, hosts, tests, problems", [
    ({"n2": {"rdma": False}}, ["n1", "n2"], None,
     ["n2: no RDMA device on its data interface data0 (rdma_bench_tests has ib_write_bw, ib_send_lat: load soft-RoCE"]),
    ({"n2": {"rdma": False}}, ["n1", "n2"], ["iperf3", "sockperf"], []),
    ({"n1": {"address": False}}, ["n1", "n2"], ["iperf3"],
     ["n1: no IPv4 address on its data interfaces ['data0'] (name one with rdma_bench_interfaces)"]),
    ({"n2": {"tools": "/usr/bin/iperf3\n"}}, ["n1", "n2"], ["iperf3", "sockperf", "ib_send_lat"],
     ["n2: ib_send_lat, sockperf not installed (packages perftest, sockperf; or let the role install them"]),
    ({}, ["n1"], ["iperf3"], ["only n1 in the play: a benchmark needs at least two hosts"]),
])
def test_plan_problems_name_the_node_and_what_is_missing(overrides, hosts, tests, problems):
    opts = bo.options({"tests": tests} if tests else {})
    p = br.plan(nodes(2, **overrides), hosts, opts)
    assert len(p["problems"]) == len(problems), p["problems"]
    for got, want in zip(p["problems"], problems):
        assert got.startswith(want), got


def test_plan_unreadable_node():
    all_nodes = nodes(2)
    all_nodes["n2"]["info"] = {"failed": True, "msg": "Failed to connect to the host via ssh"}
    p = br.plan(all_nodes, ["n1", "n2"], bo.options({"tests": ["iperf3"]}))
    assert p["problems"] == ["n2: its facts could not be read: Failed to connect to the host via ssh"]
    assert p["pairs"] == []


def test_reach_problems_name_client_server_and_address():
    p = br.plan(nodes(2), ["n1", "n2"], OPTS)
    pings = {"n1": {"results": [{"item": {"pair": "n1->n2"}, "rc": 1,
                                 "stdout": "2 packets transmitted, 0 received, 100% packet loss", "stderr": ""}]},
             "n2": {"results": []}}
    assert br.reach_problems(pings, p["pairs"]) == [
        "n1 cannot reach n2 at 10.77.0.2 (the peer's data address): 2 packets transmitted, 0 received, 100% packet loss"]
    pings["n1"]["results"][0]["rc"] = 0
    assert br.reach_problems(pings, p["pairs"]) == []


def client_results():
    return {"n1": {"iperf3": [{"rc": 0, "stdout": fixture("iperf3-J.loopback.captured.json"), "stderr": ""}],
                   "sockperf": [{"rc": 0, "stdout": fixture("sockperf-ping-pong.captured.txt"), "stderr": ""}],
                   "ib_write_bw": [{"rc": 0, "stdout": fixture("ib_write_bw.rxe.report_gbits.txt"), "stderr": ""}],
                   "ib_send_lat": [{"rc": 1, "stdout": "", "stderr": "Unable to init the socket connection"}]},
            "n2": {}}


def test_build_run_parses_and_names_errors(tmp_path):
    p = br.plan(nodes(2), ["n1", "n2"], OPTS)
    log = base64.b64encode(fixture("sockperf-ping-pong.full-log.captured.csv").encode()).decode()
    logs = {"n1": {"sockperf": [{"content": log, "encoding": "base64"}]}}
    run = br.build_run(p, client_results(), OPTS, ["n1", "n2"], "2026-12-04T15:00:00Z", "2026-12-04T15:01:00Z",
                       "20261204T150000Z-run", logs)
    assert run["schema"] == br.SCHEMA and run["profiles"] == {"n1": "mpi", "n2": "mpi"}
    assert run["results"]["iperf3"]["n1->n2"]["gbits_received"] == pytest.approx(15.362, abs=1e-3)
    assert run["results"]["sockperf"]["n1->n2"]["count"] == 1099
    assert run["results"]["ib_write_bw"]["n1->n2"]["gbits_average"] == 2.47
    assert run["results"]["ib_send_lat"]["n1->n2"]["error"].startswith("rc 1: no raw samples (-H)")
    assert run["errors"] == ["ib_send_lat n1->n2: " + run["results"]["ib_send_lat"]["n1->n2"]["error"]]
    rows = br.summary_rows(run)
    assert ("iperf3", "n1->n2", "15.362 Gbit/s") in rows
    path = tmp_path / "r.json"
    path.write_text(json.dumps(run))
    assert bl.load_run(str(path))["run_id"] == "20261204T150000Z-run"


def test_build_run_without_client_result_is_an_error():
    p = br.plan(nodes(2), ["n1", "n2"], bo.options({"tests": ["iperf3"]}))
    run = br.build_run(p, {}, bo.options({"tests": ["iperf3"]}), ["n1", "n2"], "t0", "t1", "id")
    assert run["errors"] == ["iperf3 n1->n2: not run"]


@pytest.mark.parametrize("content, message", [
    ("not json", "is not a stored hpcnet.rdma benchmark run: not JSON"),
    ('{"findings": []}', "is not a stored hpcnet.rdma benchmark run (no \"schema\": \"hpcnet.rdma.bench/1\""),
    ('[1, 2]', "is not a stored hpcnet.rdma benchmark run"),
    ('{"schema": "hpcnet.rdma.bench/1", "run_id": "x", "results": [], "pairs": [], "nodes": {}}',
     "a stored run needs 'results' (dict); it has 'list'"),
] + [(json.dumps(dict({"schema": "hpcnet.rdma.bench/1", "run_id": "x", "pairs": [], "nodes": {}}, **run)),
      "not a stored run the report can read: " + message) for run, message in [
    ({"results": {"iperf3": []}}, "results.iperf3 is list, not an object of pairs"),
    ({"results": {"iperf3": {"a->b": [1]}}}, 'results.iperf3["a->b"] is list, not an object'),
    ({"results": {"iperf3": {"a->b": {"gbits_received": "fast"}}}}, 'results.iperf3["a->b"].gbits_received: \'fast\' '
                                                                    "is not a number"),
    ({"results": {"sockperf": {"a->b": {"percentiles": {"p99": None}}}}},
     'results.sockperf["a->b"].percentiles.p99: None is not a number under a key pNN'),
    ({"results": {"sockperf": {"a->b": {"percentiles": [1]}}}}, 'results.sockperf["a->b"].percentiles is list'),
    ({"results": {"sockperf": {"a->b": {"cdf": [[50, "x"]]}}}},
     'results.sockperf["a->b"].cdf[0]: [50, \'x\'] is not [percentile, value]'),
    ({"results": {"sockperf": {"a->b": {"error": {"x": 1}}}}}, 'results.sockperf["a->b"].error is dict, not a string'),
    ({"results": {}, "label": 5}, "label: 5 is not a string"),
    ({"results": {}, "errors": [{"x": 1}]}, "errors: [{'x': 1}] is not a list of strings"),
    ({"results": {}, "profiles": {"n1": 3}}, "profiles: {'n1': 3} is not an object of profile names"),
]])
def test_load_run_refuses_what_is_not_a_run(tmp_path, content, message):
    path = tmp_path / "x.json"
    path.write_text(content)
    with pytest.raises(bl.NotARun, match=None) as e:
        bl.load_run(str(path))
    assert message in str(e.value) and str(path) in str(e.value)


def test_load_run_missing_file(tmp_path):
    with pytest.raises(bl.NotARun, match="cannot read it: No such file or directory"):
        bl.load_run(str(tmp_path / "nope.json"))


def test_plan_does_not_change_its_input():
    given = nodes(2)
    before = copy.deepcopy(given)
    br.plan(given, ["n1", "n2"], OPTS)
    assert given == before


@pytest.mark.parametrize("value, ok", [
    ("2026-12-04T15:54:29Z", True), ("2026-12-04T15:54:29.123Z", True), ("2026-12-04T15:54:29+01:00", True),
    ("../../../../tmp/x", False), ("2026-12-04T15:54:29Z/../../x", False), ("2026-13-04T15:54:29Z", False),
    ("2026-02-30T00:00:00Z", False), ("2026-12-04 15:54:29", False), ("", False), (20261204, False),
])
def test_started_at_must_be_a_timestamp(value, ok):
    problem = br.timestamp_problem("started_at", value)
    assert (problem is None) is ok
    if not ok:
        assert problem == "started_at: %r is not an ISO 8601 timestamp YYYY-MM-DDTHH:MM:SSZ (fractional seconds and a " \
                          "+HH:MM offset allowed)" % (value,)


PARTIAL_LAT = fixture("ib_send_lat.rxe.H.txt")[:400]   # what a client printed before it died


@pytest.mark.parametrize("test, res, error", [
    ("ib_send_lat", {"rc": -11, "stdout": PARTIAL_LAT, "stderr": ""}, "ib_send_lat killed by SIGSEGV (rc -11)"),
    ("ib_write_bw", {"rc": -9, "stdout": "", "stderr": "x\n y"}, "ib_write_bw killed by SIGKILL (rc -9): x y"),
    ("iperf3", {"rc": -6, "stdout": "{}", "stderr": ""}, "iperf3 killed by SIGABRT (rc -6)"),
    ("sockperf", {"rc": -200, "stdout": "", "stderr": ""}, "sockperf killed by signal 200 (rc -200)"),
])
def test_a_client_killed_by_a_signal_is_one_named_error(test, res, error):
    out = br.parse_client(test, res, None)
    assert out["error"] == error and set(out) == {"error", "signal"}


@pytest.mark.parametrize("res, signal", [
    ({"rc": -11}, "SIGSEGV"), ({"rc": 0}, None), ({"rc": 1}, None), ({"rc": None, "msg": "timeout"}, None),
    ({"skipped": True}, None), ({"rc": True}, None), ("x", None),
])
def test_killed_by(res, signal):
    assert br.killed_by(res) == signal


@pytest.mark.parametrize("test, res, reason", [
    ("ib_send_lat", {"rc": -11}, "SIGSEGV"),
    ("ib_write_bw", {"rc": 0, "stdout": fixture("ib_write_bw.rxe.no-clock.server.captured.txt"), "stderr": ""}, "clock"),
    ("ib_write_bw", {"rc": 0, "stdout": fixture("ib_write_bw.rxe.report_gbits.txt"), "stderr": ""}, None),
    ("ib_write_bw", {"rc": 1, "stdout": fixture("ib_write_bw.rxe.no-clock.server.captured.txt"), "stderr": ""}, None),
    ("iperf3", {"rc": 1, "stdout": "", "stderr": "refused"}, None),
])
def test_retry_reason(test, res, reason):
    assert br.retry_reason(test, res) == reason


def test_a_bandwidth_run_without_a_clock_is_run_again_and_its_second_result_kept():
    opts = bo.options({"tests": ["ib_write_bw"], "pairing": "ring"})
    p = br.plan(nodes(2), ["n1", "n2"], opts)
    zero = {"rc": 0, "stdout": fixture("ib_write_bw.rxe.no-clock.server.captured.txt"), "stderr": ""}
    good = {"rc": 0, "stdout": fixture("ib_write_bw.rxe.report_gbits.txt"), "stderr": ""}
    results = {"n1": {"ib_write_bw": [zero]}, "n2": {"ib_write_bw": [good]}}
    again = br.retry_plan(p, results, ["ib_write_bw"])
    assert again["pairs"] == {"ib_write_bw": ["n1->n2"]}
    retried = {"n1": {"ib_write_bw": [dict(good, item={"pair": "n1->n2"})]}}
    run = br.build_run(p, results, opts, ["n1", "n2"], "s", "f", "r", retried=retried)
    first = run["results"]["ib_write_bw"]["n1->n2"]
    assert first["attempts"] == 2 and first["gbits_average"] == 2.47 and "0 Gbit/s" in first["first_attempt"]
    assert run["results"]["ib_write_bw"]["n2->n1"]["attempts"] == 1 and run["errors"] == []


def _lat_plan():
    opts = bo.options({"tests": ["ib_send_lat", "iperf3"], "pairing": "ring"})
    return br.plan(nodes(3), ["n1", "n2", "n3"], opts), opts


def test_retry_plan_reruns_only_the_clients_a_signal_killed_with_their_servers():
    p, _opts = _lat_plan()
    killed = {"rc": -11, "stdout": "", "stderr": ""}
    results = {"n1": {"ib_send_lat": [killed], "iperf3": [{"rc": 1, "stdout": "", "stderr": "refused"}]},
               "n2": {"ib_send_lat": [{"rc": 0, "stdout": fixture("ib_send_lat.rxe.H.txt"), "stderr": ""}]},
               "n3": {}}
    again = br.retry_plan(p, results, ["ib_send_lat", "iperf3"])
    assert again["tests"] == ["ib_send_lat"] and again["pairs"] == {"ib_send_lat": ["n1->n2"]}   # rc 1: not retried
    steps = again["steps"]["ib_send_lat"]
    assert [c["pair"] for c in steps["n1"]["clients"]] == ["n1->n2"] and steps["n1"]["servers"] == []
    assert steps["n2"]["clients"] == [] and [s["name"] for s in steps["n2"]["servers"]] == [
        "ib_send_lat.%d" % steps["n1"]["clients"][0]["port"]]
    assert steps["n3"] == {"servers": [], "clients": [], "files": []}
    assert br.retry_plan(p, {}, ["ib_send_lat", "iperf3"]) == {"tests": [], "steps": {}, "pairs": {}}


@pytest.mark.parametrize("second, error, keys", [
    # the retry succeeded: its numbers, two attempts, the first attempt's error kept
    ({"rc": 0, "stdout": fixture("ib_send_lat.rxe.H.txt"), "stderr": ""}, None, {"percentiles", "first_attempt"}),
    # killed again: one named error, two attempts
    ({"rc": -11, "stdout": PARTIAL_LAT, "stderr": ""}, "ib_send_lat killed by SIGSEGV (rc -11)", {"first_attempt"}),
])
def test_build_run_takes_the_retry_and_records_attempts(second, error, keys):
    p, opts = _lat_plan()
    results = {"n1": {"ib_send_lat": [{"rc": -11, "stdout": PARTIAL_LAT, "stderr": ""}]},
               "n2": {"ib_send_lat": [{"rc": 0, "stdout": fixture("ib_send_lat.rxe.H.txt"), "stderr": ""}]},
               "n3": {"ib_send_lat": [{"rc": 1, "stdout": "", "stderr": "Couldn't connect"}]}}
    retried = {"n1": {"ib_send_lat": [dict(second, item={"pair": "n1->n2"})]}}
    run = br.build_run(p, results, dict(opts, tests=["ib_send_lat"]), ["n1", "n2", "n3"], "t0", "t1", "id",
                       retried=retried)
    first = run["results"]["ib_send_lat"]["n1->n2"]
    assert first["attempts"] == 2 and keys <= set(first) and first.get("error") == error
    assert first["first_attempt"] == "ib_send_lat killed by SIGSEGV (rc -11)"
    assert run["results"]["ib_send_lat"]["n2->n3"]["attempts"] == 1 and "error" not in run["results"]["ib_send_lat"]["n2->n3"]
    assert run["results"]["ib_send_lat"]["n3->n1"]["attempts"] == 1          # rc 1: never retried
    assert [e.split(":")[0] for e in run["errors"]] == (["ib_send_lat n1->n2"] if error else []) + ["ib_send_lat n3->n1"]


def test_load_run_refuses_json_nested_too_deeply(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("[" * 100000)
    with pytest.raises(bl.NotARun, match="not JSON"):
        bl.load_run(str(path))
