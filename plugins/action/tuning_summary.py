# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action ``hpcnet.rdma.tuning_summary``: the tuning role's summary per host (docs and ARGUMENT_SPEC:
plugins/modules/tuning_summary.py; the summary itself: plugin_utils/_tuning_summary.py).

Shown like debug's output and handed to the run's custom stats like set_stats' - the strategy takes
``ansible_stats`` from any task's result - in one task: global stats keyed by the host, which ansible-runner
(AWX) keeps as the job's artifacts. Nothing runs on the node.
"""
from __future__ import annotations

from ansible.plugins.action import ActionBase

from ansible_collections.hpcnet.rdma.plugins.modules.tuning_summary import ARGUMENT_SPEC
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _tuning_summary


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        validation, args = self.validate_argument_spec(ARGUMENT_SPEC)
        del validation
        results = dict((concern, regs if isinstance(regs, list) else [regs]) for concern, regs in args["results"].items())
        summary = _tuning_summary.summarize(
            results, args["profile"], args["digest"], args["previous_profile"], args["rdma_mode"], args["run"],
            _tuning_summary.fast_path(args["fast"], args["fast_allowed"], args["sync"], args["scopes"]),
            bool(self._play_context.check_mode))
        # shown once: under ansible_stats, which the strategy hands to the run's custom stats
        result.update(changed=False, _ansible_verbose_always=True,
                      ansible_stats=_tuning_summary.stats(summary, args["stats_key"], task_vars["inventory_hostname"]))
        return result
