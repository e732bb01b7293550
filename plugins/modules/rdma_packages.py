#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
module: rdma_packages
short_description: Install distro packages (the RDMA user-space stack) and journal exactly what was added
version_added: 0.1.0
author:
  - hpcnet.rdma contributors (@hpcnet)
description:
  - Installs the given packages with the distribution's package manager (C(apt-get) on Debian and
    Ubuntu, C(dnf) on RHEL, Rocky and Alma), non-interactively, and records in the journal every
    package the install B(newly) added, dependencies included. Packages that were already
    installed are never journaled, so M(hpcnet.rdma.tuning_state) rollback removes exactly what
    this module added and nothing else.
  - Before anything changes, each package must have an install candidate (C(apt-cache policy) /
    C(dnf repoquery)) and the package manager's own simulation must neither upgrade nor remove an
    installed package (rollback could not restore those); otherwise the task fails naming the
    package.
  - Rollback removes one package at a time, dependents first, with C(dpkg --purge) / C(rpm -e),
    which refuse (the task fails naming the package that depends on it) instead of cascading into
    packages something else installed later. A package that was in Debian's C(config-files) state
    before goes back to it.
  - This is a present-only module; removing what it installed is M(hpcnet.rdma.tuning_state)'s job.
requirements:
  - C(apt-get), C(apt-cache), C(dpkg-query) and C(dpkg) (Debian, Ubuntu), or C(dnf) and C(rpm) (RHEL family)
    on the node.
options:
  packages:
    description: Package names in the node's distribution (no versions, no paths).
    type: list
    elements: str
    required: true
  install_recommends:
    description: Also install recommended (Debian) or weak (dnf) dependencies; they are journaled like the rest.
    type: bool
    default: false
  update_cache:
    description:
      - Refresh the package lists (C(apt-get update) / C(dnf makecache)) before resolving, when a
        package is missing. Not run in check mode. The lists are caches and are not journaled.
    type: bool
    default: false
attributes:
  check_mode:
    details: Runs the package manager's simulation and reports exactly the packages a real run installs; installs nothing.
  diff_mode:
    details: Shows each package's state before and after.
extends_documentation_fragment:
  - hpcnet.rdma.attributes
  - hpcnet.rdma.journal
  - hpcnet.rdma.run
notes:
  - Maintainer scripts may leave things a purge does not undo; on Debian, C(libibverbs1) creates the
    system group C(rdma) and it stays after rollback.
"""

EXAMPLES = r"""
- name: RDMA user space on Debian/Ubuntu
  hpcnet.rdma.rdma_packages:
    packages: [rdma-core, ibverbs-utils, rdmacm-utils, infiniband-diags, perftest]

- name: RDMA user space on RHEL, Rocky, Alma
  hpcnet.rdma.rdma_packages:
    packages: [rdma-core, libibverbs-utils, librdmacm-utils, infiniband-diags, perftest]
    update_cache: true
"""

RETURN = r"""
installed:
  description: Packages this call installed (planned in check mode), dependencies included, in install order.
  returned: always
  type: list
  elements: str
  sample: [rdma-core, ibverbs-utils, libibumad3, infiniband-diags]
dependencies:
  description: The part of RV(installed) that was not requested (pulled in as dependencies).
  returned: always
  type: list
  elements: str
already_installed:
  description: Requested packages that were installed before; they are not journaled.
  returned: always
  type: list
  elements: str
manager:
  description: The package manager used.
  returned: always
  type: str
  sample: apt
changes:
  description: One C(pkg:NAME) change per package installed.
  returned: always
  type: list
  elements: dict
  sample: [{"key": "pkg:rdma-core", "before": "absent", "after": "installed"}]
previous:
  description: State of every requested or installed package before this call.
  returned: always
  type: dict
current:
  description: State of those packages after this call, read back (predicted in check mode).
  returned: always
  type: dict
generation:
  description: Journal generation recorded by this call.
  returned: when changed and not in check mode
  type: int
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hpcnet.rdma.plugins.module_utils.stack import _pkg
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _spec
from ansible_collections.hpcnet.rdma.plugins.module_utils.engine._engine import Engine
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host

ARGUMENT_SPEC = _spec.argument_spec(dict(
    packages=dict(type="list", elements="str", required=True),
    install_recommends=dict(type="bool", default=False),
    update_cache=dict(type="bool", default=False),
), _spec.JOURNAL_DIR, _spec.RUN)


def run(module, host: Host) -> dict:
    params = module.params
    names = [n.strip() for n in params["packages"]]
    if not names:
        module.fail_json(msg="packages: give at least one package name")
    try:
        _pkg.validate_names(names)
        mgr = _pkg.manager(host)
    except (ValueError, HostError) as e:
        module.fail_json(msg=str(e))
    distro = _pkg.distro_name(host)
    extra = {"manager": mgr, "installed": [], "dependencies": [], "already_installed": []}
    engine = Engine(module, host, params["journal_dir"], domains=(_pkg.DOMAINS,))
    refreshed = []

    def build():
        if params["update_cache"] and not module.check_mode and not refreshed:
            if any(s != "installed" for s in _pkg.read_states(host, names).values()):
                _pkg.update_cache(host)
                refreshed.append(True)
        plan, previous, facts = _pkg.plan(host, names, params["install_recommends"], distro)
        extra.update(installed=facts["to_install"], dependencies=facts["dependencies"],
                     already_installed=facts["already_installed"])
        return plan, previous

    return engine.run("rdma_packages", build, extra)


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.exit_json(**run(module, Host.from_module(module)))


if __name__ == "__main__":
    main()
