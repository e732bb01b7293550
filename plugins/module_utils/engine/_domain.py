# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The domain contract, written down once.

A *domain* is the code behind one journal key prefix (``sysctl:``, ``nic:``, ``file:``, ...).
It reads and writes one target on the node and says when two values are the same; the engine
(``_engine``) applies, verifies and reverts plans through it, and rollback restores journal
originals through it.  Each domain file ends with ``DOMAINS = {prefix: domain}``; a module hands
the engine the maps of the domains it writes, and only ``tuning_state`` (rollback and status of
any key) takes them all from ``_registry``.

A domain is either a file whose module-level functions are the three below (``_sysctl``,
``_link``, ...) or an object with them as methods (``_rdma.KMOD``, ``_qos.DCB``, ...).

A domain whose targets share one tool call (a package manager query for all packages, one
``ethtool -g`` for an interface's rx and tx rings) may also offer ``read_values(host, targets)``:
``{target: value}``, a ``HostError`` instance in place of the value of a target it could not read.
``_apply.Domains.read_values`` uses it where it exists, ``read_value`` one by one elsewhere; the
values are the same, only the number of tool runs differs (status and the health check read every
journaled key of a node at once).
"""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import HostError

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Mapping, Protocol
    from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host


class Refused(HostError):
    """The node refused the new value and nothing changed for that key: a kernel-managed IRQ
    (EIO), a kernel module still in use, the RDMA netns mode while other namespaces exist.

    ``write_value`` raises it; ``_apply.apply_plan`` turns it into a named ``refused`` result
    instead of failing the call.  Any other error fails the call and reverts it."""


# What the engine needs of a domain: its names here for the unit test that every domain has them; the Protocol
# below for a type checker (typing is not imported at run time - docs/health.md, the check's start).
CONTRACT = ("read_value", "write_value", "same")

if TYPE_CHECKING:
    class Domain(Protocol):
        """What the engine needs of the code behind one journal key prefix."""

        def read_value(self, host: Host, target: str) -> Any:
            """The target's present value, in the form the planner and the journal use."""

        def write_value(self, host: Host, target: str, value: Any) -> None:
            """Bring the target to ``value``; raise :class:`Refused` when the node says no and
            nothing changed, ``HostError`` for any other failure."""

        def same(self, actual: Any, wanted: Any) -> bool:
            """Whether ``actual`` (read back) satisfies ``wanted`` (planned)."""

    DomainMap = Mapping[str, Domain]
