# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Benchmark runs: the plan (pairs, servers, clients, argv), the stored run (pure, no Ansible).

The role ``hpcnet.rdma.rdma_bench`` reads every node with ``hpcnet.rdma.verify_info`` (data interface,
address, RDMA device, kernel, driver, firmware, MTU) and ``hpcnet.rdma.tuning_state action=status``
(the recorded profile), then the action ``hpcnet.rdma.bench_run`` calls :func:`plan` on the controller:
pairs of hosts (``_findings_path.pairs_of``: a ring or disjoint pairs, the same pairing the verify path-MTU
probes use), for each test and pair a server on the server's data address and a client on the client,
with a TCP/rdma_cm port of its own.  After the clients ran, :func:`build_run` parses their output
(``_benchstats``) into one stored run: JSON, ``SCHEMA``, read back by ``_benchload.load_run``.  The options and the
tests' tables are ``_benchopts``.
"""
from __future__ import annotations

import base64
import binascii
import datetime
import re
import signal
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _benchstats, _findings_catalogue, _findings_path
from ansible_collections.hpcnet.rdma.plugins.plugin_utils._benchopts import (
    BANDWIDTH_TESTS, DEFAULTS, MPI_PROGRAM, PACKAGE, RDMA_TESTS, TESTS, TOOL)

SCHEMA = "hpcnet.rdma.bench/1"


# ---------------------------------------------------------------------- one node
def node_facts(node: Dict[str, Any]) -> Dict[str, Any]:
    """What a stored run keeps of one node: data interface and address, kernel, driver, firmware, MTU,
    the RDMA device on the data interface, the recorded profile; ``problems`` when a fact is missing."""
    info = node.get("info") or {}
    if not info or info.get("failed") or "fabric" not in info:
        return {"problems": ["its facts could not be read: %s" % (info.get("msg") or "no verify_info result")]}
    ifname, addr = _findings_path.data_address(info)
    netdev = ((info["fabric"].get("netdevs") or {}).get(ifname) or {}) if ifname else {}
    ports = _findings_catalogue.data_ports(info["fabric"], [ifname] if ifname else [])
    dev, port, pinfo = ports[0] if ports else (None, None, {})
    devinfo = (info["fabric"].get("devices") or {}).get(dev) or {}
    state = node.get("state") or {}
    profile = state.get("profile") if isinstance(state.get("profile"), dict) else None
    facts = {"interface": ifname, "address": addr, "mtu": netdev.get("mtu"), "driver": netdev.get("driver"),
             "kernel": info.get("kernel"), "firmware": devinfo.get("fw_ver"), "rdma_device": dev,
             "rdma_port": port, "rdma_port_state": pinfo.get("state"), "rdma_mtu": pinfo.get("active_mtu"),
             "rdma_driver": devinfo.get("driver"), "rdma_core": (info.get("rdma_core") or {}).get("version"),
             "profile": dict((k, profile.get(k)) for k in ("name", "digest", "chain", "applied_at", "generation")
                             if k in profile) if profile else None,
             "problems": []}
    if addr is None:
        facts["problems"].append("no IPv4 address on its data interfaces %s (name one with rdma_bench_interfaces)"
                                 % (info.get("data_interfaces") or []))
    return facts


def tools_missing(which: Optional[Dict[str, Any]], tools: List[str]) -> List[str]:
    """The tools ``which TOOL...`` did not find (its stdout lists the paths of those it found)."""
    if not isinstance(which, dict) or which.get("skipped"):
        return []
    found = set(line.rsplit("/", 1)[-1] for line in (which.get("stdout") or "").splitlines() if line.strip())
    return [t for t in tools if t not in found]


# ---------------------------------------------------------------------- the plan
def _argv(test: str, side: str, opts: Dict[str, Any], port: int, pair: Dict[str, Any], log: str) -> List[str]:
    dur, addr = str(opts["duration"]), pair["address"]
    if test == "iperf3":
        if side == "server":
            return ["iperf3", "-s", "-1", "-B", addr, "-p", str(port)]
        return ["iperf3", "-c", addr, "-B", pair["client_address"], "-p", str(port), "-J", "-t", dur,
                "-P", str(opts["streams"])]
    if test == "sockperf":
        if side == "server":
            return ["sockperf", "server", "--tcp", "-i", addr, "-p", str(port)]
        return ["sockperf", "ping-pong", "--tcp", "-i", addr, "-p", str(port), "-t", dur,
                "--mps", str(opts["sockperf_mps"]), "-m", str(opts["sockperf_msg_size"]), "--full-log", log]
    dev = pair["server_device"] if side == "server" else pair["client_device"]
    argv = [TOOL[test], "-d", dev, "-i", pair["server_port" if side == "server" else "client_port"] or "1",
            "-p", str(port), "-F"]
    if opts["rdma_cm"]:
        argv.append("-R")
    elif opts["gid_index"] is not None:
        argv += ["-x", str(opts["gid_index"])]
    if test == "ib_write_bw":
        argv += ["-s", str(opts["bw_size"]), "-D", dur, "--report_gbits"]
    else:
        argv += ["-s", str(opts["lat_size"]), "-n", str(opts["lat_iterations"])]
        if side == "client":
            argv.append("-H")
    if side == "client":
        argv.append(addr)
    return argv


def _mpi_argv(opts: Dict[str, Any], pair: Dict[str, Any], program: str, node_dir: str, as_root: bool) -> List[str]:
    """The pair's first node starts both ranks, one per data address (the remote one over ssh): UCX carries the
    traffic (``--mca pml ucx``, so /etc/ucx/ucx.conf and openmpi-mca-params.conf apply); mpirun's own control
    channel is held to the two data addresses (nodes often share a management address range, or a NAT address);
    ``--timeout`` bounds the job; ``rdma_bench_mpi_args`` go before the program."""
    ends = (pair["client_address"], pair["address"])
    argv = ["mpirun", "-np", "2", "--host", "%s:1,%s:1" % ends]
    if as_root:
        argv.append("--allow-run-as-root")
    argv += ["--mca", "pml", "ucx", "--mca", "oob_tcp_if_include", "%s/32,%s/32" % ends,
             "--timeout", str(opts["mpi_timeout"]), "-wdir", node_dir] + list(opts["mpi_args"])
    return argv + ["python3", "-I", program, "--sizes", ",".join(str(v) for v in opts["mpi_sizes"]),
                   "--iterations", str(opts["mpi_iterations"]), "--warmup", str(max(1, opts["mpi_iterations"] // 10))]


def runs_as_root(node: Dict[str, Any]) -> bool:
    """The registered ``id -u`` of the user the benchmark runs as on a node says 0."""
    uid = node.get("uid") if isinstance(node, dict) else None
    return isinstance(uid, dict) and uid.get("rc") == 0 and (uid.get("stdout") or "").strip() == "0"


def plan(nodes: Dict[str, Dict[str, Any]], hosts: List[str], opts: Dict[str, Any],
         node_dir: str = "/run/hpcnet-rdma-bench") -> Dict[str, Any]:
    """Pairs, then per test the servers, clients and node files of each host, and every problem found before a
    server starts.

    ``nodes[h]`` holds ``info`` (verify_info), ``state`` (tuning_state status), ``which`` (``which TOOL...``) and,
    for the mpi test, ``uid`` (``id -u``: mpirun needs ``--allow-run-as-root`` as root).  ``files`` are the role's
    files a host needs in ``node_dir`` for the test (the mpi program, on both nodes of a pair).
    A problem names the node and what is missing (its facts, a data address, an RDMA device, a tool); any
    problem fails the plan, so nothing is started.
    """
    facts = dict((h, node_facts(nodes.get(h) or {})) for h in hosts)
    problems = ["%s: %s" % (h, p) for h in hosts for p in facts[h]["problems"]]
    tools = sorted(set(TOOL[t] for t in opts["tests"]))
    for h in hosts:
        missing = tools_missing((nodes.get(h) or {}).get("which"), tools)
        if missing:
            packages = sorted(set(p for t in opts["tests"] if TOOL[t] in missing for p in PACKAGE[t]))
            problems.append("%s: %s not installed (packages %s; or let the role install them: rdma_bench_install: true)"
                            % (h, ", ".join(missing), ", ".join(packages)))
    usable = [h for h in hosts if not facts[h]["problems"]]
    if len(hosts) < 2:
        problems.append("only %s in the play: a benchmark needs at least two hosts (rdma_hosts)" % ", ".join(hosts))
    pairs = []
    for client, server in _findings_path.pairs_of(usable, opts["pairing"]):
        pairs.append({"id": "%s->%s" % (client, server), "client": client, "server": server,
                      "address": facts[server]["address"], "client_address": facts[client]["address"],
                      "client_device": facts[client]["rdma_device"], "server_device": facts[server]["rdma_device"],
                      "client_port": facts[client]["rdma_port"], "server_port": facts[server]["rdma_port"]})
    left_out = [h for h in usable if not any(h in (p["client"], p["server"]) for p in pairs)]
    if any(t in RDMA_TESTS for t in opts["tests"]):
        for h in usable:
            if not facts[h]["rdma_device"]:
                problems.append("%s: no RDMA device on its data interface %s (rdma_bench_tests has %s: load soft-RoCE "
                                "with the rdma_core role, or leave the perftest tests out)"
                                % (h, facts[h]["interface"], ", ".join(t for t in opts["tests"] if t in RDMA_TESTS)))
    steps: Dict[str, Dict[str, Dict[str, List[Dict[str, Any]]]]] = {}
    for ti, test in enumerate(opts["tests"]):
        per_host = dict((h, {"servers": [], "clients": [], "files": []}) for h in hosts)
        for pi, pair in enumerate(pairs):
            port = opts["port_base"] + pi * len(TESTS) + TESTS.index(test)
            log = "%s/%s.%d.full-log.csv" % (node_dir, test, pi)
            if test == "mpi":
                program = "%s/%s" % (node_dir, MPI_PROGRAM)
                for h in (pair["client"], pair["server"]):
                    if program not in per_host[h]["files"]:
                        per_host[h]["files"].append(program)
                per_host[pair["client"]]["clients"].append(
                    {"pair": pair["id"], "test": test, "port": None, "log": None, "peer": pair["server"],
                     "address": pair["address"],
                     "argv": _mpi_argv(opts, pair, program, node_dir, runs_as_root(nodes.get(pair["client"]) or {}))})
                continue
            # exactly hpcnet.rdma.bench_server's servers[] (name, argv, listen)
            per_host[pair["server"]]["servers"].append(
                {"name": "%s.%d" % (test, port), "argv": _argv(test, "server", opts, port, pair, log),
                 "listen": port if test in ("iperf3", "sockperf") else None})
            per_host[pair["client"]]["clients"].append(
                {"pair": pair["id"], "test": test, "port": port, "argv": _argv(test, "client", opts, port, pair, log),
                 "log": log if test == "sockperf" else None, "peer": pair["server"], "address": pair["address"]})
        steps[test] = per_host
    return {"pairs": pairs, "left_out": left_out, "nodes": facts, "steps": steps, "problems": problems,
            "tools": tools, "packages": sorted(set(p for t in opts["tests"] for p in PACKAGE[t]))}


def reach_problems(pings: Dict[str, Any], pairs: List[Dict[str, Any]]) -> List[str]:
    """A pair whose client cannot ping the server's data address, named (``pings[client]`` = the ping results)."""
    out = []
    for pair in pairs:
        res = pings.get(pair["client"]) or {}
        for item in res.get("results") or []:
            if (item.get("item") or {}).get("pair") == pair["id"] and item.get("rc") not in (0, None):
                out.append("%s cannot reach %s at %s (the peer's data address): %s"
                           % (pair["client"], pair["server"], pair["address"],
                              " ".join(((item.get("stdout") or "") + " " + (item.get("stderr") or "")).split())[-200:]
                              or "ping rc %s" % item.get("rc")))
    return out


