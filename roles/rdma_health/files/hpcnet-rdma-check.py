# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""hpcnet-rdma-check: the node's RDMA fabric health, for Slurm's HealthCheckProgram and prolog (python3 stdlib).

Installed by the role hpcnet.rdma.rdma_health with the collection's own readers: the module_utils files
the check imports are copied, with their package path, under LIB (ansible_collections/hpcnet/rdma/
plugins/module_utils/...), so this reads the node through the same code as fabric_info and verify_info.

  hpcnet-rdma-check                     exit 0 when healthy; else exit 1 and one line
                                        "ERROR: hpcnet-rdma: <code> <summary>" (the NHC convention)
  hpcnet-rdma-check --json              every finding {code, severity, evidence, fix}, the stages' times
  hpcnet-rdma-check --budget 2          seconds to read the node in (default: the config's, else 2); what
                                        the budget left unread is the finding budget.exceeded, never a hang
  hpcnet-rdma-check --slurm             also drain this node in Slurm (Reason=hpcnet-rdma:<code> <summary>)
                                        or resume it when it passes and the reason is ours
  hpcnet-rdma-check --metrics-dir DIR   also write the findings as DIR/hpcnet_rdma_health.prom for node_exporter's
                                        textfile collector (default: the config's metrics_dir; "" = off); only
                                        when DIR exists (node_exporter installed), atomically (temp file + rename)
Options come from CONFIG (JSON, written by the role); the fleet manifest from MANIFEST; the previous run's
counters from STATE (under /run: a reboot starts a new baseline).
"""
from __future__ import annotations

import os
import sys

LIB = os.environ.get("HPCNET_RDMA_LIB", "/usr/lib/hpcnet-rdma/lib")
STATE = "/run/hpcnet-rdma/health-state.json"     # as health/_program.STATE (a unit test holds them equal)


def option(argv, flag, default):
    """The last value of ``flag`` in ``argv`` (``--flag VALUE`` or ``--flag=VALUE``), before the options are
    parsed (health/_program.parse_args, which also refuses what is wrong): where bytecode goes must be known
    before that module is imported."""
    value = default
    for i, arg in enumerate(argv):
        if arg == flag and i + 1 < len(argv):
            value = argv[i + 1]
        elif arg.startswith(flag + "="):
            value = arg[len(flag) + 1:]
    return value


def fixed_packages(lib):
    """The packages of LIB as plain modules with a fixed __path__: LIB holds the readers' files and no
    __init__.py (the role writes only what the check imports), so each package would be a namespace package,
    whose __path__ Python recomputes over sys.path on every import below it (4000 recalculations, a tenth of
    the check on a lab VM under cProfile).  One directory each; nothing else is imported differently."""
    module_type = type(sys)
    name, path = "", lib
    for part in "ansible_collections.hpcnet.rdma.plugins.module_utils".split("."):
        name, path = (name + "." + part).lstrip("."), os.path.join(path, part)
        if name in sys.modules or not os.path.isdir(path):
            return
        sys.modules[name] = module_type(name)
        sys.modules[name].__path__ = [path]
    for sub in sorted(os.listdir(path)):
        if os.path.isdir(os.path.join(path, sub)) and sub.isidentifier():
            sys.modules[name + "." + sub] = module_type(name + "." + sub)
            sys.modules[name + "." + sub].__path__ = [os.path.join(path, sub)]


def main(argv=None):
    """Only what must happen before the body is imported: the check is health/_program, compiled once (a
    program's own file is compiled on every run).  Its bytecode goes under /run with the counters, never into
    LIB: LIB holds only the files the role wrote (rollback removes them and their directories)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if hasattr(sys, "pycache_prefix"):
        state = option(argv, "--state", STATE)
        sys.pycache_prefix = os.path.join(option(argv, "--root", "/"), os.path.dirname(state).lstrip("/"), "pycache")
    else:
        sys.dont_write_bytecode = True
    if LIB not in sys.path:
        sys.path.insert(0, LIB)
    fixed_packages(LIB)
    from ansible_collections.hpcnet.rdma.plugins.module_utils.health import _program
    return _program.main(argv)


if __name__ == "__main__":
    sys.exit(main())
