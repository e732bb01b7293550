# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""IRQ name -> number (issue 26, item 4): /proc/interrupts is read once per call, not once per IRQ, and
an indexed number is trusted only while the kernel's /proc/irq/N/NAME says IRQ N still carries that name."""
from __future__ import annotations

import os

import pytest

from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _applier
from ansible_collections.hpcnet.rdma.plugins.module_utils.irq import _domain as _irq

HEADER = "            CPU0       CPU1       CPU2       CPU3\n"


def interrupts(numbers):
    """/proc/interrupts with mlx5 vectors at these numbers (async first), as the kernel prints them."""
    lines = [HEADER]
    for k, irq in enumerate(numbers):
        name = "mlx5_async0@pci:0000:3b:00.0" if k == 0 else "mlx5_comp%d@pci:0000:3b:00.0" % (k - 1)
        lines.append("%4d:          0          0          0          0  IR-PCI-MSIX-0000:3b:00.0 %d-edge      %s\n"
                     % (irq, k, name))
    return "".join(lines)


def name_of(queue):
    return "mlx5_comp%d@pci:0000:3b:00.0" % queue


def tree(node, numbers, handler_dirs=True):
    """The node's IRQ table: /proc/interrupts and /proc/irq/N (with the kernel's directory per named handler)."""
    text = interrupts(numbers)
    node.write("/proc/interrupts", text)
    for irq, info in _irq.parse_interrupts(text).items():
        node.write("/proc/irq/%d/smp_affinity_list" % irq, "0-3\n")
        if handler_dirs:
            os.makedirs(node.path("/proc/irq/%d/%s" % (irq, info["name"])), exist_ok=True)


@pytest.fixture
def counted(node):
    """A host of the node that counts its reads of /proc/interrupts."""
    host = node.host()
    real = host.read
    host.interrupts_reads = 0

    def read(path):
        if path == _irq.INTERRUPTS:
            host.interrupts_reads += 1
        return real(path)

    host.read = read
    return host


def test_one_read_of_proc_interrupts_for_every_irq_of_a_call(node, counted):
    tree(node, range(120, 137))
    for queue in range(16):
        assert _irq.read_value(counted, name_of(queue)) == "0-3"
        _irq.write_value(counted, name_of(queue), str(queue % 4))
        assert _irq.effective(counted, name_of(queue)) is None
    assert counted.interrupts_reads == 1
    assert node.read("/proc/irq/%d/smp_affinity_list" % 136) == "3"   # comp15 is IRQ 136
    assert _irq.irq_number(node.host(), name_of(15)) == 136            # a new call reads the file again


def test_numbers_that_changed_within_the_call_are_read_again(node, counted):
    tree(node, range(120, 137))
    assert _irq.irq_number(counted, name_of(3)) == 124
    # a driver reload (or ethtool -L) gave the vectors new numbers: the old handler directories are gone
    for irq in range(120, 137):
        os.rmdir(node.path("/proc/irq/%d/%s" % (irq, _irq.parse_interrupts(interrupts(range(120, 137)))[irq]["name"])))
    tree(node, range(300, 317))
    assert _irq.irq_number(counted, name_of(3)) == 304
    assert counted.interrupts_reads == 2
    _irq.write_value(counted, name_of(3), "2")
    assert node.read("/proc/irq/304/smp_affinity_list") == "2" and node.read("/proc/irq/124/smp_affinity_list") == "0-3\n"
    assert counted.interrupts_reads == 2


def test_without_the_handler_directories_every_lookup_reads_the_file(node, counted):
    """A kernel (or tree) without /proc/irq/N/NAME: still the right number, read each time as before."""
    tree(node, range(120, 137), handler_dirs=False)
    assert [_irq.irq_number(counted, name_of(q)) for q in (0, 7, 15)] == [121, 128, 136]
    assert counted.interrupts_reads == 3


def test_an_unknown_name_is_a_lookup_error_and_no_name_is_trusted_by_its_directory(node, counted):
    tree(node, range(120, 137))
    with pytest.raises(LookupError, match="mlx5_comp99@pci:0000:3b:00.0 is not in /proc/interrupts"):
        _irq.irq_number(counted, name_of(99))
    counted.tool_facts[_irq._INDEX][""] = 120   # /proc/irq/120/ exists, but "" names no handler
    with pytest.raises(LookupError):
        _irq.irq_number(counted, "")


def test_the_boot_applier_indexes_once_too(node, monkeypatch):
    tree(node, range(120, 137))
    host = _applier.BootHost(node.root)
    reads = []
    real = host.read
    monkeypatch.setattr(host, "read", lambda path: reads.append(path) or real(path))
    for queue in range(16):
        _irq.write_value(host, name_of(queue), "1")
    assert reads.count(_irq.INTERRUPTS) == 1
