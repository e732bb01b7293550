# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The mpi test through the bench path: its options, plan (mpirun argv, node files), parser (real captures of
roles/rdma_bench/files/hpcnet-rdma-mpi-bench.py under mpirun and of mpirun's failures), retry, stored run, report.
The parser reads output of a program on the nodes: property-tested on arbitrary text (never an exception)."""
from __future__ import annotations

import json
import os
import tempfile

import pytest

from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchload as bl
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchreport as rep
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchopts as bo
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchrun as br
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchstats as bs

from .test_benchrun import ALL_TOOLS, nodes as _nodes

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures")


def capture(name):
    """A captured file without its '# ' header (where, how, versions, rc): the verbatim output (ssh's line ending
    "\\r\\n" put back: the file cannot hold a CR, ansible-test sanity's line-endings test refuses it)."""
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as f:
        text = "".join(line for line in f if not line.startswith("# "))
    return "\n".join(line + "\r" if line.startswith("ssh: ") else line for line in text.split("\n"))


GOOD = {"rc": 0, "stdout": capture("mpi-bench.loopback.captured.txt"), "stderr": ""}
SEGV = {"rc": 139, "stdout": "", "stderr": capture("mpirun.rank-segv.captured.stderr.txt")}
SSH = {"rc": 255, "stdout": "", "stderr": capture("mpirun.ssh-refused.captured.stderr.txt")}
MPI = bo.options({"tests": ["mpi"]})


def nodes(n):
    out = _nodes(n)
    for node in out.values():
        node["which"] = {"rc": 0, "stdout": ALL_TOOLS + "/usr/bin/mpirun\n"}
    return out


def uid(value):
    return {"rc": 0, "stdout": "%s\n" % value}


# ---------------------------------------------------------------------- the parser, on real captures
def test_the_program_s_samples_become_per_op_and_size_statistics():
    out = bs.mpi_result(GOOD["stdout"], "", 0)
    assert [(s["op"], s["bytes"], s["count"]) for s in out["series"]] == [
        ("pingpong", 8, 1000), ("allreduce", 8, 1000), ("pingpong", 1024, 1000), ("allreduce", 1024, 1000),
        ("pingpong", 65536, 1000), ("allreduce", 65536, 1000)]
    first = out["series"][0]
    assert first["percentiles"] == {"p50": 0.563, "p90": 0.62, "p99": 0.805, "p99.9": 3.469}
    assert len(first["samples"]) == 1000 and first["samples"][:3] == [0.592, 0.574, 0.659]          # raw samples kept, in order
    assert first["percentiles"]["p50"] == bs.percentile(sorted(first["samples"]), 50)
    assert out["series"][5]["percentiles"]["p99"] == 30.29
    assert out["mpi"] == {"library": "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, "
                                     "May 26, 2022", "standard": "3.1", "mpi4py": "3.1.4"}
    assert (out["iterations"], out["warmup"], out["hosts"]) == (1000, 100, ["vm", "vm"])


@pytest.mark.parametrize("name, rc, error, signal", [
    ("mpirun.ucx-no-device.captured.stderr.txt", 1,
     "UCX cannot be used for MPI here (pml ucx found no usable device or transport; see /etc/ucx/ucx.conf, "
     "UCX_NET_DEVICES, ucx_info -d): No components were able to be opened in the pml framework.", None),
    ("mpirun.ssh-refused.captured.stderr.txt", 255,
     "mpirun could not start the remote rank over ssh (the pair's nodes must reach each other as this user, without "
     "a password): ssh: connect to host 127.0.0.2 port 22: Connection refused", None),
    ("mpirun.rank-segv.captured.stderr.txt", 139, "MPI rank 1 on vm killed by SIGSEGV (mpirun rc 139)", "SIGSEGV"),
    ("mpirun.timeout.captured.stderr.txt", 110,
     "mpirun stopped the job at its time limit (rdma_bench_mpi_timeout): The user-provided time limit for job "
     "execution has been reached:", None),
    ("mpirun.rxe-ud-timeout.captured.stderr.txt", 134,
     "MPI rank 0 on vm1 killed by SIGABRT (mpirun rc 134); UCX said: UD endpoint 0x1cc08df0 to <no debug data>: "
     "unhandled timeout error (ud_ep.c:276)", "SIGABRT"),
    ("mpirun.rxe-no-aux-transport.captured.txt", 1,
     "UCX could not connect the ranks (see UCX_TLS, UCX_NET_DEVICES, ucx_info -d): no auxiliary transport to "
     "<no debug data>: Unsupported operation (select.c:549)", None),
    ("mpirun.no-mpi4py.captured.stderr.txt", 1,
     "mpi4py is not installed on a node of the pair (python3-mpi4py): ModuleNotFoundError: No module named 'mpi4py'",
     None),
])
def test_a_failed_mpirun_is_one_named_error(name, rc, error, signal):
    out = br.parse_client("mpi", {"rc": rc, "stdout": "", "stderr": capture(name)}, None)
    assert out == dict({"error": error}, **({"signal": signal} if signal else {}))


@pytest.mark.parametrize("stdout, error", [
    ("", "no hpcnet.rdma.mpi-bench/1 result in the output: no output"),
    ('{"schema": "hpcnet.rdma.mpi-bench/1", "unit": "usec", "series": [', "a line that is not JSON"),
    ('{"schema":"hpcnet.rdma.mpi-bench/1","unit":"ms","series":[]}', "samples are in 'ms', not usec"),
    ('{"schema":"hpcnet.rdma.mpi-bench/1","unit":"usec","series":[]}', "has no series"),
    ('{"schema":"hpcnet.rdma.mpi-bench/1","unit":"usec","series":[{"op":"bcast","bytes":8,"samples":[1]}]}',
     "series[0].op 'bcast' is not one of pingpong, allreduce"),
    ('{"schema":"hpcnet.rdma.mpi-bench/1","unit":"usec","series":[{"op":"pingpong","bytes":0,"samples":[1]}]}',
     "series[0].bytes 0 is not a positive integer"),
    ('{"schema":"hpcnet.rdma.mpi-bench/1","unit":"usec","series":[{"op":"pingpong","bytes":8,"samples":[]}]}',
     "series[0] (pingpong 8 B) has no samples"),
    ('{"schema":"hpcnet.rdma.mpi-bench/1","unit":"usec","series":[{"op":"pingpong","bytes":8,"samples":[-1]}]}',
     "a sample is not a non-negative number"),
    ('{"schema":"hpcnet.rdma.mpi-bench/1","unit":"usec","series":[{"op":"pingpong","bytes":8,"samples":["1"]}]}',
     "a sample is not a non-negative number"),
])
def test_what_is_not_the_program_s_result_is_named(stdout, error):
    assert error in br.parse_client("mpi", {"rc": 0, "stdout": stdout, "stderr": ""}, None)["error"]


def test_an_unknown_mpirun_failure_keeps_its_exit_code_and_tail():
    out = br.parse_client("mpi", {"rc": 3, "stdout": "", "stderr": "something\nelse  went wrong"}, None)
    assert out == {"error": "mpirun rc 3: something else went wrong"}


hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is not installed in this venv")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402
from hypothesis.configuration import set_hypothesis_home_dir  # noqa: E402

set_hypothesis_home_dir(os.path.join(tempfile.gettempdir(), "hpcnet-rdma-hypothesis"))
_SEED = GOOD["stdout"]


def _mutations():
    line = json.loads(_SEED)
    fields = st.sampled_from(["schema", "unit", "series", "mpi", "hosts", "iterations"])
    junk = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=5),
                     st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))

    def mutate(field_value):
        field, value = field_value
        doc = dict(line)
        doc[field] = value
        return json.dumps(doc)

    def series_entry(value):
        doc = dict(line, series=[dict(line["series"][0], samples=value)])
        return json.dumps(doc)

    return st.one_of(st.text(max_size=400), st.tuples(fields, junk).map(mutate),
                     st.lists(junk, max_size=4).map(series_entry),
                     st.integers(0, len(_SEED)).map(lambda n: _SEED[:n]))


