# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""service_state on a recorded host whose systemctl keeps unit state: check mode, stop + disable,
idempotence, units that are not there, bad names, modes, release and rollback through tuning_state."""
from __future__ import annotations

import os

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.modules import managed_files, service_state, tuning_state

from ...conftest import Failed, FakeModule


class Systemd(object):
    """The runner of a Host: records argv like conftest's Recorder and answers systemctl the way
    systemd 252 does (is-enabled of a missing unit: nothing on stdout, rc 1).  A unit whose state is
    ``enabled: not-found`` is loaded but its file is gone: it can be stopped, not started, enabled or
    disabled (252: "Unit file ... does not exist"), and daemon-reload forgets it once it is inactive."""

    def __init__(self, units):
        self.units = dict((u, dict(s)) for u, s in units.items())
        self.calls = []

    def __call__(self, argv):
        argv = [os.path.basename(argv[0])] + list(argv[1:])
        if len(argv) == 4:   # every unit name comes after "--" (no name is read as an option)
            assert argv[2] == "--", argv
            argv = argv[:2] + argv[3:]
        self.calls.append(argv)
        assert argv[0] == "systemctl", argv
        if argv[1:] == ["daemon-reload"]:
            self.units = dict((u, s) for u, s in self.units.items() if s["enabled"] != "not-found" or s["active"])
            return 0, "", ""
        if argv[1] == "show":   # systemctl show --property=Id,UnitFileState,ActiveState -- UNIT...: a block per unit
            assert argv[2:4] == ["--property=Id,UnitFileState,ActiveState", "--"], argv
            return 0, "\n".join("Id=%s\nActiveState=%s\nUnitFileState=%s\n" % (
                u, "active" if (self.units.get(u) or {}).get("active") else "inactive",
                "" if (self.units.get(u) or {}).get("enabled", "not-found") == "not-found" else self.units[u]["enabled"])
                for u in argv[4:]), ""
        verb, unit = argv[1], argv[2]
        state = self.units.get(unit)
        if state is None:
            return 1 if verb == "is-enabled" else 5, "", "Failed to %s %s: Unit %s not found." % (verb, unit, unit)
        orphan = state["enabled"] == "not-found"
        if verb == "is-enabled":
            if orphan:
                return 1, "", "Failed to get unit file state for %s: No such file or directory" % unit
            return (0 if state["enabled"].startswith("enabled") or state["enabled"] == "static" else 1), state["enabled"] + "\n", ""
        if verb == "is-active":
            return (0 if state["active"] else 3), ("active" if state["active"] else "inactive") + "\n", ""
        if orphan and verb != "stop":
            return 1, "", "Failed to %s unit: Unit file %s does not exist." % (verb, unit)
        if verb == "start" and state["enabled"] == "masked":
            return 1, "", "Failed to start %s: Unit %s is masked." % (unit, unit)
        if verb in ("start", "stop"):
            state["active"] = verb == "start"
        elif verb in ("enable", "disable"):
            state["enabled"] = verb + "d"
        else:
            return 1, "", "unexpected verb %s" % verb
        return 0, "", ""

    def writes(self):
        return [c[1:] for c in self.calls if c[1] not in ("is-enabled", "is-active", "show")]


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
    assert out["units"] == {"stop": ["cups.service", "avahi-daemon.service"], "disable": ["cups.service"],
                            "start": [], "enable": []}
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
    ({"stop": ["-H.service"]}, "stop: '-H.service' is not a unit name this module accepts: it starts with '-', which "
                               "systemctl would read as an option"),
    ({"start": ["--root=/tmp"]}, "start: '--root=/tmp' is not a unit name this module accepts: it starts with '-'"),
    ({"stop": ["NetworkManager"]}, "stop: NetworkManager.service carries the node's network (and so the Ansible "
                                   "connection, now or after the next boot); allowed: units other than "
                                   "systemd-networkd.service, networking.service, NetworkManager.service, or set "
                                   "allow_network_stop: true"),
    ({"disable": ["systemd-networkd"]}, "disable: systemd-networkd.service carries the node's network"),
    ({"stop": ["sshd"], "allow_network_stop": True}, "stop: sshd.service carries this connection"),
    ({}, "stop, disable, start, enable: at least one unit is required (or release_scope"),
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


# ---------------------------------------------------------------- start and enable

IDLE_ON = {"active": True, "enabled": "enabled"}


@pytest.mark.parametrize("params, changes, writes, notes", [
    # start / enable / both: one key per unit, the state before journaled
    ({"start": ["idle"]}, [("service:idle.service", {"active": True, "enabled": "disabled"})],
     [["start", "idle.service"]], []),
    ({"enable": ["idle"]}, [("service:idle.service", {"active": False, "enabled": "enabled"})],
     [["enable", "idle.service"]], []),
    ({"start": ["idle"], "enable": ["idle.service"]}, [("service:idle.service", IDLE_ON)],
     [["enable", "idle.service"], ["start", "idle.service"]], []),
    # already running and enabled: nothing to do
    ({"start": ["cups"], "enable": ["cups"]}, [], [], []),
    # modes: runtime applies only start, persist only enable
    ({"start": ["idle"], "enable": ["idle"], "mode": "runtime"},
     [("service:idle.service", {"active": True, "enabled": "disabled"})], [["start", "idle.service"]], []),
    ({"start": ["idle"], "enable": ["idle"], "mode": "persist"},
     [("service:idle.service", {"active": False, "enabled": "enabled"})], [["enable", "idle.service"]], []),
    # a static unit cannot be enabled: left, named in the notes
    ({"enable": ["udevish"]}, [], [],
     ["enable: udevish.service is static (no [Install] section): systemctl enable cannot make it start at boot; "
      "left as it is"]),
    # one call mixes all four lists, a unit in stop and enable (stopped now, starts at boot)
    ({"stop": ["cups"], "disable": ["avahi-daemon"], "start": ["idle"], "enable": ["cups", "idle"]},
     [("service:cups.service", {"active": False, "enabled": "enabled"}),
      ("service:avahi-daemon.service", {"active": True, "enabled": "disabled"}),
      ("service:idle.service", IDLE_ON)],
     [["stop", "cups.service"], ["disable", "avahi-daemon.service"], ["enable", "idle.service"],
      ["start", "idle.service"]], []),
])
def test_start_and_enable_apply_and_roll_back_exactly(systemd, params, changes, writes, notes):
    out = services(systemd, **params)
    assert [(c["key"], c["after"]) for c in out["changes"]] == changes
    assert systemd.writes() == writes
    assert out["notes"] == notes and out["_warnings"] == notes
    # the node, read back from the fake systemd, is what the result says
    for key, after in changes:
        assert systemd.units[key.split(":", 1)[1]] == after
        assert out["current"][key] == after and out["previous"][key] == UNITS[key.split(":", 1)[1]]
    assert out["changed"] is bool(changes) and out["daemon_reloaded"] is False
    again = services(systemd, **params)
    assert again["changed"] is False
    del systemd.calls[:]
    done = state(systemd, action="rollback")
    assert systemd.units == UNITS
    assert done["unrestorable"] == [] and done["changed"] is bool(changes)
    # the restore is the inverse, newest change first: what was started is stopped, enabled disabled
    inverse = {"start": "stop", "stop": "start", "enable": "disable", "disable": "enable"}
    assert sorted(systemd.writes()) == sorted([inverse[w[0]], w[1]] for w in writes)


def test_start_and_enable_check_mode_predicts_exactly(systemd):
    params = {"start": ["idle"], "enable": ["idle"], "stop": ["cups"]}
    predicted = services(systemd, check=True, **params)
    assert systemd.writes() == [] and predicted["changed"] is True
    assert not os.path.exists(os.path.join(systemd.host.root, "var/lib/hpcnet-rdma"))
    assert predicted["previous"] == {"service:cups.service": UNITS["cups.service"],
                                     "service:idle.service": UNITS["idle.service"]}
    real = services(systemd, **params)
    for field in ("changes", "current", "previous", "diff"):
        assert real[field] == predicted[field], field
    assert real["diff"][0]["before"] == ('cups.service = {"active": true, "enabled": "enabled"}\n'
                                         'idle.service = {"active": false, "enabled": "disabled"}\n')
    assert real["diff"][0]["after"] == ('cups.service = {"active": false, "enabled": "enabled"}\n'
                                        'idle.service = {"active": true, "enabled": "enabled"}\n')


CONFLICTS = [
    ({"start": ["cups"], "stop": ["cups.service"]},
     "start, stop: cups.service is in both; allowed: a unit in at most one of start and stop"),
    ({"enable": ["idle", "cups"], "disable": ["cups", "idle.service"]},
     "enable, disable: idle.service, cups.service are in both; allowed: a unit in at most one of enable and disable"),
    # the check is on the lists given, whatever the mode applies
    ({"start": ["idle"], "stop": ["idle"], "mode": "persist"}, "start, stop: idle.service is in both"),
]
NOT_STARTABLE = [
    ({"start": ["nope"]}, "start: nope.service cannot be started: not installed: systemd knows no unit file of "
                          "that name; allowed: installed units (write the unit file first, e.g. with "
                          "hpcnet.rdma.managed_files, and set daemon_reload when it was written in this play)"),
    ({"enable": ["nope.timer"]}, "enable: nope.timer cannot be enabled: not installed"),
    ({"start": ["nope"], "enable": ["nope"]}, "start, enable: nope.service cannot be started or enabled: not installed"),
    # a stop of the same missing unit in the same call does not soften it
    ({"enable": ["nope"], "stop": ["nope"]}, "enable: nope.service cannot be enabled: not installed"),
    ({"start": ["gone"]}, "start: gone.service cannot be started: its unit file was removed (it runs on until a "
                          "daemon-reload)"),
    ({"start": ["hidden"]}, "start: hidden.service is masked, so systemctl start refuses it; allowed: units that "
                            "are not masked (systemctl unmask it first)"),
]


@pytest.mark.parametrize("params, message", CONFLICTS + NOT_STARTABLE)
def test_start_enable_bad_input_fails_before_anything_changes(systemd, params, message):
    systemd.units["gone.service"] = {"active": True, "enabled": "not-found"}
    # a valid unit in the same call is not touched either
    params = dict(params, stop=params.get("stop", []) + ["avahi-daemon"])
    for check in (True, False):
        with pytest.raises(Failed) as e:
            services(systemd, check=check, **params)
        assert message in e.value.msg
    assert systemd.writes() == []
    assert not os.path.exists(os.path.join(systemd.host.root, "var/lib/hpcnet-rdma"))


def test_start_without_systemd_is_an_error_not_absent(tmp_path):
    fake = Systemd(UNITS)      # no /run/systemd/system: a container or an image build
    fake.host = Host(root=str(tmp_path), runner=fake, bin_path=lambda name: "/usr/bin/" + name)
    with pytest.raises(Failed) as e:
        services(fake, enable=["cups"], daemon_reload=True)
    assert e.value.msg.startswith("enable: cups.service cannot be enabled: systemd is not running on this node")
    assert fake.calls == []


def test_daemon_reload_runs_once_before_the_first_read(systemd):
    out = services(systemd, start=["idle"], daemon_reload=True)
    assert systemd.calls[0] == ["systemctl", "daemon-reload"]
    assert systemd.calls.count(["systemctl", "daemon-reload"]) == 1      # build runs twice, reload once
    assert out["daemon_reloaded"] is True and out["changed"] is True
    # nothing to change: the reload still runs (the files may have changed), and is not a change
    del systemd.calls[:]
    again = services(systemd, start=["idle"], daemon_reload=True)
    assert systemd.writes() == [["daemon-reload"]] and again["changed"] is False and again["daemon_reloaded"] is True


def test_check_mode_daemon_reload_does_not_run_and_a_unit_to_come_is_noted(systemd):
    out = services(systemd, check=True, start=["new.timer"], enable=["new.timer"], stop=["cups"], daemon_reload=True)
    assert systemd.writes() == [] and out["daemon_reloaded"] is False
    assert out["absent"] == [{"unit": "new.timer", "reason": "not installed yet (check mode: daemon_reload does not run)"}]
    assert out["_warnings"] == ["start, enable: new.timer is not installed yet; in check mode a unit file an earlier "
                                "task would write is not there and systemd is not reloaded, so what the real run "
                                "does to it is not predicted"]
    assert [c["key"] for c in out["changes"]] == ["service:cups.service"]
    # the real run, with the file still missing, fails naming it
    with pytest.raises(Failed) as e:
        services(systemd, start=["new.timer"], daemon_reload=True)
    assert "start: new.timer cannot be started: not installed" in e.value.msg


# ---------------------------------------------------------------- a loaded unit whose file is gone

def test_stop_of_a_unit_whose_file_is_gone_stops_it_and_reloads(systemd):
    systemd.units["gone.service"] = {"active": True, "enabled": "not-found"}
    out = services(systemd, stop=["gone"], disable=["gone"])
    assert out["changes"] == [{"key": "service:gone.service", "before": {"active": True, "enabled": "not-found"},
                               "after": {"active": False, "enabled": "not-found"}}]
    assert out["current"] == {"service:gone.service": None}       # read back: gone once reloaded
    # best effort disable of its links (systemd >= 256 removes them, 252 refuses), stop, reload
    assert systemd.writes() == [["disable", "gone.service"], ["stop", "gone.service"], ["daemon-reload"]]
    assert "gone.service" not in systemd.units and out["notes"] == []


def test_rollback_after_the_unit_file_went_first_stops_it_and_reloads(systemd):
    """The order the role's rollback avoids (it stops before the file goes), handled all the same."""
    services(systemd, start=["idle"], enable=["idle"])
    systemd.units["idle.service"]["enabled"] = "not-found"     # its file removed behind our back
    del systemd.calls[:]
    done = state(systemd, action="rollback")
    # best effort disable (systemd 252 refuses it: no file), stop as a loaded unit, reload
    assert systemd.writes() == [["disable", "idle.service"], ["stop", "idle.service"], ["daemon-reload"]]
    assert "idle.service" not in systemd.units
    assert done["unrestorable"] == [] and done["changed"] is True
    assert state(systemd, action="status")["tuned"] == {}


