#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: bench_run
short_description: Plan a fabric benchmark between node pairs and store its run (controller side of hpcnet.rdma.rdma_bench)
version_added: 0.2.0
author:
  - hpcnet.rdma contributors (@hpcnet)
description:
  - An action plugin; it runs on the controller only and touches no node. The role C(hpcnet.rdma.rdma_bench)
    (playbook C(hpcnet.rdma.bench_rdma)) calls it with C(run_once).
  - O(stage=validate) checks O(options) and that O(results_dir) can be written, before any node is touched.
  - O(stage=plan) pairs the hosts (the C(pairing) key of O(options), C(ring) or C(pairs), the pairing the verify path-MTU probes use)
    and plans, per test, each server on the server's data address and each client, with their argv and ports.
    The C(mpi) test has no server; the pair's first node runs C(mpirun -np 2 --host CLIENT:1,SERVER:1 --mca pml ucx)
    (the two data addresses; the remote rank starts over ssh, so the pair's nodes must reach each other as the
    benchmark's user without a password; C(--allow-run-as-root) only when C(id -u) in O(nodes) says 0; mpirun's own
    control channel held to the two data addresses with C(oob_tcp_if_include); C(--timeout) from C(mpi_timeout);
    C(mpi_args) before the program) with the role's C(hpcnet-rdma-mpi-bench.py), which both nodes hold in
    O(node_dir).
    Every problem found - a node whose facts could not be read, one without a data address, without an RDMA
    device on its data interface (when a perftest test is asked for), a tool not installed - fails the task with
    one message naming each node and what it misses, before any server starts. With O(pings), a client that cannot
    ping its server's data address is such a problem too.
  - O(stage=retry) takes the first pass's O(results) and returns, per test and host, only the clients a signal killed
    (registered C(rc) below 0, as C(rc -11) for SIGSEGV) or whose C(ib_write_bw) completed but reported 0 Gbit/s
    because perftest could not measure its CPU clock (it prints C(Correlation coefficient r^2 ... < 0.9) on a noisy,
    for example emulated, clock), and the servers of their pairs (a perftest or C(iperf3 -s -1)
    server serves one client and exits, so the role starts it again for the retry). A client that exited with an
    error (C(rc) above 0) is not retried, except an C(mpi) client whose mpirun says a signal killed one of its ranks
    (C(exited on signal 11)), which is retried once like a client killed by a signal.
  - O(stage=store) parses every client's output (iperf3 C(-J); sockperf C(--full-log) raw samples; perftest
    C(--report_gbits) and C(-H) raw samples; for mpi the program's JSON line, every raw sample in microseconds, one
    C(series) entry per operation (C(pingpong) one-way latency = round trip / 2, C(allreduce)) and message size,
    each with its samples and statistics), computes p50/p90/p99/p99.9 from the raw samples (nearest rank), and
    writes the run as JSON (schema C(hpcnet.rdma.bench/1), published as the collection's
    C(schemas/bench-run.schema.json)) into O(results_dir), with each node's recorded profile, kernel, driver, firmware,
    MTU and RDMA device, and the time. M(hpcnet.rdma.bench_report) compares stored runs.
    A client killed by a signal is one error naming the tool and the signal (C(ib_send_lat killed by SIGSEGV (rc -11))),
    whatever it printed before; a pair O(retried) holds takes that second result, and every result records its
    C(attempts) (1, or 2 with C(first_attempt), the first error).
    A failed mpirun is one named error too - the remote rank could not be started over ssh, UCX found no usable
    device (C(PML ucx cannot be selected)), a rank killed by a signal, the C(mpi_timeout) time limit reached,
    mpi4py missing; else mpirun's exit code and the tail of its output.
requirements:
  - None on the nodes.
