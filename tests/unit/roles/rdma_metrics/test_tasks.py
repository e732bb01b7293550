# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The rdma_metrics role's tasks: everything that stays on the node goes through the journal in one
run - the package, the unit files, and the timer's enable link and start (service_state, after the
files, so a rollback stops and disables the timer before it removes them); only the oneshot
collection is started outside it, and it enables nothing.  Rendered by Ansible's Templar with the
role's defaults and vars, as a play would."""
from __future__ import annotations

import os
import re
from typing import Any, Dict

import pytest

from ..role_render import action, load, render as render_with, role_dir

MAIN = load("rdma_metrics", "tasks/main.yml")
JOURNALED = ["hpcnet.rdma.rdma_packages", "hpcnet.rdma.managed_files", "hpcnet.rdma.service_state"]
TIMER = "hpcnet-rdma-metrics.timer"
TEXTFILE = "hpcnet-rdma-metrics-textfile.service"


def task_of(name: str) -> Dict[str, Any]:
    return next(t for t in MAIN if action(t) == name)


def render(value: Any, **variables: Any) -> Any:
    env = dict(load("rdma_metrics", "defaults/main.yml"))
    env.update(load("rdma_metrics", "vars/main.yml"))
    env.update(variables)
    return render_with(value, env)


def test_order_run_id_then_package_files_timer_then_the_oneshot():
    assert [action(t) for t in MAIN] == ["ansible.builtin.assert", "ansible.builtin.set_fact"] + JOURNALED + [
        "ansible.builtin.systemd_service"]


@pytest.mark.parametrize("name", JOURNALED)
def test_every_journaled_call_shares_the_journal_and_the_run(name):
    args = task_of(name)[name]
    assert args["journal_dir"] == "{{ rdma_metrics_journal_dir }}"
    assert args["journal_run"] == "{{ __rdma_metrics_run }}"


@pytest.mark.parametrize("given, pattern", [
    ("", r"^\d{8}T\d{6}Z-\d{6}$"),       # one per host and role run, as roles/tuning makes it
    ("20260101T000000Z-000042", r"^20260101T000000Z-000042$"),    # an enclosing run's id
])
def test_the_run_id(given, pattern):
    facts = task_of("ansible.builtin.set_fact")["ansible.builtin.set_fact"]
    assert re.match(pattern, render(facts, rdma_metrics_journal_run=given)["__rdma_metrics_run"].strip())


@pytest.mark.parametrize("files_changed", [True, False])
def test_the_timer_is_enabled_and_started_through_the_journal(files_changed):
    task = task_of("hpcnet.rdma.service_state")
    args = render(task["hpcnet.rdma.service_state"], rdma_metrics_files={"changed": files_changed},
                  __rdma_metrics_run="r1")
    assert args == {"enable": [TEXTFILE, TIMER], "start": [TEXTFILE, TIMER], "daemon_reload": files_changed,
                    "journal_dir": "/var/lib/hpcnet-rdma", "journal_run": "r1"}
    assert task["when"] == "rdma_metrics_start | bool"


def test_nothing_is_enabled_or_kept_running_outside_the_journal():
    outside = [t for t in MAIN if action(t) == "ansible.builtin.systemd_service"]
    assert len(outside) == 1
    args = render(outside[0]["ansible.builtin.systemd_service"])
    assert args == {"name": "hpcnet-rdma-metrics.service", "state": "started"}
    assert "not ansible_check_mode" in outside[0]["when"]
    # the service is a oneshot (inactive again once it ran) and has no [Install]: nothing to link
    with open(os.path.join(role_dir("rdma_metrics"), "templates", "hpcnet-rdma-metrics.service.j2"), encoding="utf-8") as f:
        service = f.read()
    assert "Type=oneshot" in service and "RemainAfterExit" not in service and "[Install]" not in service
    # the timer has one, so enable makes a link that rollback's disable removes
    with open(os.path.join(role_dir("rdma_metrics"), "templates", "hpcnet-rdma-metrics.timer.j2"), encoding="utf-8") as f:
        assert "[Install]\nWantedBy=timers.target" in f.read()


def template(name: str) -> str:
    with open(os.path.join(role_dir("rdma_metrics"), "templates", name), encoding="utf-8") as f:
        return render(render(f.read()))   # __rdma_metrics_output holds a template too


def test_stopping_the_textfile_unit_removes_the_collectors_file_and_stops_collecting():
    # rollback stops the textfile unit (service_state's undo); its stop removes the .prom, and the collector,
    # bound to it, neither runs nor starts again until it is active
    unit = template("hpcnet-rdma-metrics-textfile.service.j2")
    assert "Type=oneshot\nRemainAfterExit=yes\nExecStart=/bin/true\n" in unit
    assert "ExecStop=/bin/rm -f -- /var/lib/prometheus/node-exporter/hpcnet_rdma.prom\n" in unit
    assert "[Install]\nWantedBy=multi-user.target" in unit
    service = template("hpcnet-rdma-metrics.service.j2")
    for line in ("Requisite=" + TEXTFILE, "PartOf=" + TEXTFILE):
        assert line + "\n" in service
    assert re.search(r"^After=.*\b%s\b" % re.escape(TEXTFILE), service, re.M)
    files = task_of("hpcnet.rdma.managed_files")["hpcnet.rdma.managed_files"]["files"]
    assert "/etc/systemd/system/" + TEXTFILE in [render(f["path"]) for f in files]
