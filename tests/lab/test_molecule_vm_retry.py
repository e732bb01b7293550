"""scripts/molecule_vm.sh: the VM tier retries once, only when a guest stopped answering ssh.

`molecule` is replaced by a stand-in on PATH that plays one scenario outcome per call; the script,
scripts/results.py and the recorded result are the real ones (results go to a temporary dir).
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PASS = "echo '==== 254 passed, 1 skipped in 700.00s ===='; exit 0"
LOST = ("echo 'vm2 tests/test_tuned.py::test_journal_holds_the_originals[ansible://vm2]' >> \"$MOLECULE_VM_RUN_DIR/lost-ssh\";"
        " echo '==== 17 failed, 69 passed in 300.00s ===='; exit 1")
ASSERT = "echo '==== 1 failed, 85 passed in 60.00s ===='; exit 1"


def run_tier(tmp_path, outcomes):
    bindir, rundir, results = tmp_path / "bin", tmp_path / "run", tmp_path / "results"
    for d in (bindir, rundir, results):
        d.mkdir()
    (rundir / "vm2.console.log").write_text("[  912.1] watchdog: BUG: soft lockup - CPU#1 stuck for 22s!\n")
    script = ["#!/bin/bash", 'n=$(($(cat "%s/calls" 2>/dev/null || echo 0) + 1)); echo $n > "%s/calls"' % (tmp_path, tmp_path)]
    script += ['if [ $n = %d ]; then %s; fi' % (i + 1, body) for i, body in enumerate(outcomes)]
    script += ["echo 'no more outcomes'; exit 99"]
    (bindir / "molecule").write_text("\n".join(script) + "\n")
    (bindir / "molecule").chmod(0o755)
    env = dict(os.environ, PATH="%s:%s" % (bindir, os.environ["PATH"]), MOLECULE_VM_RUN_DIR=str(rundir),
               PYTHON=sys.executable)
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "molecule_vm.sh"), str(results)], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    calls = int((tmp_path / "calls").read_text())
    return proc, calls, results


@pytest.mark.parametrize("outcomes, calls, ok, said", [
    ([PASS], 1, True, None),
    ([ASSERT], 1, False, None),                      # a failed check is never retried
    ([LOST, PASS], 2, True, "attempt 2 of 2: attempt 1 lost vm2 tests/test_tuned.py::test_journal_holds_the_originals"),
    ([LOST, LOST], 2, False, "attempt 2 of 2: attempt 1 lost vm2"),  # once only
    ([LOST, ASSERT], 2, False, "attempt 2 of 2"),
])
def test_retry_only_after_a_lost_vm(tmp_path, outcomes, calls, ok, said):
    proc, made, results = run_tier(tmp_path, outcomes)
    assert made == calls, proc.stdout + proc.stderr
    assert (proc.returncode == 0) == ok, proc.stdout + proc.stderr
    last = [line for line in proc.stdout.splitlines() if line.startswith("molecule-vm: ")][-1]
    assert last.startswith("molecule-vm: OK" if ok else "molecule-vm: FAILED"), last
    # the per-step time table (scripts/steptimes.py) ends the output and is kept beside the log
    assert "step times: no Molecule step seen in the output" in proc.stdout
    assert (results / "molecule-vm.steps").is_file()
    recorded = json.loads((results / "molecule-vm.json").read_text())
    assert recorded["ok"] is ok and last.endswith(recorded["detail"])
    if said:
        assert said in last, last
        assert "LOST A VM" in proc.stdout
        kept = sorted(p.name for p in results.iterdir())
        assert kept == ["molecule-vm.attempt1.log", "molecule-vm.attempt1.steps", "molecule-vm.attempt1.vm2.console.log",
                        "molecule-vm.json", "molecule-vm.log", "molecule-vm.steps"]
        assert "soft lockup" in (results / "molecule-vm.attempt1.vm2.console.log").read_text()
    else:
        assert "attempt" not in last and "LOST" not in proc.stdout
