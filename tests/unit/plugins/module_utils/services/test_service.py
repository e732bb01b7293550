# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/services/_domain.py: the service domain's value as systemctl answers it, and what
counts as the same state (a unit that is gone is every state that neither runs nor starts at boot)."""
from __future__ import annotations

import os
import re

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.services import _domain as _service
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host

from ....fixtures.real.loader import real_capture

OFF = {"active": False, "enabled": "disabled"}


@pytest.mark.parametrize("actual, wanted, same", [
    (OFF, OFF, True),
    ({"active": True, "enabled": "enabled"}, OFF, False),
    (None, None, True),
    # not installed: not running and not started at boot
    (None, OFF, True),
    (None, {"active": False, "enabled": "static"}, True),
    (None, {"active": False, "enabled": "masked"}, True),
    (None, {"active": False, "enabled": "not-found"}, True),
    (None, {"active": True, "enabled": "disabled"}, False),
    (None, {"active": False, "enabled": "enabled"}, False),
    (None, {"active": False, "enabled": "enabled-runtime"}, False),
    # a unit that is there is never the same as "not installed"
    (OFF, None, False),
])
def test_same(actual, wanted, same):
    assert _service.same(actual, wanted) is same


@pytest.mark.parametrize("answers, value", [
    # (is-enabled, is-active) answers -> the value
    ({"is-enabled": (0, "enabled\n"), "is-active": (0, "active\n")}, {"active": True, "enabled": "enabled"}),
    ({"is-enabled": (1, "disabled\n"), "is-active": (3, "inactive\n")}, OFF),
    ({"is-enabled": (0, "static\n"), "is-active": (0, "activating\n")}, {"active": True, "enabled": "static"}),
    # systemd 252 over D-Bus: nothing on stdout for a unit without a file; newer ones print not-found
    ({"is-enabled": (1, ""), "is-active": (3, "inactive\n")}, None),
    ({"is-enabled": (4, "not-found\n"), "is-active": (4, "inactive\n")}, None),
    # its file removed while it runs: still there to stop
    ({"is-enabled": (1, ""), "is-active": (0, "active\n")}, {"active": True, "enabled": "not-found"}),
])
def test_read_value(tmp_path, answers, value):
    os.makedirs(str(tmp_path / "run" / "systemd" / "system"))
    calls = []

    def runner(argv):
        calls.append(argv[1:])
        assert argv[2] == "--"   # the unit name is never read as an option
        rc, out = answers[argv[1]]
        return rc, out, ""

    host = Host(root=str(tmp_path), runner=runner, bin_path=lambda name: "/usr/bin/" + name)
    assert _service.read_value(host, "m.timer") == value
    assert calls == [["is-enabled", "--", "m.timer"], ["is-active", "--", "m.timer"]]


# systemd 252's show blocks, captured on a lab VM (Debian 12; tests/unit/fixtures/real/systemctl/), for: an enabled
# running unit, a masked one, an alias (sshd.service's Id is ssh.service: is-enabled says "alias"), a unit without a
# file (UnitFileState empty) - and is-enabled / is-active of each on the same VM, with their real exit codes
SHOW = real_capture("systemctl/show.id-unitfilestate-activestate.debian12.txt")
UNITS = ["irqbalance.service", "fstrim.timer", "sshd.service", "nosuch.service"]


def single_runs():
    """{(verb, unit): (rc, stdout, stderr)} of the capture's is-enabled / is-active runs."""
    out = {}
    for line in real_capture("systemctl/is-enabled-is-active.debian12.txt").splitlines():
        m = re.match(r"^(is-enabled|is-active) (\S+) rc=(\d+) out=\[(.*)\] err=\[(.*)\]$", line)
        assert m, line
        out[(m.group(1), m.group(2))] = (int(m.group(3)), m.group(4) + "\n" if m.group(4) else "",
                                         m.group(5) + "\n" if m.group(5) else "")
    return out


def test_the_captures_are_whole():
    assert SHOW.count("Id=") == len(UNITS) and sorted(single_runs()) == sorted(
        (verb, unit) for verb in ("is-enabled", "is-active") for unit in UNITS)


@pytest.mark.parametrize("show, asked_one_by_one", [
    ((0, SHOW), ["sshd.service", "nosuch.service"]),                      # the alias and the unknown state
    ((1, ""), UNITS),                                                     # show refused (a bad name): all of them
    ((0, SHOW.split("\n\n", 1)[1]), UNITS),                              # blocks do not match the units
])
def test_read_values_is_one_show_and_read_value_where_show_is_not_is_enabled(tmp_path, show, asked_one_by_one):
    os.makedirs(str(tmp_path / "run" / "systemd" / "system"))
    calls = []
    single = single_runs()

    def runner(argv):
        calls.append(argv[1:])
        if argv[1] == "show":
            assert argv[2:4] == ["--property=Id,UnitFileState,ActiveState", "--"]
            return show[0], show[1], ""
        return single[(argv[1], argv[3])]

    host = Host(root=str(tmp_path), runner=runner, bin_path=lambda name: "/usr/bin/" + name)
    values = _service.read_values(host, UNITS)
    assert values == dict((u, _service.read_value(host, u)) for u in UNITS)
    assert values["irqbalance.service"] == {"active": True, "enabled": "enabled"}
    assert values["fstrim.timer"] == {"active": False, "enabled": "masked"}
    assert values["sshd.service"] == {"active": True, "enabled": "alias"} and values["nosuch.service"] is None
    first = calls[:1 + 2 * len(asked_one_by_one)]
    assert first[0][0] == "show" and sorted(set(c[2] for c in first[1:])) == sorted(asked_one_by_one)


def test_no_systemd_reads_nothing_and_reloads_nothing(tmp_path):
    calls = []
    host = Host(root=str(tmp_path), runner=lambda argv: calls.append(argv) or (0, "", ""),
                bin_path=lambda name: "/usr/bin/" + name)
    assert _service.read_value(host, "m.timer") is None
    assert _service.read_values(host, ["m.timer", "n.service"]) == {"m.timer": None, "n.service": None}
    _service.daemon_reload(host)
    _service.write_value(host, "m.timer", OFF)       # not installed is already stopped and disabled
    assert calls == []