@settings(max_examples=300, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(text=_mutations(), rc=st.one_of(st.none(), st.integers(-64, 255)), stderr=st.text(max_size=200))
def test_the_parser_never_raises_on_what_a_node_prints(text, rc, stderr):
    out = br.parse_client("mpi", {"rc": rc, "stdout": text, "stderr": stderr}, None)
    assert isinstance(out, dict) and ("error" in out) != ("series" in out)
    if "error" in out:
        assert isinstance(out["error"], str) and out["error"]
    else:
        assert all(s["count"] == len(s["samples"]) > 0 for s in out["series"])
    br.retry_reason("mpi", {"rc": rc, "stdout": text, "stderr": stderr})


# ---------------------------------------------------------------------- options and plan
@pytest.mark.parametrize("given, message", [
    ({"tests": ["mpi"]}, None),
    ({"mpi_sizes": "8, 4096"}, None),                           # -e rdma_bench_mpi_sizes=8,4096
    ({"mpi_args": "-x UCX_NET_DEVICES=rxe0:1"}, None),
    ({"mpi_sizes": []}, "rdma_bench_mpi_sizes: [] is not a list of different integers in 1..67108864"),
    ({"mpi_sizes": [8, 8]}, "rdma_bench_mpi_sizes: [8, 8]"),
    ({"mpi_sizes": [0]}, "rdma_bench_mpi_sizes: [0]"),
    ({"mpi_sizes": "8,big"}, "rdma_bench_mpi_sizes: [8, 'big']"),
    ({"mpi_iterations": 5}, "rdma_bench_mpi_iterations: 5 is not an integer in 10..1000000"),
    ({"mpi_timeout": "1h"}, "rdma_bench_mpi_timeout: '1h' is not an integer in 10..86400"),
    ({"mpi_args": [1]}, "rdma_bench_mpi_args: [1] is not a list of strings"),
    ({"mpi_args": "-x 'A=b"}, "rdma_bench_mpi_args: \"-x 'A=b\" is not a list of strings"),
])
def test_mpi_options(given, message):
    errors = bo.validate_options(bo.options(given))
    assert errors == ([] if message is None else errors[:1]) and (message is None or errors[0].startswith(message)), errors


@pytest.mark.parametrize("uid_n1, opts, head, tail", [
    (uid(0), {}, ["mpirun", "-np", "2", "--host", "10.77.0.1:1,10.77.0.2:1", "--allow-run-as-root"],
     ["--mca", "pml", "ucx", "--mca", "oob_tcp_if_include", "10.77.0.1/32,10.77.0.2/32", "--timeout", "300",
      "-wdir", "/srv/b", "python3", "-I", "/srv/b/hpcnet-rdma-mpi-bench.py", "--sizes", "8,1024,65536",
      "--iterations", "1000", "--warmup", "100"]),
    (uid(1000), {"mpi_args": ["-x", "UCX_NET_DEVICES=rxe0:1"], "mpi_sizes": [4], "mpi_iterations": 15,
                 "mpi_timeout": 60},
     ["mpirun", "-np", "2", "--host", "10.77.0.1:1,10.77.0.2:1", "--mca"],
     ["--timeout", "60", "-wdir", "/srv/b", "-x", "UCX_NET_DEVICES=rxe0:1", "python3", "-I",
      "/srv/b/hpcnet-rdma-mpi-bench.py", "--sizes", "4", "--iterations", "15", "--warmup", "1"]),
    (None, {}, ["mpirun", "-np", "2", "--host", "10.77.0.1:1,10.77.0.2:1", "--mca"], []),   # id -u not read
])
def test_the_pair_s_first_node_runs_mpirun_over_the_data_addresses(uid_n1, opts, head, tail):
    given = nodes(2)
    if uid_n1 is not None:
        given["n1"]["uid"] = uid_n1
    p = br.plan(given, ["n1", "n2"], bo.options(dict({"tests": ["mpi"]}, **opts)), "/srv/b")
    assert p["problems"] == [] and p["packages"] == ["openmpi-bin", "python3-mpi4py", "ucx-utils"]
    assert p["tools"] == ["mpirun"]
    client = p["steps"]["mpi"]["n1"]["clients"][0]
    assert client["argv"][:len(head)] == head and client["argv"][len(client["argv"]) - len(tail):] == tail
    assert (client["pair"], client["log"], client["peer"]) == ("n1->n2", None, "n2")
    assert p["steps"]["mpi"]["n1"]["files"] == p["steps"]["mpi"]["n2"]["files"] == ["/srv/b/hpcnet-rdma-mpi-bench.py"]
    assert p["steps"]["mpi"]["n2"]["servers"] == p["steps"]["mpi"]["n2"]["clients"] == []


def test_mpi_needs_mpirun_not_an_rdma_device():
    given = nodes(2)
    given["n2"]["which"] = {"rc": 1, "stdout": "/usr/bin/iperf3\n"}
    given["n2"]["info"]["fabric"]["devices"] = {}
    p = br.plan(given, ["n1", "n2"], MPI)
    assert p["problems"] == ["n2: mpirun not installed (packages openmpi-bin, python3-mpi4py, ucx-utils; or let the "
                             "role install them: rdma_bench_install: true)"]


# ---------------------------------------------------------------------- retry and the stored run
@pytest.mark.parametrize("first, retried", [(SEGV, True), (SSH, False), (GOOD, False),
                                            ({"rc": -9, "stdout": "", "stderr": ""}, True)])
def test_only_a_rank_killed_by_a_signal_is_run_again_with_the_program_on_both_nodes(first, retried):
    p = br.plan(nodes(4), ["n1", "n2", "n3", "n4"], MPI)
    again = br.retry_plan(p, {"n1": {"mpi": [first]}, "n3": {"mpi": [GOOD]}}, ["mpi"])
    if not retried:
        assert again == {"tests": [], "steps": {}, "pairs": {}}
        return
    steps = again["steps"]["mpi"]
    assert again["pairs"] == {"mpi": ["n1->n2"]} and [c["pair"] for c in steps["n1"]["clients"]] == ["n1->n2"]
    assert steps["n1"]["files"] == steps["n2"]["files"] == ["/run/hpcnet-rdma-bench/hpcnet-rdma-mpi-bench.py"]
    assert steps["n3"] == steps["n4"] == {"servers": [], "clients": [], "files": []}


def mpi_run(first=None, second=None, label="run", run_id="r"):
    first = first or GOOD
    p = br.plan(nodes(2), ["n1", "n2"], MPI)
    retried = {"n1": {"mpi": [dict(second, item={"pair": "n1->n2"})]}} if second else None
    return br.build_run(p, {"n1": {"mpi": [first]}}, dict(MPI, label=label), ["n1", "n2"],
                        "2026-12-07T08:00:00Z", "2026-12-07T08:01:00Z", run_id, retried=retried)


@pytest.mark.parametrize("second, error", [(GOOD, None), (SEGV, "MPI rank 1 on vm killed by SIGSEGV (mpirun rc 139)")])
def test_the_stored_run_keeps_the_retry_the_samples_and_passes_the_schema(tmp_path, second, error):
    run = mpi_run(SEGV, second)
    res = run["results"]["mpi"]["n1->n2"]
    assert res["attempts"] == 2 and res["first_attempt"] == "MPI rank 1 on vm killed by SIGSEGV (mpirun rc 139)"
    assert res.get("error") == error and run["errors"] == (["mpi n1->n2: " + error] if error else [])
    if not error:
        assert len(res["series"]) == 6 and len(res["series"][0]["samples"]) == 1000
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run))
    assert bl.load_run(str(path))["run_id"] == "r"                  # hand checks + the published JSON schema
    rows = br.summary_rows(run)
    assert rows[0] == (("mpi", "n1->n2", "ERROR " + error) if error else
                       ("mpi", "n1->n2", "pingpong 8 B p50=0.56us p90=0.62us p99=0.81us p99.9=3.47us"))


