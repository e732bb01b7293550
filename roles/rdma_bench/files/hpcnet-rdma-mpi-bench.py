# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""hpcnet-rdma-mpi-bench: MPI point-to-point and Allreduce latency between two ranks (python3 + mpi4py only).

The role hpcnet.rdma.rdma_bench puts this file at the same path on both nodes of a pair and the pair's first node
runs it under ``mpirun -np 2 --host A:1,B:1 --mca pml ucx ...``.  For each message size (bytes):

* ``pingpong`` - rank 0 sends the message to rank 1, which sends it back; one sample is the round trip / 2
  (one-way latency, as sockperf and perftest report it), timed on rank 0 with MPI.Wtime;
* ``allreduce`` - ``Allreduce(MPI.SUM)`` of that many unsigned chars after a Barrier; one sample is the slowest
  rank's time for that call (each rank times its own call, rank 0 keeps the per-iteration maximum).

``--warmup`` iterations of each op and size run first and are not recorded.  Rank 0 prints ONE line of JSON
(schema hpcnet.rdma.mpi-bench/1) with every raw sample in microseconds; the controller's parser
(``_benchstats.parse_mpi``) reads that line and ignores anything else mpirun prints.
"""
from __future__ import annotations

import argparse
import json
import socket
import sys

SCHEMA = "hpcnet.rdma.mpi-bench/1"


def sizes_arg(text):
    out = [int(s) for s in text.split(",") if s.strip()]
    if not out or any(s < 1 for s in out):
        raise argparse.ArgumentTypeError("give message sizes in bytes, 1 or more, comma-separated: %r" % text)
    return out


def pingpong(comm, mpi, size, iterations, warmup):
    """One-way latency samples (us) of rank 0; rank 1 only echoes."""
    buf = bytearray(size)
    msg = [buf, mpi.BYTE]
    rank = comm.Get_rank()
    samples = []
    comm.Barrier()
    for i in range(warmup + iterations):
        if rank == 0:
            t0 = mpi.Wtime()
            comm.Send(msg, dest=1, tag=1)
            comm.Recv(msg, source=1, tag=2)
            t1 = mpi.Wtime()
            if i >= warmup:
                samples.append((t1 - t0) * 1e6 / 2.0)
        elif rank == 1:
            comm.Recv(msg, source=0, tag=1)
            comm.Send(msg, dest=0, tag=2)
    return samples


def allreduce(comm, mpi, size, iterations, warmup):
    """Per-iteration maximum over the ranks of each rank's Allreduce time (us), on rank 0 (None elsewhere)."""
    send, recv = bytearray(size), bytearray(size)
    mine = []
    for i in range(warmup + iterations):
        comm.Barrier()
        t0 = mpi.Wtime()
        comm.Allreduce([send, mpi.UNSIGNED_CHAR], [recv, mpi.UNSIGNED_CHAR], op=mpi.SUM)
        t1 = mpi.Wtime()
        if i >= warmup:
            mine.append((t1 - t0) * 1e6)
    every = comm.gather(mine, root=0)
    if comm.Get_rank() != 0:
        return None
    return [max(column) for column in zip(*every)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--sizes", type=sizes_arg, default=[8, 1024, 65536], help="message sizes in bytes (8,1024,65536)")
    ap.add_argument("--iterations", type=int, default=1000, help="recorded samples per op and size (1000)")
    ap.add_argument("--warmup", type=int, default=100, help="unrecorded iterations before them (100)")
    ap.add_argument("--ops", default="pingpong,allreduce", help="pingpong, allreduce or both (the default)")
    args = ap.parse_args(argv)
    ops = [o for o in args.ops.split(",") if o]
    if args.iterations < 1 or args.warmup < 0 or not ops or any(o not in ("pingpong", "allreduce") for o in ops):
        ap.error("--iterations >= 1, --warmup >= 0, --ops of pingpong,allreduce")

    import mpi4py
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    if comm.Get_size() != 2:
        if comm.Get_rank() == 0:
            print("hpcnet-rdma-mpi-bench: needs exactly 2 ranks, got %d" % comm.Get_size(), file=sys.stderr)
        return 2
    series = []
    for size in args.sizes:
        for op in ops:
            run = pingpong if op == "pingpong" else allreduce
            samples = run(comm, MPI, size, args.iterations, args.warmup)
            series.append({"op": op, "bytes": size, "samples": [round(s, 3) for s in samples or []]})
    hosts = comm.gather(socket.gethostname(), root=0)
    if comm.Get_rank() == 0:
        library = MPI.Get_library_version().replace("\x00", "").strip().splitlines()
        doc = {"schema": SCHEMA, "unit": "usec", "ranks": comm.Get_size(), "hosts": hosts,
               "iterations": args.iterations, "warmup": args.warmup,
               "mpi": {"library": library[0] if library else "", "standard": "%d.%d" % MPI.Get_version(),
                       "mpi4py": mpi4py.__version__},
               "series": series}
        sys.stdout.write(json.dumps(doc, separators=(",", ":")) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
