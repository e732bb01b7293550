#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: sysctl_tuning
short_description: Set many kernel parameters in one call, live and persisted, with rollback
version_added: 0.1.0
author:
  - hpcnet.rdma contributors (@hpcnet)
description:
  - Sets every given sysctl in one task, at runtime through C(/proc/sys), persisted into one file
    this collection owns in C(/etc/sysctl.d), or both.
  - Multi-value keys such as C(net.ipv4.tcp_rmem) accept a string or a list and are compared
    whitespace-normalised, so C(4096 87380 6291456) equals the kernel's tab-separated output.
  - A key the kernel does not let this context change (a kernel-global key inside a container,
    or one that is absent or read-only in a child network namespace) is reported in RV(unsettable);
    the task fails on it unless O(on_unsupported=warn).
  - Warns when another sysctl.d file applied later at boot would override one of the values.
  - Originals are recorded in the journal; roll back with M(hpcnet.rdma.tuning_state).
requirements:
  - Linux with procfs (C(/proc/sys)) on the node; systemd-sysctl or procps applies C(/etc/sysctl.d) at boot.
options:
  sysctls:
    description:
      - Mapping of sysctl name (dotted, or slash-separated as in sysctl.d(5)) to the wanted value; one
        sysctl given in both forms is refused.
      - Values are integers, strings, or lists for multi-value keys; a control character is refused.
      - C(net.ipv4.tcp_congestion_control) and C(net.core.default_qdisc) must be offered by the
        running kernel (listed by it, or a C(tcp_NAME) or C(sch_NAME) module it can load); when that
        cannot be told (no C(/lib/modules) for the running kernel) or in O(mode=persist) it is a warning.
      - An empty mapping (without O(release_scope)) is a no-op - nothing is read, written or created
        and the task reports no change.
      - A value the kernel refuses when it is written (its handler's range, an unknown name) fails the
        task naming the key, the value, the errno and its text, the allowed range where it is known, and
        what the key still holds; every change of the call is reverted.
    type: dict
    required: true
  file:
    description:
      - The sysctl.d file this collection owns and rewrites completely.
      - A plain C(NAME.conf) directly in C(/etc/sysctl.d) or C(/usr/local/lib/sysctl.d); C(//) and
        C(/./) are collapsed, C(..), hidden names and other directories are refused (C(/run/sysctl.d)
        does not survive a reboot, C(/usr/lib/sysctl.d) belongs to the packages).
    type: path
    default: /etc/sysctl.d/90-hpcnet-rdma.conf
  on_unsupported:
    description:
      - What to do with a key the kernel does not allow in this context.
      - C(fail) fails before changing anything; C(warn) applies the other keys, still persists
        the key (it applies at boot on a real node) and lists it in RV(unsettable).
      - The collection's one name for this switch (M(hpcnet.rdma.roce_qos) and M(hpcnet.rdma.rdma_stack)
        have it too); C(on_unsettable) is its old name, kept as an alias.
    aliases: [on_unsettable]
    type: str
    choices: [fail, warn]
    default: fail
  context:
    description:
      - C(auto) detects a container, where kernel-global keys (C(vm.*), C(kernel.*), global
        C(net.core.*)) would change the host kernel and are therefore not settable.
      - C(host) and C(container) override the detection.
    type: str
    choices: [auto, host, container]
    default: auto
attributes:
  diff_mode:
    details: Shows runtime values before and after, and the persisted file.
extends_documentation_fragment:
  - hpcnet.rdma.attributes
  - hpcnet.rdma.journal
  - hpcnet.rdma.run
  - hpcnet.rdma.mode
"""

EXAMPLES = r"""
- name: RDMA socket buffers, live and persisted
  hpcnet.rdma.sysctl_tuning:
    sysctls:
      net.core.rmem_max: 268435456
      net.core.wmem_max: 268435456
      net.ipv4.tcp_rmem: [4096, 87380, 268435456]
      net.ipv4.tcp_wmem: "4096 65536 268435456"
      vm.zone_reclaim_mode: 0

- name: Image bake - only the sysctl.d file
  hpcnet.rdma.sysctl_tuning:
    mode: persist
    sysctls:
      net.core.netdev_max_backlog: 250000

- name: Inside containers, apply per-namespace keys and report global ones
  hpcnet.rdma.sysctl_tuning:
    on_unsupported: warn
    sysctls:
      net.ipv4.tcp_mtu_probing: 1
      net.core.rmem_max: 268435456
"""

RETURN = r"""
changes:
  description: Every change planned (check mode) or made, in order. Keys are C(sysctl:NAME) and C(file:PATH).
  returned: always
  type: list
  elements: dict
  sample: [{"key": "sysctl:net.ipv4.tcp_rmem", "before": "4096 131072 6291456", "after": "4096 87380 268435456"}]
previous:
  description: Value of every managed key before this call; C(null) for an absent file.
  returned: always
  type: dict
  sample: {"sysctl:net.ipv4.tcp_rmem": "4096 131072 6291456"}
current:
  description: Value of every managed key after this call, read back from the node (predicted in check mode).
  returned: always
  type: dict
  sample: {"sysctl:net.ipv4.tcp_rmem": "4096 87380 268435456"}
unsettable:
  description: Keys the kernel does not allow in this context, with the reason; not applied at runtime.
  returned: always
  type: list
  elements: dict
  sample: [{"key": "net.core.rmem_max", "value": "268435456", "current": "212992",
            "reason": "kernel-global key: inside a container it would change the host's kernel"}]
sysctls:
  description: The normalised values asked for.
  returned: always
  type: dict
  sample: {"net.ipv4.tcp_rmem": "4096 87380 268435456"}
generation:
  description: Journal generation recorded by this call.
  returned: when changed and not in check mode
  type: int
  sample: 3
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpcnet.rdma.plugins.module_utils.sysctl._module import ARGUMENT_SPEC, run
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.exit_json(**run(module, Host.from_module(module)))


if __name__ == "__main__":
    main()