# ---------------------------------------------------------------------- the stored run
_TIMESTAMP = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$")
TIMESTAMP_FORM = "an ISO 8601 timestamp YYYY-MM-DDTHH:MM:SSZ (fractional seconds and a +HH:MM offset allowed)"


def timestamp_problem(field: str, value: Any) -> Optional[str]:
    """Why ``value`` is not an ISO 8601 timestamp (it becomes part of a file name), naming ``field``; else None."""
    m = _TIMESTAMP.match(value) if isinstance(value, str) else None
    if m:
        try:
            datetime.datetime(*[int(g) for g in m.groups()[:6]])
            return None
        except ValueError:
            pass
    return "%s: %r is not %s" % (field, value, TIMESTAMP_FORM)


def killed_by(res: Any) -> Optional[str]:
    """The signal that killed a client (its registered ``rc`` is negative: Python's subprocess, which Ansible's
    command module uses, reports death by signal N as rc -N), as ``SIGSEGV``; None when it exited."""
    rc = res.get("rc") if isinstance(res, dict) else None
    if not isinstance(rc, int) or isinstance(rc, bool) or rc >= 0:
        return None
    try:
        return signal.Signals(-rc).name
    except ValueError:
        return "signal %d" % -rc


def retry_reason(test: str, res: Any) -> Optional[str]:
    """Why a first-pass client runs again: the signal that killed it (for mpi: the signal mpirun says killed a rank),
    or ``clock`` for an ib_write_bw that completed but could not measure its CPU clock (0 Gbit/s,
    :func:`_benchstats.parse_perftest_bw`); else None."""
    if test == "mpi" and not killed_by(res) and isinstance(res, dict) and res.get("rc") not in (0, None):
        rank = _benchstats.mpi_rank_signal((res.get("stdout") or "") + "\n" + (res.get("stderr") or ""))
        return rank["signal"] if rank else None
    if killed_by(res) or test != "ib_write_bw" or not isinstance(res, dict) or res.get("rc") != 0:
        return killed_by(res)
    said = _benchstats.parse_perftest_bw((res.get("stdout") or "") + "\n" + (res.get("stderr") or ""))
    return "clock" if said.get("clock") else None


