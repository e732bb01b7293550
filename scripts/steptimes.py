"""Per-step wall time of a Molecule run, read from its output as it streams (standard library only).

    molecule test -s vm 2>&1 | python3 scripts/steptimes.py --table build/results/molecule-vm.steps

Every line is passed through unchanged (stdout, flushed per line).  A step starts where Molecule
logs `[<scenario> > <action>] Executing` and ends where the next one starts (or at the end of the
input).  Several steps share an action (`side_effect`, `verify`), so a step is named by its action
and by the first thing that tells them apart inside it: the first `PLAY [...]` name of a playbook,
or the folder of the first testinfra file.  At the end the table (seconds per step, slowest first
marked) goes to stdout and to --table, then the slowest Ansible tasks (a task runs from its
`TASK [...]` line to the next task, play or step line), so a step that grew can be traced to the
tasks that grew it.  The filter never fails the pipeline: its exit status is 0.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from typing import Callable, List, Optional, TextIO, Tuple

# molecule 26: "INFO     [vm > converge] Executing" without markup (NO_COLOR=1, as scripts/molecule_vm.sh
# runs it), "INFO     vm ➜ converge: Executing" with it (ansi_output.py format_scenario)
STEP = re.compile(r"(?:\[[\w.-]+ > (?P<plain>[\w-]+)\]|\b[\w.-]+ ➜ (?P<marked>[\w-]+):) Executing\s*$")
# verify's second line names its test folder: "... Executing Testinfra tests found in /x/molecule/vm/tests_metrics/..."
TESTDIR = re.compile(r"Executing Testinfra tests found in \S*/(?P<dir>[\w.-]+)/(?:\.\.\.)?\s*$")
PLAY = re.compile(r"^PLAY \[(?P<name>[^\]]*)\]")
TASK = re.compile(r"^TASK \[(?P<name>.*)\] \**$")
RECAP = re.compile(r"^PLAY RECAP ")
SLOWEST_TASKS = 25
TESTFILE = re.compile(r"^(?:\S*/)?(?P<dir>tests\w*)/test_\w+\.py\b")


class Steps(object):
    """The steps seen so far: [name, started, ended-or-None, detail-or-None]."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.steps: List[list] = []
        self.tasks: List[list] = []  # [step index, task name, started, ended-or-None]

    def feed(self, line: str) -> None:
        match = STEP.search(line)
        now = self.clock()
        task = TASK.match(line)
        if match or task or PLAY.match(line) or RECAP.match(line):
            self._close_task(now)
        if task and self.steps:
            self.tasks.append([len(self.steps) - 1, task.group("name"), now, None])
        if match:
            self._close(now)
            self.steps.append([match.group("plain") or match.group("marked"), now, None, None])
            return
        if not self.steps or self.steps[-1][3] is not None:
            return
        play, test, testdir = PLAY.match(line), TESTFILE.match(line.strip()), TESTDIR.search(line)
        if play:
            self.steps[-1][3] = play.group("name")
        elif test or testdir:
            self.steps[-1][3] = (test or testdir).group("dir")

    def _close(self, now: float) -> None:
        if self.steps and self.steps[-1][2] is None:
            self.steps[-1][2] = now

    def _close_task(self, now: float) -> None:
        if self.tasks and self.tasks[-1][3] is None:
            self.tasks[-1][3] = now

    def table(self) -> Tuple[str, List[Tuple[str, float]]]:
        now = self.clock()
        self._close(now)
        self._close_task(now)
        rows = [("%s (%s)" % (name, detail) if detail else name, end - start) for name, start, end, detail in self.steps]
        if not rows:
            return "step times: no Molecule step seen in the output\n", rows
        width = max(len(r[0]) for r in rows)
        slowest = sorted(range(len(rows)), key=lambda i: -rows[i][1])[:3]
        out = ["step times (seconds, wall; * = the three slowest)"]
        for i, (name, secs) in enumerate(rows):
            out.append("  %s %7.1f%s" % (name.ljust(width), secs, " *" if i in slowest else ""))
        out.append("  %s %7.1f" % ("total".ljust(width), sum(r[1] for r in rows)))
        tasks = sorted(self.tasks, key=lambda t: -(t[3] - t[2]))[:SLOWEST_TASKS]
        if tasks:
            out.append("slowest tasks (seconds, wall; step: task)")
            for step, name, start, end in tasks:
                out.append("  %7.1f  %s: %s" % (end - start, rows[step][0], name))
        return "\n".join(out) + "\n", rows


def run(src: TextIO, dst: TextIO, table_path: Optional[str], clock: Callable[[], float] = time.monotonic) -> None:
    steps = Steps(clock)
    for line in iter(src.readline, ""):
        dst.write(line)
        dst.flush()
        steps.feed(line.rstrip("\n"))
    text = steps.table()[0]
    dst.write("\n" + text)
    dst.flush()
    if table_path:
        with open(table_path, "w") as f:
            f.write(text)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--table", help="also write the table to this file")
    args = parser.parse_args(argv)
    src = open(sys.stdin.fileno(), "r", encoding="utf-8", errors="replace", closefd=False)
    try:
        run(src, sys.stdout, args.table)
    except BrokenPipeError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
