"""Testinfra hooks of every `verify` step of the vm scenario, for a VM that stops answering ssh.

A check that fails because ssh to a VM failed (exit 255: the guest hung, died or stopped
answering) gets that VM's serial console attached to its report (kernel-trouble lines and the
last lines, lab/lablib/vmdiag.py console_report()), QEMU's run state and where each vCPU is (cpu_report(): a
kernel address it is stuck at means a lockup, the halt loop an idle guest) and the result of a fresh ssh login that waits up to
PROBE_SECONDS.  If the VM answers again, the failure stands but later checks run as usual; if
not, the later checks of that VM fail at once, naming the check where it stopped answering,
instead of each waiting for its own ssh timeout, and the VM is named in lab/run/molecule-vm/lost-ssh
(scripts/molecule_vm.sh runs the scenario once more then, and says so in the tier's result).
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lab"))
from lablib import vmdiag, vmstate  # noqa: E402  pylint: disable=wrong-import-position

RUN = "molecule-vm"
PROBE_SECONDS = 60
# One line "VM TEST" per VM that stopped answering for good; scripts/molecule_vm.sh reads it.
LOST_FILE = "lost-ssh"
_reported = set()
_dead = {}


def vm_of(item):
    host = getattr(item, "funcargs", {}).get("host")
    return getattr(getattr(host, "backend", None), "host", None)


def ssh_failed(call):
    return call.excinfo is not None and call.excinfo.errisinstance(RuntimeError) \
        and "exit_status=255" in str(call.excinfo.value)


@pytest.hookimpl(trylast=True)  # after the fixtures are set up: item.funcargs has `host`
def pytest_runtest_setup(item):
    name = vm_of(item)
    if name in _dead:
        pytest.fail("%s stopped answering ssh in %s (its console is in that report); not tried again"
                    % (name, _dead[name]), pytrace=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    name = vm_of(item)
    if not report.failed or name is None or not ssh_failed(call) or name in _reported:
        return
    _reported.add(name)
    state = vmstate.load_state(RUN) or {}
    node = next((n for n in state.get("nodes", []) if n["name"] == name), None)
    if node is None:
        report.sections.append(("ssh to %s failed" % name, "no VM %s in lab run %s" % (name, RUN)))
        return
    took = vmstate.ssh_answers(node, PROBE_SECONDS)
    if took is None:
        _dead[name] = item.nodeid
        with open(vmstate.run_dir(RUN) / LOST_FILE, "a", encoding="utf-8") as lost:
            lost.write("%s %s\n" % (name, item.nodeid))
        probe = "a fresh ssh login does NOT answer within %ds either" % PROBE_SECONDS
    else:
        _reported.discard(name)  # a later failure of this VM gets its own report
        probe = "a fresh ssh login answered again, in %.1fs" % took
    report.sections.append(("ssh to %s failed: %s; QEMU's state, its vCPUs and its serial console" % (name, probe),
                            vmdiag.cpu_report(node, vmdiag.run_symbols(state)) + "\n"
                            + vmdiag.console_report(node, 60, trouble_only=False)))
