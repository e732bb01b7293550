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
import types                     # the body's imports (subprocess) import it anyway

LIB = os.environ.get("HPCNET_RDMA_LIB", "/usr/lib/hpcnet-rdma/lib")
CONFIG = "/etc/hpcnet-rdma/health.json"
MANIFEST = "/etc/hpcnet-rdma/manifest.json"
STATE = "/run/hpcnet-rdma/health-state.json"
PREFIX = "hpcnet-rdma"                           # as health/_judges.PREFIX (a unit test holds them equal)
ABOUT = "hpcnet-rdma-check: the node's RDMA fabric health, for Slurm's HealthCheckProgram and prolog"

# (flag, destination, value type or None for a switch, default, help) - parsed by parse_args
OPTIONS = (
    ("--json", "json", None, False, "print every finding as JSON"),
    ("--budget", "budget", float, None, "seconds to read the node in (default: the config's, else 2)"),
    ("--slurm", "slurm", None, False, "drain/resume this node in Slurm"),
    ("--node", "node", str, None, "the Slurm node name (default: SLURMD_NODENAME, else the short host name)"),
    ("--config", "config", str, CONFIG, "the check's options (JSON, written by the role)"),
    ("--manifest", "manifest", str, MANIFEST, "the fleet manifest (JSON, written by the role)"),
    ("--state", "state", str, STATE, "the counters of the previous run (JSON)"),
    ("--metrics-dir", "metrics_dir", str, None,
     "node_exporter's textfile directory (default: the config's metrics_dir; '' = off)"),
    ("--root", "root", str, "/", "prefix of every node path (tests)"),
)


def usage():
    return "usage: hpcnet-rdma-check [-h] " + " ".join(
        "[%s]" % flag if kind is None else "[%s %s]" % (flag, dest.upper()) for flag, dest, kind, _d, _h in OPTIONS)


def parse_args(argv):
    """The options, with argparse's conventions (``--flag VALUE``, ``--flag=VALUE``, ``-h``/``--help``, a usage
    error is exit 2 with the usage on stderr) but not argparse itself: importing it (with gettext, locale and
    shutil) was 65 ms of the check's start on a lab VM under TCG (benchmarks/health_check.py).  Here, not in
    the body: a refused command line ends before the body is imported, so it writes no bytecode - bad input
    leaves the node as it was."""
    table = dict((flag, (dest, kind)) for flag, dest, kind, _d, _h in OPTIONS)
    values = dict((dest, default) for _f, dest, _k, default, _h in OPTIONS)

    def fail(msg):
        sys.stderr.write("%s\nhpcnet-rdma-check: error: %s\n" % (usage(), msg))
        raise SystemExit(2)
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg in ("-h", "--help"):
            lines = [usage(), "", ABOUT, "", "options:", "  -h, --help  show this help and exit"]
            lines += ["  %s  %s" % (flag if kind is None else "%s %s" % (flag, dest.upper()), text)
                      for flag, dest, kind, _d, text in OPTIONS]
            sys.stdout.write("\n".join(lines) + "\n")
            raise SystemExit(0)
        flag, eq, value = arg.partition("=")
        if flag not in table:
            fail("unrecognized arguments: %s" % arg)
        dest, kind = table[flag]
        if kind is None:
            if eq:
                fail("argument %s: ignored explicit argument %r" % (flag, value))
            values[dest] = True
            continue
        if not eq:
            if not args:
                fail("argument %s: expected one argument" % flag)
            value = args.pop(0)
        try:
            values[dest] = kind(value)
        except ValueError:
            fail("argument %s: invalid %s value: %r" % (flag, kind.__name__, value))
    return types.SimpleNamespace(**values)


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
    """Only what must happen before the body is imported: the options, then the check is health/_program,
    compiled once (a program's own file is compiled on every run).  Its bytecode goes under /run with the
    counters, never into LIB: LIB holds only the files the role wrote (rollback removes them and their
    directories)."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.budget is not None and not 0 < args.budget <= 60:     # the config's budget is the body's to refuse
        sys.stdout.write("ERROR: %s: usage --budget %r is outside 0..60 seconds\n" % (PREFIX, args.budget))
        return 2
    if hasattr(sys, "pycache_prefix"):
        sys.pycache_prefix = os.path.join(args.root, os.path.dirname(args.state).lstrip("/"), "pycache")
    else:
        sys.dont_write_bytecode = True
    if LIB not in sys.path:
        sys.path.insert(0, LIB)
    fixed_packages(LIB)
    from ansible_collections.hpcnet.rdma.plugins.module_utils.health import _program
    return _program.main(args)


if __name__ == "__main__":
    sys.exit(main())
