# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""`ansible-playbook --list-tags` of every playbook in playbooks/ shows the tags README advertises
for it (issue 29: verify_rdma showed only [always] though README names its check families), run by
the real ansible-playbook from the installed-collection path."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

import ansible_collections.hpcnet.rdma as collection

ROOT = list(collection.__path__)[0]
COLLECTIONS = os.path.dirname(os.path.dirname(os.path.dirname(ROOT)))
BINARY = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
PLAYBOOKS = sorted(n[:-4] for n in os.listdir(os.path.join(ROOT, "playbooks")) if n.endswith(".yml"))

with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as _f:
    README = _f.read()


def _row(first_cell: str) -> str:
    (row,) = [line for line in README.splitlines() if line.startswith("| " + first_cell)]
    return row


# What README advertises: the tuning role's concerns (tune_rdma and switch_profile run the role), the
# verify families of the verify_rdma row's `--tags a,b,...`; bench_rdma, rollback_rdma and topology_rdma advertise none.
_SELECTED = re.search(r"the concerns the tags select \(([^)]*)\)", _row("role `hpcnet.rdma.tuning`")).group(1)
CONCERNS = re.findall(r"`([a-z_]+)`", _SELECTED)
FAMILIES = re.search(r"`--tags ([a-z_,]+)`", _row("`hpcnet.rdma.verify_rdma`")).group(1).split(",")
ADVERTISED = {"tune_rdma": CONCERNS, "switch_profile": CONCERNS, "verify_rdma": FAMILIES, "bench_rdma": [],
              "rollback_rdma": [], "topology_rdma": []}


def test_what_readme_advertises_was_found():
    assert CONCERNS == ["stack", "sysctl", "nic", "irq", "qos", "services", "app_config", "record"]
    assert FAMILIES == ["drift", "consistency", "path_mtu", "checklist"]
    assert sorted(ADVERTISED) == PLAYBOOKS


@pytest.mark.parametrize("name", PLAYBOOKS)
def test_list_tags_shows_the_advertised_tags(tmp_path, name):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"),
               ANSIBLE_HOME=str(tmp_path / "home"), ANSIBLE_NOCOLOR="1", ANSIBLE_INVENTORY_UNPARSED_WARNING="0",
               ANSIBLE_LOCALHOST_WARNING="0")
    proc = subprocess.run([BINARY, "-i", "localhost,", os.path.join(ROOT, "playbooks", name + ".yml"), "--list-tags"],
                          cwd=str(tmp_path), env=env, capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    listed = set()
    for line in proc.stdout.splitlines():
        if "TASK TAGS:" in line:
            listed |= {t.strip() for t in line.split("TASK TAGS:")[1].strip(" []").split(",") if t.strip()}
    # every tag listed is advertised (or always), and every advertised one is listed
    assert listed == set(ADVERTISED[name]) | {"always"}, proc.stdout
