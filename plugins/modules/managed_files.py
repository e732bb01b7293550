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
    (temp file, fsync, rename), recording each file's original - its bytes, mode, owner and SELinux
    label, or its absence - in the journal first. A replaced file keeps its owner, group, SELinux
    label, ACLs and other extended attributes. Directories it has to create are made with mode
    0755 (whatever the umask) and journaled too.
  - M(hpcnet.rdma.tuning_state) restores every original byte for byte, removes the files and directories
    this module created, also after a reboot. Use it instead of M(ansible.builtin.template) or
    M(ansible.builtin.copy) for any file the collection owns; render content with the
    C(ansible.builtin.template) lookup.
  - Used by the hpcnet.rdma.fabric_app_config role for C(/etc/nccl.conf), C(/etc/ucx/ucx.conf) and
    C(/etc/openmpi/openmpi-mca-params.conf).
requirements:
  - None beyond Python on the node.
options:
  files:
    description: The files, each given once.
    type: list
    elements: dict
    required: true
    suboptions:
      path:
        description:
          - Absolute path of the file; C(//) and C(/./) are collapsed, C(..) is refused.
          - Each file is given once (C(/etc/a.conf) and C(//etc/a.conf) are the same file).
        type: path
        required: true
      content:
        description:
          - Whole content of the file. Required with O(files[].state=present).
          - Never echoed in the results (as with M(ansible.builtin.copy)); they show its size and sha1.
        type: str
      mode:
        description:
          - Permission bits, for example C("0644"). A string is read as octal.
          - "An integer is the numeric mode, as in M(ansible.builtin.file): an unquoted C(0644) (YAML
            reads the integer 420) is 0644, and an unquoted C(644) is refused (it is 0o1204); quote
            modes to be safe."
        type: raw
        default: "0644"
      state:
        description: C(present) writes the file; C(absent) removes it (rollback brings it back).
        type: str
        choices: [present, absent]
        default: present
attributes:
  diff_mode:
    details: Shows each file before and after; the new content given in O(files[].content) is masked (no_log).
extends_documentation_fragment:
  - hpcnet.rdma.attributes
  - hpcnet.rdma.journal
  - hpcnet.rdma.run
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
  description:
    - State of every managed path before this call (C(null) for an absent file, C(false) for an absent directory).
    - A file shows its mode, size and sha1 (and C(uid), C(gid), C(selinux) where they apply), never its content.
  returned: always
  type: dict
  sample: {"file:/etc/nccl.conf": null}
current:
  description: State of every managed path after this call, read back (predicted in check mode), shown as in RV(previous).
  returned: always
  type: dict
  sample: {"file:/etc/nccl.conf": {"mode": "0644", "size": 15, "sha1": "5b6a3f1bd9f4a9e5b21b8d6b01c1e0a2d9f2f3c4"}}
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
        content=dict(type="str", no_log=True),
        mode=dict(type="raw", default="0644"),
        state=dict(type="str", choices=["present", "absent"], default="present"),
    )),
), _spec.JOURNAL_DIR, _spec.RUN)

_MODE = re.compile(r"^0?[0-7]{3}$")


def file_mode(value: object) -> str:
    """``"0644"`` from a mode option: a string is octal, an integer the numeric mode (ansible-core's
    file modules read ``mode: 0644`` unquoted, the YAML integer 420, the same way).  ValueError."""
    if isinstance(value, int) and not isinstance(value, bool):
        if 0 <= value <= 0o777:
            return "%04o" % value
        raise ValueError("%r is the integer %d (octal %s), not a permission mode; quote octal modes: \"0644\""
                         % (value, value, "0%o" % value if value >= 0 else "-0%o" % -value))
    if isinstance(value, str) and _MODE.match(value):
        return "%04o" % int(value, 8)
    raise ValueError("%r is not an octal mode; allowed: e.g. \"0644\" (permission bits only)" % (value,))


def validate(files: list) -> list:
    """Normalised entries; ValueError naming the entry for bad input."""
    out, seen = [], {}
    for i, f in enumerate(files):
        try:
            path = _files.normal_path(f["path"])
        except ValueError as e:
            raise ValueError("files[%d].path: %s" % (i, e))
        if path in seen:
            first = seen[path]
            raise ValueError("files[%d].path: %s is given twice (files[%d].path %r and files[%d].path %r)"
                             % (i, path, first, files[first]["path"], i, f["path"]))
        seen[path] = i
        try:
            mode = file_mode(f["mode"])
        except ValueError as e:
            raise ValueError("files[%d].mode: %s" % (i, e))
        if f["state"] == "present" and f["content"] is None:
            raise ValueError("files[%d].content: required for %s with state present" % (i, path))
        out.append({"path": path, "mode": mode, "state": f["state"], "content": f["content"]})
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
    return without_content(engine.run("managed_files", lambda: build_plan(host, files)))


def without_content(out: dict) -> dict:
    """The result with every file state's content replaced by its size and sha1 (content is
    no_log, as in ansible.builtin.copy; the journal on the node keeps the bytes)."""
    out = dict(out)
    for field in ("previous", "current"):
        if field in out:
            out[field] = dict((k, _files.summary(v)) for k, v in out[field].items())
    if "changes" in out:
        out["changes"] = [dict(c, before=_files.summary(c["before"]), after=_files.summary(c["after"]))
                          for c in out["changes"]]
    return out


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.exit_json(**run(module, Host.from_module(module)))


if __name__ == "__main__":
    main()
