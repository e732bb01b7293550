# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""service_state on a recorded host whose systemctl keeps unit state: check mode, stop + disable,
idempotence, units that are not there, bad names, modes, release and rollback through tuning_state."""
from __future__ import annotations

import os

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils._host import Host
from ansible_collections.hpcnet.rdma.plugins.modules import service_state, tuning_state

from ...conftest import Failed, FakeModule


class Systemd(object):
    """The runner of a Host: records argv like conftest's Recorder and answers systemctl the way
    systemd 252 does (is-enabled of a missing unit: nothing on stdout, rc 1)."""

    def __init__(self, units):
        self.units = dict((u, dict(s)) for u, s in units.items())
        self.calls = []

    def __call__(self, argv):
        argv = [os.path.basename(argv[0])] + list(argv[1:])
        self.calls.append(argv)
        assert argv[0] == "systemctl", argv
        verb, unit = argv[1], argv[2]
        state = self.units.get(unit)
        if state is None:
            return 1 if verb == "is-enabled" else 5, "", "Failed to %s %s: Unit %s not found." % (verb, unit, unit)
        if verb == "is-enabled":
            return (0 if state["enabled"].startswith("enabled") or state["enabled"] == "static" else 1), state["enabled"] + "\n", ""
        if verb == "is-active":
            return (0 if state["active"] else 3), ("active" if state["active"] else "inactive") + "\n", ""
        if verb in ("start", "stop"):
            state["active"] = verb == "start"
        elif verb in ("enable", "disable"):
            state["enabled"] = verb + "d"
        else:
            return 1, "", "unexpected verb %s" % verb
        return 0, "", ""

    def writes(self):
        return [c[1:] for c in self.calls if c[1] not in ("is-enabled", "is-active")]


UNITS = {"cups.service": {"active": True, "enabled": "enabled"},
         "avahi-daemon.service": {"active": True, "enabled": "enabled"},
         "idle.service": {"active": False, "enabled": "disabled"},
         "udevish.service": {"active": True, "enabled": "static"},
         "hidden.service": {"active": False, "enabled": "masked"}}


@pytest.fixture
def systemd(tmp_path):
    os.makedirs(str(tmp_path / "run" / "systemd" / "system"))   # systemd runs on this node
    fake = Systemd(UNITS)
    fake.host = Host(root=str(tmp_path), runner=fake, bin_path=lambda name: "/usr/bin/" + name)
    return fake


def services(sd, check=False, **params):
    module = FakeModule(service_state.ARGUMENT_SPEC, params, check_mode=check)
    out = service_state.run(module, sd.host)
    out["_warnings"] = module.warnings
    return out


def state(sd, check=False, **params):
    return tuning_state.run(FakeModule(tuning_state.ARGUMENT_SPEC, params, check_mode=check), sd.host)


def test_check_mode_predicts_exactly_and_writes_nothing(systemd):
    predicted = services(systemd, check=True, stop=["cups", "avahi-daemon"], disable=["cups"])
    assert systemd.writes() == []
    assert not os.path.exists(os.path.join(systemd.host.root, "var/lib/hpcnet-rdma"))
    assert predicted["changed"] is True
    real = services(systemd, stop=["cups", "avahi-daemon"], disable=["cups"])
    assert real["changes"] == predicted["changes"] and real["current"] == predicted["current"]
    assert real["generation"] == 1


def test_stop_and_disable(systemd):
    out = services(systemd, stop=["cups", "avahi-daemon.service"], disable=["cups.service"])
    assert out["units"] == {"stop": ["cups.service", "avahi-daemon.service"], "disable": ["cups.service"]}
    assert out["changes"] == [
        {"key": "service:cups.service", "before": {"active": True, "enabled": "enabled"},
         "after": {"active": False, "enabled": "disabled"}},
        {"key": "service:avahi-daemon.service", "before": {"active": True, "enabled": "enabled"},
         "after": {"active": False, "enabled": "enabled"}}]
    # read back from the fake systemd, not the module's claim
    assert systemd.units["cups.service"] == {"active": False, "enabled": "disabled"}
    assert systemd.units["avahi-daemon.service"] == {"active": False, "enabled": "enabled"}
    assert sorted(systemd.writes()) == [["disable", "cups.service"], ["stop", "avahi-daemon.service"],
                                        ["stop", "cups.service"]]
    assert out["diff"][0]["before"] == ('cups.service = {"active": true, "enabled": "enabled"}\n'
                                        'avahi-daemon.service = {"active": true, "enabled": "enabled"}\n')
    assert out["diff"][0]["after"] == ('cups.service = {"active": false, "enabled": "disabled"}\n'
                                       'avahi-daemon.service = {"active": false, "enabled": "enabled"}\n')
    again = services(systemd, stop=["cups", "avahi-daemon.service"], disable=["cups.service"])
    assert again["changed"] is False and again["changes"] == []


@pytest.mark.parametrize("params, changes, absent, notes", [
    # already stopped, already disabled, masked: nothing to do
    ({"stop": ["idle"], "disable": ["idle", "hidden"]}, [], [], []),
    # not installed: reported, not a change, not a failure
    ({"stop": ["nope"], "disable": ["nope"]}, [], [{"unit": "nope.service", "reason": "not installed"}], []),
    # a static unit cannot be disabled: stopped, its boot state left, a note says why
    ({"stop": ["udevish"], "disable": ["udevish"]},
     [("service:udevish.service", {"active": False, "enabled": "static"})], [],
     ["disable: udevish.service is static (no [Install] section): systemctl disable cannot keep it from starting"]),
    # disable alone leaves a running unit running
    ({"disable": ["cups"]}, [("service:cups.service", {"active": True, "enabled": "disabled"})], [], []),
    # repeats and both spellings of one unit are one unit
    ({"stop": ["cups", "cups.service"]}, [("service:cups.service", {"active": False, "enabled": "enabled"})], [], []),
    # modes: runtime applies only stop, persist only disable
    ({"stop": ["cups"], "disable": ["avahi-daemon"], "mode": "runtime"},
     [("service:cups.service", {"active": False, "enabled": "enabled"})], [], []),
    ({"stop": ["cups"], "disable": ["avahi-daemon"], "mode": "persist"},
     [("service:avahi-daemon.service", {"active": True, "enabled": "disabled"})], [], []),
])
def test_plans(systemd, params, changes, absent, notes):
    out = services(systemd, **params)
    assert [(c["key"], c["after"]) for c in out["changes"]] == changes
    assert out["absent"] == absent
    assert out["notes"] == notes and out["_warnings"] == notes
    assert out["changed"] is bool(changes)


def test_untouched_units_are_not_even_read(systemd):
    services(systemd, stop=["cups"], mode="runtime", disable=["avahi-daemon"])
    assert all("avahi-daemon.service" not in c for c in systemd.calls)
    assert systemd.units["avahi-daemon.service"] == UNITS["avahi-daemon.service"]


def test_no_systemd_is_absent_not_failure(tmp_path):
    fake = Systemd(UNITS)      # no /run/systemd/system: a container
    fake.host = Host(root=str(tmp_path), runner=fake, bin_path=lambda name: "/usr/bin/" + name)
    out = services(fake, stop=["cups"], disable=["cups"])
    assert out["changed"] is False and out["changes"] == [] and fake.calls == []
    assert out["absent"] == [{"unit": "cups.service",
                              "reason": "systemd is not running on this node (a container or an image build)"}]
    assert out["previous"] == {"service:cups.service": None}


BAD = [
    ({"stop": ["a b"]}, "stop: 'a b' is not a systemd unit name; allowed: NAME, NAME.TYPE or NAME@INSTANCE.TYPE"),
    ({"disable": ["getty@.service"]}, "disable: 'getty@.service' is not a systemd unit name"),
    ({"disable": [""]}, "disable: '' is not a systemd unit name"),
    ({"stop": ["../../etc/passwd"]}, "stop: '../../etc/passwd' is not a systemd unit name"),
    ({"stop": ["x;reboot"]}, "stop: 'x;reboot' is not a systemd unit name"),
    ({"stop": ["sshd"]}, "stop: sshd.service carries this connection (and the rollback's); allowed: units other than "
                         "ssh.service, sshd.service"),
    ({}, "stop, disable: at least one unit is required (or release_scope"),
    ({"stop": "cups", "mode": "later"}, "value of mode must be one of: runtime, persist, both, got: later"),
]


@pytest.mark.parametrize("params, message", BAD)
def test_bad_input_fails_before_anything(systemd, params, message):
    with pytest.raises(Failed) as e:
        services(systemd, **params)
    assert message in e.value.msg
    assert systemd.calls == []


def test_rollback_through_tuning_state_restores(systemd):
    services(systemd, stop=["cups", "avahi-daemon"], disable=["cups"])
    services(systemd, disable=["avahi-daemon"])          # a second call, a second generation
    status = state(systemd, action="status")
    assert status["tuned"]["service:cups.service"]["original"] == {"active": True, "enabled": "enabled"}
    predicted = state(systemd, check=True, action="rollback")
    assert predicted["changed"] is True and systemd.units["cups.service"]["active"] is False
    done = state(systemd, action="rollback")
    assert done["changes"] == predicted["changes"]
    assert systemd.units == UNITS
    assert state(systemd, action="rollback")["changed"] is False


def test_rollback_last_undoes_one_call(systemd):
    services(systemd, stop=["cups"])
    services(systemd, disable=["cups"])
    state(systemd, action="rollback", scope="last")
    assert systemd.units["cups.service"] == {"active": False, "enabled": "enabled"}


def test_release_scope_returns_units_the_new_call_leaves_out(systemd):
    services(systemd, stop=["cups", "avahi-daemon"], disable=["cups"], release_scope="tuning.services")
    out = services(systemd, stop=["avahi-daemon"], release_scope="tuning.services")
    assert [c["key"] for c in out["changes"]] == ["service:cups.service"]
    assert systemd.units["cups.service"] == UNITS["cups.service"]
    assert systemd.units["avahi-daemon.service"]["active"] is False
    empty = services(systemd, release_scope="tuning.services")     # a profile with no services
    assert [c["key"] for c in empty["changes"]] == ["service:avahi-daemon.service"]
    assert systemd.units == UNITS
