"""Testinfra hook of every `verify` step of the vm scenario: when a check fails because ssh to a
VM failed (exit 255: the guest hung, died or stopped answering), attach that VM's serial console
(kernel-trouble lines and its last lines, from `labctl.py vm console`) to the failure report.
The CI log then says why the VM stopped answering, not only that it did."""
import os
import subprocess
import sys

import pytest

LAB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lab", "labctl.py")
RUN = "molecule-vm"
_reported = set()


def console_of(vm):
    res = subprocess.run([sys.executable, LAB, "vm", "console", "--run", RUN, "--lines", "60", vm],
                         capture_output=True, text=True, timeout=60, check=False)
    return res.stdout + res.stderr


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not report.failed or call.excinfo is None:
        return
    if not (call.excinfo.errisinstance(RuntimeError) and "exit_status=255" in str(call.excinfo.value)):
        return
    host = getattr(item, "funcargs", {}).get("host")
    vm = getattr(getattr(host, "backend", None), "host", None)
    if vm is None:
        return
    # once per VM per pytest session: every later check of a dead VM fails the same way
    if vm not in _reported:
        _reported.add(vm)
        report.sections.append(("ssh to %s failed: its serial console" % vm, console_of(vm)))
