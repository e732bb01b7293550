"""scripts/steptimes.py: the VM tier's per-step time table, read from Molecule's output as it streams."""
import importlib.util
import io
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("steptimes", ROOT / "scripts" / "steptimes.py")
steptimes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(steptimes)

# What molecule 26 prints with NO_COLOR=1 (scripts/molecule_vm.sh), one clock tick per line.
LOG = """\
INFO     [vm > create] Executing
PLAY [Create the lab VMs] ******
INFO     [vm > create] Executed: Successful
INFO     [vm > converge] Executing
PLAY [Tune the RDMA nodes] ******
PLAY [A second play] ******
INFO     [vm > side_effect] Executing
PLAY [Fabric metrics on the VMs, and a bench run they export] ******
INFO     [vm > verify] Executing
INFO     [vm > verify] Executing Testinfra tests found in /w/molecule/vm/tests_metrics/...
INFO     [vm > destroy] Executing
"""


def _clock(ticks):
    it = iter(ticks)
    return lambda: next(it)


def test_table_names_each_step_by_its_play_or_test_folder():
    lines = LOG.splitlines(True)
    # one tick per line read, plus the final close
    clock = _clock([float(t) for t in (0, 1, 2, 10, 11, 12, 40, 41, 45, 46, 50, 53)])
    out = io.StringIO()
    steptimes.run(io.StringIO("".join(lines)), out, None, clock)
    text = out.getvalue()
    assert text.startswith(LOG)  # every line passed through unchanged
    table = text[len(LOG):]
    assert "create (Create the lab VMs)" in table and "    10.0" in table
    assert "converge (Tune the RDMA nodes)" in table and "    30.0 *" in table
    assert "side_effect (Fabric metrics on the VMs, and a bench run they export)" in table
    assert "verify (tests_metrics)" in table
    assert "destroy" in table
    assert table.count("verify") == 1  # verify's two 'Executing' lines are one step
    assert table.split()[-2:] == ["total", "53.0"]


@pytest.mark.parametrize("line, action", [
    ("INFO     [vm > side_effect] Executing", "side_effect"),
    ("INFO     vm ➜ idempotence: Executing", "idempotence"),
    ("INFO     [vm > converge] Executed: Successful", None),
    ("INFO     [vm > verify] Executing Testinfra tests found in /w/molecule/vm/tests/...", None),
    ("TASK [x] Executing something", None),
])
def test_step_line(line, action):
    steps = steptimes.Steps(_clock([0.0, 1.0]))
    steps.feed(line)
    assert [s[0] for s in steps.steps] == ([action] if action else [])


def test_no_step_seen_says_so(tmp_path):
    out = io.StringIO()
    steptimes.run(io.StringIO("just text\n"), out, str(tmp_path / "t"), _clock([0.0, 1.0, 2.0]))
    assert (tmp_path / "t").read_text() == "step times: no Molecule step seen in the output\n"


def test_slowest_tasks_are_listed_with_their_step():
    log = (
        "INFO     [vm > converge] Executing\n"
        "PLAY [Tune the RDMA nodes] ******\n"
        "TASK [Gathering Facts] *********\n"
        "TASK [hpcnet.rdma.rdma_tuning : Tune the node in one call] *******\n"
        "ok: [vm1]\n"
        "PLAY RECAP *********\n"
        "INFO     [vm > destroy] Executing\n"
    )
    # ticks: one per line, then the final close
    clock = _clock([float(t) for t in (0, 1, 2, 5, 30, 31, 32, 33)])
    out = io.StringIO()
    steptimes.run(io.StringIO(log), out, None, clock)
    table = out.getvalue()[len(log):]
    tasks = table.split("slowest tasks (seconds, wall; step: task)\n")[1].splitlines()
    assert tasks[0].split() == ["26.0", "converge", "(Tune", "the", "RDMA", "nodes):",
                                "hpcnet.rdma.rdma_tuning", ":", "Tune", "the", "node", "in", "one", "call"]
    assert tasks[1].split()[0] == "3.0" and tasks[1].endswith("Gathering Facts")
    assert len(tasks) == 2


def test_no_task_no_task_table():
    out = io.StringIO()
    steptimes.run(io.StringIO(LOG), out, None, _clock([float(t) for t in range(13)]))
    assert "slowest tasks" not in out.getvalue()