@pytest.mark.parametrize("series, problem", [
    ("x", "results.mpi[\"n1->n2\"].series is str, not a list"),
    ([{"op": "pingpong"}], "results.mpi[\"n1->n2\"].series[0] is not an object with op (string) and bytes (integer)"),
    ([{"op": "pingpong", "bytes": 8, "percentiles": {"p50": "fast"}}],
     "results.mpi[\"n1->n2\"].series[0].percentiles.p50: 'fast' is not a number"),
])
def test_a_stored_run_with_a_broken_series_is_named(series, problem):
    run = mpi_run()
    run["results"]["mpi"]["n1->n2"]["series"] = series
    with pytest.raises(bl.NotARun, match=problem.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        bl.check_run(run, "r.json")


# ---------------------------------------------------------------------- the report
def test_the_report_has_a_row_per_pair_op_size_and_figure_and_a_plot_series_each(tmp_path):
    before, after = mpi_run(label="untuned", run_id="a"), mpi_run(SEGV, label="mpi", run_id="b")
    after["results"]["mpi"]["n1->n2"].pop("error")
    after["errors"] = []
    after["results"]["mpi"]["n1->n2"]["series"] = [dict(s) for s in before["results"]["mpi"]["n1->n2"]["series"][:2]]
    faster = [round(v * 0.8, 3) for v in before["results"]["mpi"]["n1->n2"]["series"][0]["samples"]]
    after["results"]["mpi"]["n1->n2"]["series"][0] = dict(bs.summarize(faster), op="pingpong", bytes=8, samples=faster)
    paths = []
    for run in (before, after):
        paths.append(str(tmp_path / ("%s.json" % run["run_id"])))
        with open(paths[-1], "w", encoding="utf-8") as f:
            json.dump(run, f)
    table = rep.compare([before, after])
    rows = [(r["pair"], r["series"], r["metric"], r["values"]) for r in table["rows"]]
    assert len(rows) == 6 * 5 and rows[1] == ("n1->n2", "pingpong 8 B", "p50", [0.563, 0.45])
    assert rows[-1][1:] == ("allreduce 65536 B", "p99.9", [99.749, None])       # missing after: "-", no verdict
    md = rep.to_markdown(table)
    assert "## MPI latency (mpirun over UCX: ping-pong one-way, Allreduce; per message size)" in md
    assert ("| n1->n2 pingpong 8 B | p50 (us) | 0.563 (n=1000, IQR 0.549-0.588) | 0.450 (n=1000, IQR 0.439-0.47) | "
            "-20.1% [-21.0%, -19.0%] better |") in md
    pytest.importorskip("matplotlib")
    out = rep.report(paths, str(tmp_path / "report"))
    assert os.path.basename(out["plots"]["mpi"]) == "bench-mpi.png" and os.path.getsize(out["plots"]["mpi"]) > 0


@pytest.mark.parametrize("series, styles", [
    ([(0, ("a->b", "")), (1, ("a->b", ""))], [{}, {}]),             # one figure per pair: matplotlib's own cycle
    ([(0, ("a->b", "pingpong 8 B")), (0, ("a->b", "allreduce 8 B")), (1, ("a->b", "pingpong 8 B"))],
     [{"colormap": "tab10", "color": 0, "linestyle": "-"}, {"colormap": "tab10", "color": 1, "linestyle": "-"},
      {"colormap": "tab10", "color": 0, "linestyle": "--"}]),
    ([(0, ("p", "f%d" % i)) for i in range(11)][-1:] + [(0, ("p", "f%d" % i)) for i in range(10)],
     [{"colormap": "tab20", "color": i, "linestyle": "-"} for i in range(11)]),
])
def test_a_figure_keeps_its_colour_across_runs_and_a_run_its_line_style(series, styles):
    assert rep.series_styles(series) == styles


def test_real_stored_runs_of_the_vm_pair_load_and_compare():
    """The lab VM pair's untuned and tuned mpi runs (bench_rdma.yml, 2026-12-07) read back and compare."""
    runs = [bl.load_run(os.path.join(FIXTURES, "bench-run.vm-mpi-%s.captured.json" % n)) for n in ("untuned", "tuned")]
    assert [r["label"] for r in runs] == ["untuned", "mpi"] and all(r["errors"] == [] for r in runs)
    res = runs[1]["results"]["mpi"]["vm1->vm2"]
    assert res["attempts"] == 1 and "UCX_NET_DEVICES=data0" in res["argv"]
    first_two = [(s["op"], s["bytes"], len(s["samples"])) for s in res["series"]][:2]
    assert first_two == [("pingpong", 8, 200), ("allreduce", 8, 200)]
    rows = dict(((r["series"], r["metric"]), r) for r in rep.compare(runs)["rows"])
    assert rows[("pingpong 8 B", "p50")]["values"] == [653.61, 481.86]
    assert rows[("pingpong 8 B", "p50")]["verdicts"] == ["better"]


def test_a_real_run_whose_ranks_aborted_twice_is_stored_as_one_named_error_after_two_attempts():
    run = bl.load_run(os.path.join(FIXTURES, "bench-run.vm-mpi-rxe-abort.captured.json"))
    res = run["results"]["mpi"]["vm1->vm2"]
    assert (res["attempts"], res["signal"]) == (2, "SIGABRT") and res["first_attempt"] == res["error"]
    assert run["errors"] == ["mpi vm1->vm2: MPI rank 1 on 10.77.0.2 killed by SIGABRT (mpirun rc 134)"]
    assert br.summary_rows(run) == [("mpi", "vm1->vm2", "ERROR MPI rank 1 on 10.77.0.2 killed by SIGABRT (mpirun rc 134)")]
