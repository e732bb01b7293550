# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One small runner for every command-line tool (the idea of community.general's ``CmdRunner``).

A tool is declared once, beside its parsers, as a table of argv formats per action::

    ETHTOOL = Tool("ethtool", {"rings": ["-g", "{ifname}"],
                               "set_rings": ["-G", "{ifname}", "{*args}"]},
                   parsers={"rings": parse_ethtool_rings})

A token ``"{name}"`` (any ``str.format`` text) is filled from the call's keyword values; a token
``"{*name}"`` splices the list ``name`` into argv.  :meth:`Tool.call` runs the argv through
``host.run`` (argv only; ``LC_ALL=C`` is the Host's job), decides success with the action's
check (default: exit code 0), raises :class:`~_errors.NotSupported` when the tool says the driver
lacks the operation and :class:`~_errors.HostError` naming the argv, rc and message otherwise, and
hands stdout to the action's parser (stdout itself when the action has none).
"""
from __future__ import annotations

import collections

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._errors import command_error
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import Host
from ansible_collections.hpcnet.rdma.plugins.module_utils.node._parsing import is_not_supported

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple
    Parser = Callable[[str], Any]


class Failure(collections.namedtuple("Failure", "message unsupported")):
    """How a run failed: ``message`` (str) for the error, and whether it means "not supported" (``unsupported``,
    bool)."""

    __slots__ = ()


if TYPE_CHECKING:
    Check = Callable[[int, str, str], Optional[Failure]]


def rc_check(rc: int, out: str, err: str) -> Optional[Failure]:
    """The common rule: a non-zero exit fails; the message is stderr, or stdout when stderr is empty."""
    if rc == 0:
        return None
    msg = (err or out).strip()
    return Failure(msg, is_not_supported(msg))


class Tool(object):
    """A command-line tool: argv formats per action, and the parser and check of each action."""

    def __init__(self, name: str, formats: Dict[str, Sequence[str]],
                 parsers: Optional[Dict[str, Parser]] = None,
                 checks: Optional[Dict[str, Check]] = None) -> None:
        self.name = name
        self.formats = formats
        self.parsers = dict(parsers or {})
        self.checks = dict(checks or {})

    def argv(self, action: str, **values: Any) -> List[str]:
        """``[name] + the action's formats filled from values``."""
        if action not in self.formats:
            raise ValueError("%s has no action %r (known: %s)" % (self.name, action, ", ".join(sorted(self.formats))))
        argv = [self.name]
        for token in self.formats[action]:
            if token.startswith("{*") and token.endswith("}"):
                argv.extend(str(v) for v in values[token[2:-1]])
            else:
                argv.append(token.format(**values))
        return argv

    def run(self, host: Host, action: str, **values: Any) -> Tuple[int, str, str]:
        """Run the action and return ``(rc, stdout, stderr)`` unchecked, for callers with their own rules."""
        return host.run(self.argv(action, **values))

    def call(self, host: Host, action: str, **values: Any) -> Any:
        """Run the action, raise on failure, return the parsed stdout."""
        argv = self.argv(action, **values)
        rc, out, err = host.run(argv)
        failure = self.checks.get(action, rc_check)(rc, out, err)
        if failure is not None:
            raise command_error(argv, rc, failure.message, failure.unsupported)
        parser = self.parsers.get(action)
        return parser(out) if parser is not None else out
