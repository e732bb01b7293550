# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""service_state on hostile input (issue 30), real module runs against a ``systemctl`` on PATH that
records every argv it gets and keeps the units' state in a file: a name starting with ``-`` never
reaches it, every name it gets comes after ``--``, and the units that carry the network are refused
in stop and disable unless ``allow_network_stop`` - then stopped and rolled back for real."""
from __future__ import annotations

import json
import os
import stat

from rlib import ROLLBACK, forked, journal_entries

FAKE = r'''#!/usr/bin/env python3
import json, os, sys
state_file = os.environ.get("FAKE_SYSTEMCTL_STATE") or os.path.join(os.path.dirname(__file__), "state.json")
with open(os.path.join(os.path.dirname(__file__), "argv.log"), "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\n")
with open(state_file) as f:
    units = json.load(f)
args = sys.argv[1:]
if args[:1] == ["daemon-reload"]:
    sys.exit(0)
if len(args) != 3 or args[1] != "--":
    sys.stderr.write("unexpected argv %r\n" % (args,))
    sys.exit(64)
verb, unit = args[0], args[2]
u = units.get(unit)
if u is None:
    sys.exit(1 if verb == "is-enabled" else 5)
if verb == "is-enabled":
    print(u["enabled"])
    sys.exit(0 if u["enabled"] == "enabled" else 1)
if verb == "is-active":
    print("active" if u["active"] else "inactive")
    sys.exit(0 if u["active"] else 3)
if verb in ("start", "stop"):
    u["active"] = verb == "start"
elif verb in ("enable", "disable"):
    u["enabled"] = verb + "d"
with open(state_file, "w") as f:
    json.dump(units, f)
'''
UNITS = {"NetworkManager.service": {"active": True, "enabled": "enabled"},
         "cups.service": {"active": True, "enabled": "enabled"}}


def _setup(work, monkeypatch):
    node = os.path.join(work, "node")
    os.makedirs(os.path.join(node, "run/systemd/system"))     # systemd runs here
    os.makedirs(os.path.join(node, "var/lib"), 0o755)
    fake = os.path.join(work, "bin")
    os.makedirs(fake)
    with open(os.path.join(fake, "systemctl"), "w") as f:
        f.write(FAKE)
    os.chmod(os.path.join(fake, "systemctl"), stat.S_IRWXU)
    with open(os.path.join(fake, "state.json"), "w") as f:
        json.dump(UNITS, f)
    monkeypatch.setenv("PATH", fake + os.pathsep + os.environ.get("PATH", ""))
    return node, fake


def _calls(fake):
    path = os.path.join(fake, "argv.log")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f]


def _units(fake):
    with open(os.path.join(fake, "state.json")) as f:
        return json.load(f)


def test_a_name_that_would_be_an_option_never_reaches_systemctl(work, monkeypatch):
    node, fake = _setup(work, monkeypatch)
    steps = [{"module": "service_state", "params": {"stop": [name]}} for name in ("-H.service", "--root=/x", "-.mount")]
    status, results = forked(node, steps, os.path.join(work, "out.json"))
    assert status == 0 and [r["rc"] for r in results] == [1, 1, 1], results
    for name, result in zip(("-H.service", "--root=/x", "-.mount"), results):
        assert result["msg"].startswith("stop: %r is not a unit name this module accepts: it starts with '-', which "
                                        "systemctl would read as an option" % name), result["msg"]
    assert _calls(fake) == [] and journal_entries(node) == []
    # a good name: systemctl gets it after "--", and only so
    status, (done,) = forked(node, [{"module": "service_state", "params": {"stop": ["cups"]}}], os.path.join(work, "o"))
    assert done["rc"] == 0 and done["changed"], done
    assert ["stop", "--", "cups.service"] in _calls(fake)
    assert all(c[1:2] == ["--"] for c in _calls(fake) if c != ["daemon-reload"]), _calls(fake)
    assert _units(fake)["cups.service"]["active"] is False


def test_the_units_that_carry_the_network_need_allow_network_stop(work, monkeypatch):
    node, fake = _setup(work, monkeypatch)
    steps = [{"module": "service_state", "params": {"stop": ["NetworkManager"]}},
             {"module": "service_state", "params": {"disable": ["NetworkManager.service"], "mode": "persist"}},
             {"module": "service_state", "params": {"stop": ["NetworkManager"]}, "check_mode": True}]
    status, results = forked(node, steps, os.path.join(work, "out.json"))
    assert status == 0 and [r["rc"] for r in results] == [1, 1, 1], results
    assert results[0]["msg"].startswith("stop: NetworkManager.service carries the node's network")
    assert results[1]["msg"].startswith("disable: NetworkManager.service carries the node's network")
    assert "set allow_network_stop: true" in results[0]["msg"]
    assert _calls(fake) == [] and _units(fake) == UNITS and journal_entries(node) == []
    # the opt-in: stopped for real, and a rollback starts it again
    opt_in = [{"module": "service_state", "params": {"stop": ["NetworkManager"], "allow_network_stop": True}}]
    status, (done, back) = forked(node, opt_in + ROLLBACK, os.path.join(work, "out.json"))
    assert done["rc"] == 0 and done["changed"], done
    assert back["rc"] == 0 and back["changed"], back
    assert ["stop", "--", "NetworkManager.service"] in _calls(fake)
    assert ["start", "--", "NetworkManager.service"] in _calls(fake)
    assert _units(fake) == UNITS
