#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: managed_files
short_description: Write whole configuration files through the journal, so rollback restores them exactly
version_added: 0.1.0
author:
  - hpcnet.rdma contributors (@hpcnet)
description:
  - Brings several files to the given content and mode (or removes them) in one call, atomically
    (temp file, fsync, rename), recording each file's original - content and mode, or its absence - in
    the journal first. Directories it has to create are journaled too.
  - M(hpcnet.rdma.tuning_state) restores every original byte for byte, removes the files and directories
    this module created, also after a reboot. Use it instead of M(ansible.builtin.template) or
    M(ansible.builtin.copy) for any file the collection owns; render content with the
    C(ansible.builtin.template) lookup.
  - Used by the hpcnet.rdma.fabric_app_config role for C(/etc/nccl.conf), C(/etc/ucx/ucx.conf) and
    C(/etc/openmpi/openmpi-mca-params.conf).
options:
  files:
    description: The files, each given once.
    type: list
    elements: dict
    required: true
    suboptions:
      path:
        description: Absolute path of the file.
        type: path
        required: true
      content:
        description: Whole content of the file. Required with O(files[].state=present).
        type: str
      mode:
        description: Octal permission bits, for example C("0644").
        type: str
        default: "0644"
      state:
        description: C(present) writes the file; C(absent) removes it (rollback brings it back).
        type: str
        choices: [present, absent]
        default: present
attributes:
  diff_mode:
    details: Shows each file before and after.
extends_documentation_fragment:
  - hpcnet.rdma.attributes
  - hpcnet.rdma.journal
"""

EXAMPLES = r"""
- name: NCCL and UCX settings that rollback restores
  hpcnet.rdma.managed_files:
    files:
      - path: /etc/nccl.conf
        content: "{{ lookup('ansible.builtin.template', 'nccl.conf.j2') }}"
      - path: /etc/ucx/ucx.conf
        content: |
          UCX_NET_DEVICES=mlx5_0:1
          UCX_IB_TRAFFIC_CLASS=106
        mode: "0644"
"""

RETURN = r"""
changes:
  description: Every change planned (check mode) or made, in order. Keys are C(dir:PATH) and C(file:PATH).
  returned: always
  type: list
  elements: dict
  sample: [{"key": "dir:/etc/ucx", "before": false, "after": true}]
previous:
  description: State of every managed path before this call (C(null) for an absent file, C(false) for an absent directory).
  returned: always
  type: dict
  sample: {"file:/etc/nccl.conf": null}
current:
  description: State of every managed path after this call, read back (predicted in check mode).
  returned: always
  type: dict
  sample: {"file:/etc/nccl.conf": {"content": "NCCL_IB_TC=106\n", "mode": "0644"}}
generation:
  description: Journal generation recorded by this call.
  returned: when changed and not in check mode
  type: int
  sample: 5
"""

import re

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpcnet.rdma.plugins.module_utils import _files, _spec
from ansible_collections.hpcnet.rdma.plugins.module_utils._engine import Engine
from ansible_collections.hpcnet.rdma.plugins.module_utils._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils._plan import Plan

ARGUMENT_SPEC = _spec.argument_spec(dict(
    files=dict(type="list", elements="dict", required=True, options=dict(
        path=dict(type="path", required=True),
        content=dict(type="str"),
        mode=dict(type="str", default="0644"),
        state=dict(type="str", choices=["present", "absent"], default="present"),
    )),
), _spec.JOURNAL_DIR)

_MODE = re.compile(r"^0?[0-7]{3}$")


def validate(files: list) -> list:
    """Normalised entries; ValueError naming the entry for bad input."""
    out, seen = [], set()
    for i, f in enumerate(files):
        path = f["path"]
        if not path.startswith("/") or path.endswith("/") or "/../" in path + "/":
            raise ValueError("files[%d].path: %r is not an absolute file path" % (i, path))
        if path in seen:
            raise ValueError("files[%d].path: %s is given twice" % (i, path))
        seen.add(path)
        mode = str(f["mode"])
        if not _MODE.match(mode):
            raise ValueError("files[%d].mode: %r is not an octal mode; allowed: e.g. \"0644\"" % (i, mode))
        if f["state"] == "present" and f["content"] is None:
            raise ValueError("files[%d].content: required for %s with state present" % (i, path))
        out.append({"path": path, "mode": "%04o" % int(mode, 8), "state": f["state"], "content": f["content"]})
    return out


def build_plan(host: Host, files: list):
    p, previous = Plan(), {}
    for f in files:
        before = host.file_state(f["path"])
        after = _files.owned(f["content"], f["mode"]) if f["state"] == "present" else None
        # the directories a created file needs are journaled by the engine (with_parent_dirs)
        previous["file:" + f["path"]] = before
        p.add("file:" + f["path"], before, after)
    return p, previous


def run(module, host: Host) -> dict:
    try:
        files = validate(module.params["files"])
    except ValueError as e:
        module.fail_json(msg=str(e))
    engine = Engine(module, host, module.params["journal_dir"], domains=(_files.DOMAINS,))
    return engine.run("managed_files", lambda: build_plan(host, files))


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.exit_json(**run(module, Host.from_module(module)))


if __name__ == "__main__":
    main()
