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
          - Refused before anything changes - a path in the journal directory (O(journal_dir) or
            C(/var/lib/hpcnet-rdma), also reached through a symbolic link), and a path in C(/proc), C(/sys)
            or C(/dev) (use M(hpcnet.rdma.sysctl_tuning) for C(/proc/sys)).
          - Every directory on the way must be one only root - or the file's owner - can change - owned by
            root or by the owner of the file, not writable by group or others unless sticky (C(/tmp)), and
            no symbolic link of another user on the way; otherwise the call fails naming the directory,
            since whoever can change it could point the write anywhere.
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

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpcnet.rdma.plugins.module_utils.files._module import ARGUMENT_SPEC, run
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.exit_json(**run(module, Host.from_module(module)))


if __name__ == "__main__":
    main()
