"""scripts/results.py's molecule count: testinfra checks per scenario, and a scenario step molecule
skipped as "Missing playbook" fails the tier instead of passing with nothing run."""
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("results", ROOT / "scripts" / "results.py")
results = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(results)

OK = ("===== 9 passed in 1.57s =====\n"
      "profiles : actions=15  successful=13  disabled=2  skipped=0  missing=0  failed=0\n")
MISSING = ("===== 9 passed in 1.57s =====\n"
           "WARNING  [profiles > side_effect] Executed: Missing playbook (Remove from test_sequence to suppress)\n"
           "profiles : actions=15  successful=8  disabled=2  skipped=0  missing=5  failed=0\n")
NO_CHECKS = "profiles : actions=15  successful=15  disabled=0  skipped=0  missing=0  failed=0\n"


@pytest.mark.parametrize("texts, count, ok, said", [
    ([OK], 1, True, "testinfra checks per scenario: [9]"),
    ([OK, OK], 2, True, "[9, 9]"),
    ([MISSING], 0, False, "5 step(s) ran nothing (molecule: Missing playbook)"),
    ([OK, MISSING], 1, False, "5 step(s) ran nothing"),
    ([NO_CHECKS], 0, False, "[0]"),
])
def test_count_molecule(texts, count, ok, said):
    got_count, detail, got_ok = results.count_molecule(texts)
    assert (got_count, got_ok) == (count, ok)
    assert said in detail
