# -*- coding: utf-8 -*-
# Copyright (c) 2026 hpcnet.rdma contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The health check's findings as a node_exporter textfile (pure: the text; the program writes it).

One run of ``hpcnet-rdma-check`` writes ``hpcnet_rdma_health.prom`` into the textfile collector's directory
(the one role ``hpcnet.rdma.rdma_metrics`` writes ``hpcnet_rdma.prom`` into), so the Prometheus the site runs
alerts on the same findings Slurm drains on.  Every known code is always written (0 when this run did not
find it), so a finding that clears is a series going to 0, not one that vanishes; the style and the rules
(base units, HELP and TYPE once per family, sorted and escaped labels, no ``_count`` on a gauge) are those of
``roles/rdma_metrics/files/hpcnet-rdma-metrics.py``:

  hpcnet_rdma_health_finding{code,severity}        findings of that code in the last run (0: none)
  hpcnet_rdma_health_passed                        1 when the check passed (exit 0: nothing asks for a drain)
  hpcnet_rdma_health_stage_skipped{stage}          1 for a stage the time budget left unread
  hpcnet_rdma_health_duration_seconds              how long the run took
  hpcnet_rdma_health_last_run_timestamp_seconds    when it ran (Unix time; time() minus it is its age)
"""
from __future__ import annotations

from ansible_collections.hpcnet.rdma.plugins.module_utils.health._judges import CODES

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing is not imported at run time (docs/health.md, the check's start)
    from typing import Any, Dict, List, Tuple

FILE_NAME = "hpcnet_rdma_health.prom"
STAGES = ("fabric", "drift", "limits", "hardware")

_HELP = {
    "hpcnet_rdma_health_finding": "Findings of each code in the last hpcnet-rdma-check run (0: none; "
                                  "severity drain means Slurm should not run jobs on the node)",
    "hpcnet_rdma_health_passed": "Whether the last hpcnet-rdma-check run passed (1: exit 0, no finding asks for a drain)",
    "hpcnet_rdma_health_stage_skipped": "Whether the last hpcnet-rdma-check run left a stage unread (its time budget ran out)",
    "hpcnet_rdma_health_duration_seconds": "How long the last hpcnet-rdma-check run took",
    "hpcnet_rdma_health_last_run_timestamp_seconds": "When hpcnet-rdma-check last ran (Unix time; time() minus it is "
                                                     "the age of these metrics)",
}


def _esc(value: Any) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _num(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    return repr(float(value))


def _family(name: str, samples: List[Tuple[Dict[str, str], Any]]) -> List[str]:
    out = ["# HELP %s %s" % (name, _HELP[name]), "# TYPE %s gauge" % name]
    for labels, value in samples:
        lab = ",".join('%s="%s"' % (k, _esc(v)) for k, v in sorted(labels.items()))
        out.append("%s%s %s" % (name, "{%s}" % lab if lab else "", _num(value)))
    return out


def render(findings: List[Dict[str, Any]], passed: bool, skipped: List[str], duration: float, timestamp: float) -> str:
    """The exposition text of one run (``findings`` as ``_judges.judge`` returns them)."""
    counts: Dict[Tuple[str, str], int] = dict(((code, spec[0]), 0) for code, spec in CODES.items())
    for f in findings:
        key = (str(f.get("code")), str(f.get("severity")))
        counts[key] = counts.get(key, 0) + 1
    lines = _family("hpcnet_rdma_health_finding", [({"code": c, "severity": s}, n) for (c, s), n in sorted(counts.items())])
    lines += _family("hpcnet_rdma_health_passed", [({}, bool(passed))])
    lines += _family("hpcnet_rdma_health_stage_skipped",
                     [({"stage": s}, s in skipped) for s in sorted(set(STAGES) | set(skipped))])
    lines += _family("hpcnet_rdma_health_duration_seconds", [({}, round(float(duration), 6))])
    lines += _family("hpcnet_rdma_health_last_run_timestamp_seconds", [({}, round(float(timestamp), 3))])
    return "\n".join(lines) + "\n"
