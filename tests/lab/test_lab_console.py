"""lab/lablib/vmdiag.py: what `labctl.py vm console` prints of a VM: its serial console (console_report)
and, over QMP, QEMU's run state and where each vCPU is (cpu_report, symbolise)."""
import json
import socket
import threading
import types

import pytest

from lablib import vmdiag  # lab/ is on sys.path: tests/lab/conftest.py

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
    full = vmdiag.console_report(node, 3, trouble_only=False)
    head = full.splitlines()[0]
    assert head.startswith("== vm2: QEMU pid None NOT running; console ")
    assert head.endswith("%d kernel-trouble line(s)" % len(trouble))
    for word in trouble:
        assert any(word in line and line.startswith("  ") for line in full.splitlines()[1:]), full
    # colour codes and carriage returns are gone; the tail is the last 3 lines
    assert "\x1b" not in full and "\r" not in full
    assert full.splitlines()[-3:] == [line.replace("\x1b[0;32m", "").replace("\x1b[0m", "").rstrip("\r")
                                      for line in (BOOT + extra)[-3:]]
    only = vmdiag.console_report(node, 3, trouble_only=True)
    assert (only == "") == (not trouble)
    if trouble:
        assert only == full


def test_console_report_without_a_log(tmp_path):
    node = {"name": "vm1", "pid": None, "tag": "x", "console": str(tmp_path / "none.log")}
    assert vmdiag.console_report(node, 40, trouble_only=False) == \
        "== vm1: QEMU pid None NOT running; no console log %s" % (tmp_path / "none.log")


KALLSYMS_TEXT = """ffffffff81000000 T _text
ffffffff81000000 T startup_64
ffffffff81c4a2b0 T default_idle
ffffffff81c4a2d0 T native_safe_halt
ffffffff81234560 t rxe_do_task
ffffffff82a00000 D some_data
"""


@pytest.mark.parametrize("addr, where", [
    (0xffffffff81c4a2d5, "native_safe_halt+0x5"),
    (0xffffffff81234567, "rxe_do_task+0x7"),
    (0xffffffff81000000, "startup_64+0x0"),
    (0xffffffffc0a1b2c3, "module code 0xffffffffc0a1b2c3"),
    (0xffffffff80000000, "0xffffffff80000000"),   # below every symbol
])
def test_symbolise_against_saved_kallsyms(tmp_path, addr, where):
    (tmp_path / "kallsyms").write_text(KALLSYMS_TEXT)
    syms = vmdiag.kernel_symbols(tmp_path / "kallsyms")
    assert ("some_data" not in {name for _addr, name in syms}) and len(syms) == 5
    assert vmdiag.symbolise(addr, syms) == where


class FakeQmp:
    """A stand-in QMP server on a unix socket: greeting, then one reply per command (events between)."""

    def __init__(self, path, status="running"):
        self.asked = []
        self.replies = {"query-status": {"status": status, "running": status == "running"},
                        "human-monitor-command": ("CPU#0\nRAX=0 RIP=ffffffff81c4a2d5 RFL=00000246\n"
                                                  "CPU#1\nRAX=0 RIP=ffffffff81234567 RFL=00000246\n")}
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(path)
        self.server.listen(8)
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                conn, _peer = self.server.accept()
            except OSError:
                return
            with conn, conn.makefile("rw", encoding="utf-8") as f:
                f.write(json.dumps({"QMP": {"version": {}, "capabilities": []}}) + "\n")
                f.flush()
                for line in f:
                    cmd = json.loads(line)
                    self.asked.append(cmd["execute"])
                    ret = self.replies.get(cmd["execute"], {})
                    f.write(json.dumps({"event": "NOISE"}) + "\n" + json.dumps({"return": ret}) + "\n")
                    f.flush()

    def close(self):
        self.server.close()


def test_cpu_report_asks_qemu_over_qmp(tmp_path):
    fake = FakeQmp(str(tmp_path / "vm2.qmp"))
    try:
        node = {"name": "vm2", "qmp": str(tmp_path / "vm2.qmp"), "overlay": str(tmp_path / "vm2.qcow2")}
        syms = [(0xffffffff81234560, "rxe_do_task"), (0xffffffff81c4a2d0, "native_safe_halt")]
        report = vmdiag.cpu_report(node, syms, samples=2)
    finally:
        fake.close()
    lines = report.splitlines()
    assert lines[0].startswith("== vm2: QEMU status running (running=True), ") and lines[0].endswith(
        " MiB free for its overlay")
    assert lines[1:] == [
        "  vCPU 0: native_safe_halt+0x5, native_safe_halt+0x5",
        "  vCPU 1: rxe_do_task+0x7, rxe_do_task+0x7",
    ]
    assert fake.asked.count("qmp_capabilities") == 3 and "query-status" in fake.asked


@pytest.mark.parametrize("status, free, said", [
    ("running", 50 << 30, ""),
    ("io-error", 50 << 30, "== vm2: QEMU status io-error (the guest is not running)"),
    ("running", 287 << 20, "== vm2: only 287 MiB free for its overlay"),
    ("io-error", 100 << 20, "== vm2: only 100 MiB free for its overlay; QEMU status io-error (the guest is not running)"),
])
def test_qemu_trouble_names_a_paused_guest_and_a_full_disk(tmp_path, monkeypatch, status, free, said):
    monkeypatch.setattr(vmdiag.shutil, "disk_usage", lambda path: types.SimpleNamespace(free=free))
    fake = FakeQmp(str(tmp_path / "vm2.qmp"), status)
    try:
        node = {"name": "vm2", "qmp": str(tmp_path / "vm2.qmp"), "overlay": str(tmp_path / "vm2.qcow2")}
        assert vmdiag.qemu_trouble(node) == said
    finally:
        fake.close()


def test_no_symbols_without_a_saved_kallsyms(tmp_path):
    assert vmdiag.kernel_symbols(tmp_path / "kallsyms") == []
    assert vmdiag.run_symbols({"image": str(tmp_path)}) == [] and vmdiag.run_symbols({}) == []


def test_cpu_report_without_qmp(tmp_path):
    node = {"name": "vm1", "qmp": str(tmp_path / "absent.qmp"), "overlay": str(tmp_path / "vm1.qcow2")}
    assert vmdiag.cpu_report(node, [], samples=1).startswith("== vm1: no QMP answer (")
    assert vmdiag.qemu_trouble(node).startswith("== vm1: no QMP answer (")