def parse_client(test: str, res: Dict[str, Any], full_log: Optional[str]) -> Dict[str, Any]:
    """One client's registered command result (``rc``, ``stdout``, ``stderr``) -> the parsed result.

    A client killed by a signal is one error naming the tool and the signal, whatever it printed before
    it died (partial numbers are not a result)."""
    if res.get("skipped"):
        return {"error": "not run"}
    stdout, stderr = res.get("stdout") or "", res.get("stderr") or ""
    sig = killed_by(res)
    if sig:
        tail = _benchstats._tail(stderr)
        return {"error": "%s killed by %s (rc %s)%s" % (TOOL.get(test, test), sig, res["rc"], ": " + tail if tail else ""),
                "signal": sig}
    if res.get("rc") is None and res.get("msg"):
        return {"error": str(res.get("msg"))}
    if test == "iperf3":
        out = _benchstats.parse_iperf3(stdout)
    elif test == "sockperf":
        out = _benchstats.sockperf_result(stdout + "\n" + stderr, full_log) if res.get("rc") == 0 \
            else {"error": "sockperf rc %s: %s" % (res.get("rc"), _benchstats._tail(stdout + " " + stderr))}
    elif test == "mpi":
        out = _benchstats.mpi_result(stdout, stderr, res.get("rc"))
        if "error" in out:
            return out
    elif test == "ib_write_bw":
        out = _benchstats.parse_perftest_bw(stdout + "\n" + stderr)
    else:
        out = _benchstats.parse_perftest_lat(stdout)
    if res.get("rc") not in (0, None) and "error" not in out:
        out["warning"] = "exit code %s: %s" % (res.get("rc"), _benchstats._tail(stderr))
    if "error" in out and res.get("rc") not in (0, None):
        out["error"] = "rc %s: %s" % (res.get("rc"), out["error"])
    return out