# ---------------------------------------------------------------- unit files written in the same run

class UnitFiles(object):
    """systemctl over the unit files under the Host root, the way systemd 252 behaves: is-enabled
    reads the disk (a loaded unit whose file is gone is not found), enable/disable make and remove the
    WantedBy= link (disable also the emptied .wants directory; enable reloads, as systemctl does),
    start loads a unit from disk the first time but then runs the configuration it loaded until a
    daemon-reload, stop works on any loaded unit.  ``seen`` records (verb, unit, file on disk then)."""

    DIR = "etc/systemd/system"

    def __init__(self, root):
        self.root = root
        self.loaded = {}        # unit -> {"active": bool, "config": the file's text when loaded}
        self.calls, self.seen, self.stale_starts = [], [], []

    def path(self, unit):
        return os.path.join(self.root, self.DIR, unit)

    def read(self, unit):
        try:
            with open(self.path(unit), encoding="utf-8") as f:
                return f.read()
        except FileNotFoundError:
            return None

    def link(self, unit, text):
        wanted = [line.split("=", 1)[1].strip() for line in text.splitlines() if line.startswith("WantedBy=")]
        return os.path.join(self.root, self.DIR, wanted[0] + ".wants", unit) if wanted else None

    def reload(self):
        for unit in list(self.loaded):
            text = self.read(unit)
            if text is None and not self.loaded[unit]["active"]:
                del self.loaded[unit]
            elif text is not None:
                self.loaded[unit]["config"] = text

    def __call__(self, argv):
        argv = [os.path.basename(argv[0])] + list(argv[1:])
        if len(argv) == 4:   # every unit name comes after "--" (no name is read as an option)
            assert argv[2] == "--", argv
            argv = argv[:2] + argv[3:]
        self.calls.append(argv)
        if argv[1:] == ["daemon-reload"]:
            self.reload()
            return 0, "", ""
        verb, unit = argv[1], argv[2]
        text = self.read(unit)
        self.seen.append((verb, unit, text is not None))
        if verb == "is-active":
            return (0, "active\n", "") if self.loaded.get(unit, {}).get("active") else (3, "inactive\n", "")
        if verb == "stop":
            if unit not in self.loaded:
                return 5, "", "Failed to stop %s: Unit %s not loaded." % (unit, unit)
            self.loaded[unit]["active"] = False
            return 0, "", ""
        if text is None:
            if verb == "is-enabled":
                return 1, "", "Failed to get unit file state for %s: No such file or directory" % unit
            return 1, "", "Failed to %s unit: Unit file %s does not exist." % (verb, unit)
        link = self.link(unit, text)
        if verb == "is-enabled":
            if link is None:
                return 0, "static\n", ""
            return (0, "enabled\n", "") if os.path.islink(link) else (1, "disabled\n", "")
        if verb == "enable" and link:
            os.makedirs(os.path.dirname(link), exist_ok=True)
            if not os.path.islink(link):
                os.symlink("/" + self.DIR + "/" + unit, link)
            self.reload()
        elif verb == "disable" and link:
            if os.path.islink(link):
                os.unlink(link)
                if not os.listdir(os.path.dirname(link)):
                    os.rmdir(os.path.dirname(link))
            self.reload()
        elif verb == "start":
            state = self.loaded.setdefault(unit, {"active": False, "config": text})
            if state["config"] != text:
                self.stale_starts.append(unit)
            state["active"] = True
        return 0, "", ""


