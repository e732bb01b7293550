"""lab/vm.py console_report(): what `labctl.py vm console` prints of a VM's serial console."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lab"))
import vm  # noqa: E402  pylint: disable=wrong-import-position

BOOT = ["[    0.470132] NMI watchdog: Perf NMI watchdog permanently disabled",
        "\x1b[0;32m  OK  \x1b[0m] Started ssh.service - OpenBSD Secure Shell server.\r",
        "vm2 login: [   86.7] ICMPv6: process `python3' is using deprecated sysctl"]


@pytest.mark.parametrize("extra, trouble", [
    ([], []),
    (["[  912.1] watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [ksoftirqd/1:21]"], ["soft lockup"]),
    (["[  60.2] rcu: INFO: rcu_preempt self-detected stall on CPU"], ["self-detected stall"]),
    (["[  70.0] NETDEV WATCHDOG: mgmt0 (virtio_net): transmit queue 0 timed out"], ["NETDEV WATCHDOG"]),
    (["[  80.0] python3 invoked oom-killer: gfp_mask=0x140cca", "[  80.1] Out of memory: Killed process 812"],
     ["oom-killer", "Out of memory"]),
    (["[  90.0] Kernel panic - not syncing: Fatal exception in interrupt"], ["Kernel panic"]),
])
def test_console_report_names_the_kernel_trouble(tmp_path, extra, trouble):
    log = tmp_path / "vm2.console.log"
    log.write_text("\n".join(BOOT + extra) + "\n")
    node = {"name": "vm2", "pid": None, "tag": "x", "console": str(log)}
    full = vm.console_report(node, 3, trouble_only=False)
    head = full.splitlines()[0]
    assert head.startswith("== vm2: QEMU pid None NOT running; console ")
    assert head.endswith("%d kernel-trouble line(s)" % len(trouble))
    for word in trouble:
        assert any(word in line and line.startswith("  ") for line in full.splitlines()[1:]), full
    # colour codes and carriage returns are gone; the tail is the last 3 lines
    assert "\x1b" not in full and "\r" not in full
    assert full.splitlines()[-3:] == [line.replace("\x1b[0;32m", "").replace("\x1b[0m", "").rstrip("\r")
                                      for line in (BOOT + extra)[-3:]]
    only = vm.console_report(node, 3, trouble_only=True)
    assert (only == "") == (not trouble)
    if trouble:
        assert only == full


def test_console_report_without_a_log(tmp_path):
    node = {"name": "vm1", "pid": None, "tag": "x", "console": str(tmp_path / "none.log")}
    assert vm.console_report(node, 40, trouble_only=False) == \
        "== vm1: QEMU pid None NOT running; no console log %s" % (tmp_path / "none.log")