def decode_log(slurped: Any) -> Optional[str]:
    """The text of a file ``ansible.builtin.slurp`` read (base64 ``content``), None when it could not."""
    if not isinstance(slurped, dict) or slurped.get("failed") or slurped.get("skipped") or "content" not in slurped:
        return None
    try:
        return base64.b64decode(slurped["content"]).decode("utf-8", "replace")
    except (binascii.Error, ValueError, TypeError):
        return None


def retry_plan(the_plan: Dict[str, Any], results: Dict[str, Dict[str, List[Dict[str, Any]]]],
               tests: List[str]) -> Dict[str, Any]:
    """The second pass: per test and host only the clients a signal killed in the first pass or whose perftest could
    not measure its clock (:func:`retry_reason`), and the servers of their pairs (a perftest or ``iperf3 -s -1``
    server serves one client and exits, so a retry needs its server started again).  A client that exited with an
    error (rc > 0) is not retried: it would fail the same way.
    ``tests`` lists the tests with something to retry, in run order; ``pairs`` the pairs per test."""
    steps: Dict[str, Dict[str, Dict[str, List[Dict[str, Any]]]]] = {}
    pairs: Dict[str, List[str]] = {}
    for test in tests:
        per_host = the_plan["steps"].get(test) or {}
        again, ends = [], set()      # the clients to run again; the hosts of their pairs
        for h, step in per_host.items():
            got = (results.get(h) or {}).get(test) or []
            for i, client in enumerate(step["clients"]):
                if i < len(got) and retry_reason(test, got[i]):
                    again.append(client)
                    ends.update((h, client["peer"]))
        if not again:
            continue
        pairs[test] = [c["pair"] for c in again]
        names = set("%s.%d" % (test, c["port"]) for c in again if c["port"] is not None)   # servers: TEST.PORT
        steps[test] = dict((h, {"servers": [srv for srv in step["servers"] if srv["name"] in names],
                                "clients": [c for c in step["clients"] if c["pair"] in pairs[test]],
                                "files": list(step.get("files") or []) if h in ends else []})
                           for h, step in per_host.items())
    return {"tests": [t for t in tests if t in steps], "steps": steps, "pairs": pairs}