TIMER = "m.timer"
TIMER_FILE = "/etc/systemd/system/" + TIMER
SERVICE_FILE = "/etc/systemd/system/m.service"
WANTS = "etc/systemd/system/timers.target.wants/" + TIMER


def timer_text(interval):
    return "[Unit]\nDescription=m\n\n[Timer]\nOnUnitActiveSec=%d\n\n[Install]\nWantedBy=timers.target\n" % interval


@pytest.fixture
def units(tmp_path):
    os.makedirs(str(tmp_path / "run" / "systemd" / "system"))
    os.makedirs(str(tmp_path / "etc" / "systemd" / "system"))     # there on every systemd node
    fake = UnitFiles(str(tmp_path))
    fake.host = Host(root=str(tmp_path), runner=fake, bin_path=lambda name: "/usr/bin/" + name)
    return fake


def metrics_role(fake, run, interval=30):
    """What roles/rdma_metrics does: the unit files through managed_files, then the timer enabled and
    started through service_state (daemon_reload when a file changed), both in one journal run."""
    wrote = managed_files.run(FakeModule(managed_files.ARGUMENT_SPEC, {"journal_run": run, "files": [
        {"path": SERVICE_FILE, "content": "[Service]\nType=oneshot\nExecStart=/bin/true\n"},
        {"path": TIMER_FILE, "content": timer_text(interval)}]}), fake.host)
    timer = service_state.run(FakeModule(service_state.ARGUMENT_SPEC, {
        "enable": [TIMER], "start": [TIMER], "daemon_reload": wrote["changed"], "journal_run": run}), fake.host)
    return wrote, timer


