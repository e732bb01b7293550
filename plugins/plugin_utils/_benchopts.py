# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Benchmark options (the role's ``rdma_bench_*`` variables without the prefix): the tests and their tools and
packages, the defaults, what ``-e name=value`` text reads as, and every problem with them named (pure, no Ansible).
``_benchrun`` plans and stores runs with them."""
from __future__ import annotations

import re
import shlex
from typing import Any, Dict, List

TESTS = ("iperf3", "sockperf", "ib_write_bw", "ib_send_lat", "ib_write_lat", "mpi")
RDMA_TESTS = ("ib_write_bw", "ib_send_lat", "ib_write_lat")
LATENCY_TESTS = ("sockperf", "ib_send_lat", "ib_write_lat", "mpi")
BANDWIDTH_TESTS = ("iperf3", "ib_write_bw")
# The tool binary of each test and the packages that ship it (Debian's names; iperf3, sockperf and perftest are
# also the RHEL family's; roles/rdma_bench/vars/main.yml installs the same).
TOOL = {"iperf3": "iperf3", "sockperf": "sockperf", "ib_write_bw": "ib_write_bw", "ib_send_lat": "ib_send_lat",
        "ib_write_lat": "ib_write_lat", "mpi": "mpirun"}
PACKAGE = {"iperf3": ("iperf3",), "sockperf": ("sockperf",), "ib_write_bw": ("perftest",), "ib_send_lat": ("perftest",),
           "ib_write_lat": ("perftest",), "mpi": ("openmpi-bin", "python3-mpi4py", "ucx-utils")}
# The mpi test's program (roles/rdma_bench/files/), put in the node directory on both nodes of each pair.
MPI_PROGRAM = "hpcnet-rdma-mpi-bench.py"
PAIRINGS = ("ring", "pairs")
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")

DEFAULTS: Dict[str, Any] = {"tests": ["iperf3", "sockperf", "ib_write_bw", "ib_send_lat"], "pairing": "pairs",
                            "duration": 5, "streams": 4, "port_base": 18500, "sockperf_mps": 10000,
                            "sockperf_msg_size": 64, "lat_iterations": 10000, "lat_size": 2,
                            "bw_size": 65536, "rdma_cm": True, "gid_index": None, "label": "run",
                            "mpi_sizes": [8, 1024, 65536], "mpi_iterations": 1000, "mpi_timeout": 300, "mpi_args": []}


def validate_options(opts: Dict[str, Any]) -> List[str]:
    """Every problem with the options as ``rdma_bench_<name>: <value> ...`` (empty when all are good)."""
    errors = []
    tests = opts.get("tests") or []
    bad = [t for t in tests if t not in TESTS]
    if bad or not tests:
        errors.append("rdma_bench_tests: %r - give one or more of %s" % (tests, ", ".join(TESTS)))
    if len(set(tests)) != len(tests):
        errors.append("rdma_bench_tests: %r names a test twice" % (tests,))
    if opts.get("pairing") not in PAIRINGS:
        errors.append("rdma_bench_pairing: %r is not one of %s" % (opts.get("pairing"), ", ".join(PAIRINGS)))
    ranges = {"duration": (1, 3600), "streams": (1, 128), "port_base": (1024, 65000), "sockperf_mps": (100, 1000000),
              "sockperf_msg_size": (14, 65000), "lat_iterations": (100, 10000000), "lat_size": (1, 8388608),
              "bw_size": (1, 8388608), "mpi_iterations": (10, 1000000), "mpi_timeout": (10, 86400)}
    for name, (lo, hi) in ranges.items():
        value = opts.get(name)
        if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
            errors.append("rdma_bench_%s: %r is not an integer in %d..%d" % (name, value, lo, hi))
    if not isinstance(opts.get("rdma_cm"), bool):
        errors.append("rdma_bench_rdma_cm: %r is not a boolean" % (opts.get("rdma_cm"),))
    gid = opts.get("gid_index")
    if gid is not None and (not isinstance(gid, int) or isinstance(gid, bool) or not 0 <= gid <= 255):
        errors.append("rdma_bench_gid_index: %r is not null or an integer in 0..255" % (gid,))
    sizes = opts.get("mpi_sizes")
    if (not isinstance(sizes, list) or not sizes or len(set(map(str, sizes))) != len(sizes)
            or not all(isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 67108864 for v in sizes)):
        errors.append("rdma_bench_mpi_sizes: %r is not a list of different integers in 1..67108864 (bytes)" % (sizes,))
    margs = opts.get("mpi_args")
    if not isinstance(margs, list) or not all(isinstance(a, str) for a in margs):
        errors.append("rdma_bench_mpi_args: %r is not a list of strings (mpirun arguments)" % (margs,))
    if not isinstance(opts.get("label"), str) or not _LABEL.match(opts.get("label") or ""):
        errors.append("rdma_bench_label: %r - letters, digits, '_', '.', '-' (1-64, no leading punctuation)"
                      % (opts.get("label"),))
    return errors


_INTS = ("duration", "streams", "port_base", "sockperf_mps", "sockperf_msg_size", "lat_iterations", "lat_size",
         "bw_size", "gid_index", "mpi_iterations", "mpi_timeout")
_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")


def options(given: Dict[str, Any]) -> Dict[str, Any]:
    """The defaults updated with ``given``; what ``-e name=value`` gives as text is read as Ansible's int, bool
    and comma-separated list types read it (a value that does not read stays as it is and validation names it)."""
    out = dict(DEFAULTS)
    out.update(dict((k, v) for k, v in given.items() if k in DEFAULTS))
    for k in _INTS:
        if isinstance(out[k], str) and re.match(r"^\s*-?\d+\s*$", out[k]):
            out[k] = int(out[k])
    if isinstance(out["rdma_cm"], str) and out["rdma_cm"].strip().lower() in _TRUE + _FALSE:
        out["rdma_cm"] = out["rdma_cm"].strip().lower() in _TRUE
    if isinstance(out["tests"], str):
        out["tests"] = [t.strip() for t in out["tests"].split(",") if t.strip()]
    if isinstance(out["mpi_sizes"], str):
        sizes = [v.strip() for v in out["mpi_sizes"].split(",") if v.strip()]
        out["mpi_sizes"] = [int(v) if re.match(r"^\d+$", v) else v for v in sizes]
    if isinstance(out["mpi_args"], str):
        try:
            out["mpi_args"] = shlex.split(out["mpi_args"])
        except ValueError:
            pass        # unbalanced quotes: validation names the value
    if out["gid_index"] == "":
        out["gid_index"] = None
    return out