def _by_pair(items: Any) -> Dict[str, Dict[str, Any]]:
    """Registered loop results keyed by their client's pair (``item.pair``)."""
    out = {}
    for res in items if isinstance(items, list) else []:
        pair = (res.get("item") or {}).get("pair") if isinstance(res, dict) and isinstance(res.get("item"), dict) else None
        if isinstance(pair, str):
            out[pair] = res
    return out


def build_run(the_plan: Dict[str, Any], results: Dict[str, Dict[str, List[Dict[str, Any]]]], opts: Dict[str, Any],
              hosts: List[str], started_at: str, finished_at: str, run_id: str,
              logs: Optional[Dict[str, Dict[str, List[Dict[str, Any]]]]] = None,
              retried: Optional[Dict[str, Dict[str, List[Dict[str, Any]]]]] = None,
              retried_logs: Optional[Dict[str, Dict[str, List[Dict[str, Any]]]]] = None) -> Dict[str, Any]:
    """The stored run.  ``results[host][test]`` = that host's client results in plan order; ``logs[host][test]``
    the ``slurp`` results of the sockperf ``--full-log`` files, in the same order.  ``retried[host][test]`` (and
    ``retried_logs``) are the second pass's results (:func:`retry_plan`), matched by ``item.pair``: a pair the
    second pass ran takes that result, and every result records its ``attempts`` (1 or 2)."""
    run: Dict[str, Any] = {"schema": SCHEMA, "run_id": run_id, "label": opts["label"], "started_at": started_at,
                           "finished_at": finished_at, "hosts": hosts,
                           "options": dict((k, opts[k]) for k in sorted(DEFAULTS)),
                           "nodes": the_plan["nodes"], "pairs": the_plan["pairs"], "left_out": the_plan["left_out"],
                           "profiles": dict((h, (the_plan["nodes"][h].get("profile") or {}).get("name"))
                                            for h in hosts),
                           "results": {}, "errors": []}
    for test in opts["tests"]:
        run["results"][test] = {}
        for h in hosts:
            planned = the_plan["steps"][test][h]["clients"]
            got = (results.get(h) or {}).get(test) or []
            slurped = ((logs or {}).get(h) or {}).get(test) or []
            again = _by_pair(((retried or {}).get(h) or {}).get(test))
            again_logs = _by_pair(((retried_logs or {}).get(h) or {}).get(test))
            for i, client in enumerate(planned):
                res = got[i] if i < len(got) and isinstance(got[i], dict) else {"skipped": True}
                first = None
                if client["pair"] in again and retry_reason(test, res):
                    first = parse_client(test, res, None)["error"]
                    res, log = again[client["pair"]], decode_log(again_logs.get(client["pair"]))
                else:
                    log = decode_log(slurped[i]) if i < len(slurped) else None
                parsed = parse_client(test, res, log)
                parsed["attempts"] = 2 if first else 1
                if first:
                    parsed["first_attempt"] = first
                parsed["argv"] = client["argv"]
                run["results"][test][client["pair"]] = parsed
                if "error" in parsed:
                    run["errors"].append("%s %s: %s" % (test, client["pair"], parsed["error"]))
    return run


def summary_rows(run: Dict[str, Any]) -> List[Tuple[str, str, str]]:
    """(test, pair, one-line result) for the play's output."""
    rows = []
    for test, per_pair in run["results"].items():
        for pair, r in per_pair.items():
            if "error" in r:
                rows.append((test, pair, "ERROR " + r["error"]))
            elif test in BANDWIDTH_TESTS:
                gbits = r.get("gbits_received") if test == "iperf3" else r.get("gbits_average")
                rows.append((test, pair, "%.3f Gbit/s" % gbits))
            else:
                for name, figure in _benchstats.series_of(r):     # the mpi test: one line per op and size
                    p = figure.get("percentiles") or {}
                    text = " ".join("%s=%.2fus" % (k, p[k]) for k in ("p50", "p90", "p99", "p99.9") if k in p)
                    rows.append((test, pair, (name + " " if name else "") + text))
    return rows