options:
  stage:
    description: What to do (see the description).
    type: str
    choices: [validate, plan, retry, store]
    default: plan
  options:
    description:
      - The benchmark options (the role's C(rdma_bench_*) variables without the prefix) - C(tests), C(pairing),
        C(duration), C(streams), C(port_base), C(sockperf_mps), C(sockperf_msg_size), C(lat_iterations),
        C(lat_size), C(bw_size), C(rdma_cm), C(gid_index), C(label), C(mpi_sizes) (message sizes in bytes),
        C(mpi_iterations) (recorded samples per operation and size; a tenth as many warm-up iterations run first),
        C(mpi_timeout) (seconds, mpirun C(--timeout)), C(mpi_args) (extra mpirun arguments, a list or one string
        split like a shell does). Missing ones take the role's defaults.
    type: dict
    default: {}
  nodes:
    description: Host name to C(info) (M(hpcnet.rdma.verify_info)), C(state) (M(hpcnet.rdma.tuning_state) status),
      C(which) (the result of C(which TOOL...)) and, for the C(mpi) test, C(uid) (the result of C(id -u)).
    type: dict
    default: {}
  hosts:
    description: The hosts in play order (pairing follows it); default the keys of O(nodes).
    type: list
    elements: str
  pings:
    description: With O(stage=plan), per client host the registered loop of pings to its servers' data addresses.
    type: dict
    default: {}
  plan:
    description: With O(stage=store), the plan O(stage=plan) returned.
    type: dict
  results:
    description: With O(stage=store), host to test to that host's client results (registered command results, in
      plan order).
    type: dict
    default: {}
  logs:
    description: With O(stage=store), host to test to the C(ansible.builtin.slurp) results of the sockperf C(--full-log)
      files, in the order of O(results).
    type: dict
    default: {}
  retried:
    description: With O(stage=store), host to test to the second pass's client results (registered loop results whose
      C(item.pair) names the pair), for the pairs O(stage=retry) returned.
    type: dict
    default: {}
  retried_logs:
    description: With O(stage=store), host to test to the second pass's C(ansible.builtin.slurp) results, by C(item.pair).
    type: dict
    default: {}
  started_at:
    description: With O(stage=store), when the benchmark started, an ISO 8601 timestamp C(YYYY-MM-DDTHH:MM:SSZ)
      (fractional seconds and a C(+HH:MM) offset allowed; anything else fails the task naming it, as it becomes part
      of the run's file name); default now.
    type: str
  node_dir:
    description: The directory on the nodes for the benchmark's files (sockperf C(--full-log) files, the C(mpi)
      test's program); the role passes C(rdma_bench_node_dir).
    type: path
    default: /run/hpcnet-rdma-bench
    version_added: 0.3.0
  results_dir:
    description: The directory on the controller the run is written to (created when missing).
    type: path
    default: rdma-bench-results
attributes:
  check_mode:
    details: An action plugin that touches no node; in check mode O(stage=store) writes no file.
seealso:
  - module: hpcnet.rdma.bench_server
  - module: hpcnet.rdma.bench_report
  - module: hpcnet.rdma.verify_info
extends_documentation_fragment:
  - hpcnet.rdma.attributes.controller
"""

EXAMPLES = r"""
- name: Plan the benchmark (after verify_info, tuning_state status and which ran on every node)
  hpcnet.rdma.bench_run:
    stage: plan
    options: {tests: [iperf3, sockperf], pairing: ring, duration: 5}
    nodes: "{{ dict(ansible_play_hosts | zip(ansible_play_hosts | map('extract', hostvars, '__rdma_bench_node'))) }}"
    hosts: "{{ ansible_play_hosts }}"
  run_once: true
  register: bench_plan
"""

RETURN = r"""
plan:
  description: With O(stage=plan), the pairs, each node's facts, per test and host the servers, the clients (argv,
    port) and the C(files) the role puts in O(node_dir) for the test (the C(mpi) program, on both nodes of a pair),
    the tools and the packages the tests need.
  returned: when O(stage=plan)
  type: dict
  sample: {"pairs": [{"id": "lab1->lab2", "client": "lab1", "server": "lab2", "address": "10.77.0.2"}],
           "tools": ["iperf3"], "packages": ["iperf3"], "problems": []}
tests:
  description: With O(stage=retry), the tests with a client to run again, in run order.
  returned: when O(stage=retry)
  type: list
  elements: str
steps:
  description: With O(stage=retry), per test and host the servers and clients of the second pass (as RV(plan) has them).
  returned: when O(stage=retry)
  type: dict
pairs:
  description: With O(stage=retry), per test the pairs run again.
  returned: when O(stage=retry)
  type: dict
  sample: {"ib_send_lat": ["vm1->vm2"]}
run:
  description: With O(stage=store), the stored run (schema C(hpcnet.rdma.bench/1)). A C(mpi) pair's result has
    C(series), one entry per operation and message size with C(op), C(bytes), C(samples) (every raw sample, us),
    C(count), C(mean), C(percentiles) and C(cdf).
  returned: when O(stage=store)
  type: dict
  sample: {"results": {"mpi": {"vm1->vm2": {"series": [{"op": "pingpong", "bytes": 8, "count": 1000,
           "percentiles": {"p50": 0.563, "p90": 0.62, "p99": 0.805, "p99.9": 3.469}}]}}}}
path:
  description: With O(stage=store), the file the run was written to (null in check mode).
  returned: when O(stage=store)
  type: str
  sample: rdma-bench-results/20261204T153000Z-run.json
rows:
  description: With O(stage=store), one line per test and pair.
  returned: when O(stage=store)
  type: list
  elements: str
"""

ARGUMENT_SPEC = dict(
    stage=dict(type="str", choices=["validate", "plan", "retry", "store"], default="plan"),
    options=dict(type="dict", default={}),
    nodes=dict(type="dict", default={}),
    hosts=dict(type="list", elements="str"),
    pings=dict(type="dict", default={}),
    plan=dict(type="dict"),
    results=dict(type="dict", default={}),
    logs=dict(type="dict", default={}),
    retried=dict(type="dict", default={}),
    retried_logs=dict(type="dict", default={}),
    started_at=dict(type="str"),
    node_dir=dict(type="path", default="/run/hpcnet-rdma-bench"),
    results_dir=dict(type="path", default="rdma-bench-results"),
)
