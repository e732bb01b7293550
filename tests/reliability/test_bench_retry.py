# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The role's run steps (roles/rdma_bench/tasks/run.yml: test.yml per test, bench_run stage=retry, the
second pass, stage=store) by the real ansible-playbook on two local hosts, with clients that crash
(issue 30, CI's ib_send_lat SIGSEGV under emulation).

A client killed by a signal runs once more, with its server started again (the plan's servers serve one
client, as perftest's do); a client that exits with an error runs once.  The stored run holds one named
error or the second result, and the attempts.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

from rlib import COLLECTIONS

ROLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "roles", "rdma_bench")
FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "unit", "fixtures", "ib_send_lat.rxe.H.txt")
BINARY = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")


def _plan(work, lat_second):
    def client(test, port, script):
        return {"pair": "h1->h2", "test": test, "port": port, "argv": ["sh", "-c", script], "log": None, "peer": "h2",
                "address": "127.0.0.1"}

    def server(test, port):
        return {"name": "%s.%d" % (test, port), "argv": ["sleep", "60"], "listen": None}

    # ib_send_lat: killed by SIGSEGV the first time; the second time as lat_second says
    lat = ('echo run >> {w}/lat.count; echo started >> {w}/lat.servers.$(ls {w}/node-h2 | grep -c "^ib_send_lat.*pid$");'
           'if [ -e {w}/lat.once ]; then {second}; else touch {w}/lat.once; echo "partial 1.0"; kill -SEGV $$; fi'
           ).format(w=work, second=lat_second)
    wlat = "echo run >> {w}/wlat.count; echo 'Couldnt connect' >&2; exit 3".format(w=work)
    steps = {"ib_send_lat": {"h1": {"servers": [], "clients": [client("ib_send_lat", 18503, lat)]},
                             "h2": {"servers": [server("ib_send_lat", 18503)], "clients": []}},
             "ib_write_lat": {"h1": {"servers": [], "clients": [client("ib_write_lat", 18504, wlat)]},
                              "h2": {"servers": [server("ib_write_lat", 18504)], "clients": []}}}
    return {"plan": {"steps": steps, "nodes": {"h1": {}, "h2": {}}, "pairs": [{"id": "h1->h2"}], "left_out": []}}


def _play(work, lat_second):
    with open(os.path.join(work, "hosts.ini"), "w") as f:
        for h in ("h1", "h2"):
            f.write("%s ansible_connection=local ansible_python_interpreter=%s rdma_bench_node_dir=%s\n"
                    % (h, sys.executable, os.path.join(work, "node-" + h)))
    tests = ["ib_send_lat", "ib_write_lat"]
    play = [{"hosts": "all", "gather_facts": False, "vars": {
        "rdma_bench_tests": tests, "rdma_bench_duration": 1, "rdma_bench_results_dir": os.path.join(work, "results"),
        "__rdma_bench_options": {"tests": tests, "label": "retry"}, "__rdma_bench_plan": _plan(work, lat_second)},
        "tasks": [{"ansible.builtin.import_tasks": os.path.join(ROLE, "tasks", "run.yml")}]}]
    with open(os.path.join(work, "play.yml"), "w") as f:
        json.dump(play, f)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_LOCAL_TEMP=os.path.join(work, "tmp"),
               ANSIBLE_HOME=os.path.join(work, "home"), ANSIBLE_NOCOLOR="1", ANSIBLE_FORKS="2")
    proc = subprocess.run([BINARY, "-i", "hosts.ini", "play.yml"], cwd=work, env=env, capture_output=True, text=True,
                          check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    [name] = os.listdir(os.path.join(work, "results"))
    with open(os.path.join(work, "results", name)) as f:
        return json.load(f)


def _lines(path):
    with open(path) as f:
        return f.read().splitlines()


def test_a_client_killed_once_is_run_again_with_its_server_and_its_second_result_stored(work):
    run = _play(work, "cat " + FIXTURE)
    lat = run["results"]["ib_send_lat"]["h1->h2"]
    assert lat["attempts"] == 2 and "error" not in lat and lat["percentiles"]["p50"] > 0
    assert lat["first_attempt"] == "ib_send_lat killed by SIGSEGV (rc -11)"
    # each attempt found its own server recorded on h2 (the first pass's was stopped, a new one started)
    assert _lines(os.path.join(work, "lat.count")) == ["run", "run"]
    assert _lines(os.path.join(work, "lat.servers.1")) == ["started", "started"]
    # a deterministic error is not retried
    assert _lines(os.path.join(work, "wlat.count")) == ["run"]
    wlat = run["results"]["ib_write_lat"]["h1->h2"]
    assert wlat["attempts"] == 1 and wlat["error"].startswith("rc 3: ")
    assert run["errors"] == ["ib_write_lat h1->h2: " + wlat["error"]]
    assert not os.path.exists(os.path.join(work, "node-h2"))       # the servers' files and directory removed


def test_a_client_killed_twice_is_one_named_error(work):
    run = _play(work, 'echo "partial 2.0"; kill -SEGV $$')
    lat = run["results"]["ib_send_lat"]["h1->h2"]
    assert lat["attempts"] == 2 and lat["error"] == "ib_send_lat killed by SIGSEGV (rc -11)" and lat["signal"] == "SIGSEGV"
    assert run["errors"][0] == "ib_send_lat h1->h2: ib_send_lat killed by SIGSEGV (rc -11)"
    assert _lines(os.path.join(work, "lat.count")) == ["run", "run"]
