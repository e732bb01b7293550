# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/node/_systemd.py: the systemctl and udevadm argv tables, through the runner."""
from __future__ import annotations

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._systemd import SYSTEMCTL, UDEVADM

from ....conftest import host_answering

UNIT = "irqbalance.service"


@pytest.mark.parametrize("tool, action, values, argv", [
    (SYSTEMCTL, "is_enabled", {"unit": UNIT}, ["systemctl", "is-enabled", "--", UNIT]),
    (SYSTEMCTL, "is_active", {"unit": UNIT}, ["systemctl", "is-active", "--", UNIT]),
    (SYSTEMCTL, "enable", {"unit": UNIT}, ["systemctl", "enable", "--", UNIT]),
    (SYSTEMCTL, "disable", {"unit": UNIT}, ["systemctl", "disable", "--", UNIT]),
    (SYSTEMCTL, "start", {"unit": UNIT}, ["systemctl", "start", "--", UNIT]),
    (SYSTEMCTL, "stop", {"unit": UNIT}, ["systemctl", "stop", "--", UNIT]),
    (SYSTEMCTL, "try_restart", {"unit": UNIT}, ["systemctl", "try-restart", "--", UNIT]),
    (SYSTEMCTL, "list_jobs", {}, ["systemctl", "list-jobs", "--no-legend", "--plain"]),
    (SYSTEMCTL, "daemon_reload", {}, ["systemctl", "daemon-reload"]),
    (UDEVADM, "settle", {"timeout": 20}, ["udevadm", "settle", "--timeout=20"]),
    (UDEVADM, "reload", {}, ["udevadm", "control", "--reload"]),
    (UDEVADM, "trigger_rdma_subsystems", {},
     ["udevadm", "trigger", "--action=change", "--subsystem-match=infiniband_verbs", "--subsystem-match=infiniband_mad"]),
    (UDEVADM, "trigger_sysname", {"sysname": "rdma_cm"},
     ["udevadm", "trigger", "--action=change", "--sysname-match=rdma_cm"]),
])
def test_argv_table(tool, action, values, argv):
    assert tool.argv(action, **values) == argv


def test_settle_timeout_must_be_whole_seconds():
    with pytest.raises(ValueError):
        UDEVADM.argv("settle", timeout=2.5)      # callers pass int(timeout): a float would be a bug


@pytest.mark.parametrize("tool, action, values, answer, message", [
    (SYSTEMCTL, "start", {"unit": UNIT}, (5, "", "Failed to start irqbalance.service: Unit irqbalance.service not found.\n"),
     "systemctl start -- irqbalance.service failed (rc=5): Failed to start irqbalance.service: "
     "Unit irqbalance.service not found."),
    (UDEVADM, "settle", {"timeout": 10}, (1, "", "Timed out for waiting the udev queue being empty.\n"),
     "udevadm settle --timeout=10 failed (rc=1): Timed out for waiting the udev queue being empty."),
])
def test_failure_names_tool_and_argv(tmp_path, tool, action, values, answer, message):
    host, rec = host_answering(tmp_path, *answer)
    with pytest.raises(HostError) as e:
        tool.call(host, action, **values)
    assert str(e.value) == message
    assert rec.calls == [["/usr/sbin/" + tool.name] + tool.argv(action, **values)[1:]]


def test_unchecked_run_returns_the_answer(tmp_path):
    host, rec = host_answering(tmp_path, 3, "inactive\n", "")
    assert SYSTEMCTL.run(host, "is_active", unit=UNIT) == (3, "inactive\n", "")
    assert rec.calls == [["/usr/sbin/systemctl", "is-active", "--", UNIT]]
