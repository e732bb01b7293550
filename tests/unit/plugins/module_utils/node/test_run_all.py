# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""node/_host.run_all: the health check reads independent parts of the node side by side (its drift stage
beside the fabric stage, the journal's domains and ethtool runs beside each other); the results come back in the calls'
order, and an exception is raised only after every call has returned - never a thread left reading."""
from __future__ import annotations

import threading

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.node._host import run_all


def test_results_in_order_one_after_the_other_without_concurrent():
    seen = []
    assert run_all([lambda: seen.append(threading.get_ident()) or 1, lambda: 2], False) == [1, 2]
    assert seen == [threading.get_ident()]
    assert run_all([], True) == [] and run_all([lambda: 3], True) == [3]


def test_concurrent_calls_run_at_once_the_first_in_this_thread():
    """Three calls that each wait for all three to have started: only side by side do they return."""
    barrier = threading.Barrier(3, timeout=10)
    where = []

    def call(n):
        where.append(threading.get_ident())
        barrier.wait()
        return n
    assert run_all([lambda: call(0), lambda: call(1), lambda: call(2)], True) == [0, 1, 2]
    assert threading.get_ident() in where and len(set(where)) == 3


def test_the_first_exception_in_the_calls_order_is_raised_after_all_returned():
    finished = threading.Event()

    def slow_then_fail():
        assert not finished.is_set()
        finished.set()
        raise KeyError("second")

    def fail_first():
        raise ValueError("first")
    with pytest.raises(ValueError, match="first"):
        run_all([fail_first, slow_then_fail], True)
    assert finished.is_set()                              # the other call ran to its end before the raise
    finished.clear()
    with pytest.raises(KeyError):
        run_all([lambda: 1, slow_then_fail], False)
