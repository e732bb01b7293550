# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action ``hpcnet.rdma.node_tuning``: runs the module on the node as the normal action does, and
handles its ``summary`` option on the controller (docs: plugins/modules/node_tuning.py).

When the call found the node in sync and ran no step - the tuning role's no-change rerun - the
result gets the tuning summary (plugin_utils/_tuning_summary.py) as ``ansible_stats``, which the
strategy adds to the run's custom stats as it does set_stats', and is shown: the fast path's summary
costs no task of its own. ``summary`` never reaches the node.
"""
from __future__ import annotations

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase
from ansible.utils.vars import merge_hash

from ansible_collections.hpcnet.rdma.plugins.module_utils.engine import _spec
from ansible_collections.hpcnet.rdma.plugins.plugin_utils import _tuning_summary

MODULE = "hpcnet.rdma.node_tuning"


class ActionModule(ActionBase):
    _supports_check_mode = True
    _supports_async = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        args = dict(self._task.args)
        options = args.pop("summary", None)   # the controller's: never sent to the node
        if options is not None:
            checked = ArgumentSpecValidator(_spec.argument_spec(_spec.SUMMARY)).validate({"summary": options})
            if checked.error_messages:
                result.update(failed=True, msg="summary: " + "; ".join(checked.error_messages))
                return result
            options = checked.validated_parameters["summary"]
        wrap_async = self._task.async_val and not self._connection.has_native_async
        result = merge_hash(result, self._execute_module(module_name=MODULE, module_args=args, task_vars=task_vars,
                                                         wrap_async=wrap_async))
        if not wrap_async:
            self._remove_tmp_path(self._connection._shell.tmpdir)
        summary = _tuning_summary.of_fast_call(result, options, bool(self._play_context.check_mode)) if options else None
        if summary is not None:
            result["ansible_stats"] = _tuning_summary.stats(summary, options["stats_key"], task_vars["inventory_hostname"])
            result["_ansible_verbose_always"] = True
        return result