@pytest.mark.parametrize("scope", ["last", "all"])
def test_rollback_stops_and_disables_before_the_unit_files_go(units, scope):
    wrote, timer = metrics_role(units, "run-1")
    assert units.calls[0] == ["systemctl", "daemon-reload"]
    assert timer["previous"] == {"service:m.timer": {"active": False, "enabled": "disabled"}}
    assert timer["current"] == {"service:m.timer": {"active": True, "enabled": "enabled"}}
    assert os.path.islink(os.path.join(units.root, WANTS)) and units.loaded[TIMER]["active"] is True
    assert metrics_role(units, "run-2")[1]["changed"] is False      # a rerun: nothing to change
    del units.seen[:]
    done = state(units, action="rollback", scope=scope)
    assert done["unrestorable"] == [] and done["refused"] == []
    # newest first: the timer's key, then its files
    assert [c["key"] for c in done["changes"]] == ["service:m.timer", "file:" + TIMER_FILE, "file:" + SERVICE_FILE]
    # disabled and stopped while its file was still there
    assert [s for s in units.seen if s[0] in ("disable", "stop")] == [("disable", TIMER, True), ("stop", TIMER, True)]
    # nothing running, no link, no unit file, nothing left in the journal
    assert not units.loaded.get(TIMER, {}).get("active")
    assert not os.path.lexists(os.path.join(units.root, WANTS))
    assert not os.path.exists(os.path.join(units.root, TIMER_FILE.lstrip("/")))
    assert not os.path.exists(os.path.join(units.root, "etc/systemd/system/timers.target.wants"))
    assert state(units, action="status")["tuned"] == {}


@pytest.mark.parametrize("daemon_reload, stale", [(True, []), (False, [TIMER])])
def test_daemon_reload_before_start_runs_the_config_just_written(units, daemon_reload, stale):
    metrics_role(units, "run-1", interval=30)
    assert state(units, action="rollback", scope="all")["unrestorable"] == []
    units.loaded[TIMER] = {"active": False, "config": timer_text(30)}     # systemd still holds the old file
    managed_files.run(FakeModule(managed_files.ARGUMENT_SPEC, {"files": [
        {"path": TIMER_FILE, "content": timer_text(5)}]}), units.host)
    os.makedirs(os.path.dirname(os.path.join(units.root, WANTS)))
    os.symlink("/" + TIMER_FILE, os.path.join(units.root, WANTS))        # enabled: only the start to do
    out = service_state.run(FakeModule(service_state.ARGUMENT_SPEC, {"start": [TIMER], "daemon_reload": daemon_reload}),
                            units.host)
    assert out["changed"] is True and out["daemon_reloaded"] is daemon_reload
    assert units.stale_starts == stale
