"""Record and summarise the test tiers of `make test` (standard library only).

Each tier's Makefile target calls `results.py record TIER ...` after its runner finished.
The record is build/results/TIER.json: {"tier", "count", "unit", "ok", "detail"}.
A tier is ok only when its runner exited 0 AND it counted more than zero things.

  results.py record unit     --rc RC --junit build/results/unit.xml
  results.py record reliability --rc RC --junit build/results/reliability.xml
  results.py record sanity   --rc RC --log build/results/sanity.log
  results.py record lint     --rc RC --log build/results/lint.log
  results.py record molecule --rc RC --log build/results/molecule-default.log [--log ...]
  results.py record molecule-vm --rc RC --log build/results/molecule-vm.log [--note TEXT]
  results.py record docs     --rc RC --check build/results/docs-check.json --junit build/results/docs.xml
  results.py summary [TIER ...]  print the table; exit 1 if a tier is missing, failed or counted zero
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

# build/results, or where the caller says (scripts/molecule_vm.sh passes its results dir on)
RESULTS = Path(os.environ.get("HPCNET_RESULTS_DIR") or Path(__file__).resolve().parent.parent / "build" / "results")
TIERS = ["unit", "reliability", "sanity", "lint", "docs", "molecule", "molecule-vm"]

# Tiers pytest runs, recorded from their JUnit report, and what their count means.
JUNIT_TIERS = {"unit": "unit tests passed", "reliability": "reliability tests passed"}


def count_junit(path: Path) -> tuple[int, str, bool]:
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    total = sum(int(s.get("tests", 0)) for s in suites)
    failed = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    skipped = sum(int(s.get("skipped", 0)) for s in suites)
    passed = total - failed - skipped
    return passed, f"{passed} passed, {failed} failed, {skipped} skipped", failed == 0


def count_sanity(text: str) -> tuple[int, str, bool]:
    ran = re.findall(r"^Running sanity test [\"']([^\"']+)[\"']", text, re.M)
    # ansible-test only warns when a test's tool is missing (e.g. shellcheck): count that as a failure.
    missing = re.findall(r"^WARNING: Required program [\"']([^\"']+)[\"'] not found", text, re.M)
    failed = re.search(r"^FATAL: The (\d+) sanity test\(s\) listed below \(out of (\d+)\) failed", text, re.M)
    detail = f"{len(ran)} sanity tests run"
    if failed:
        detail += f", {failed.group(1)} failed"
    if missing:
        detail += f", tool(s) missing so tests did not really run: {', '.join(missing)}"
    return len(ran), detail, not failed and not missing


def count_lint(text: str) -> tuple[int, str, bool]:
    match = re.search(r"in (\d+) files? processed(?: of (\d+) encountered)?", text)
    if not match:
        return 0, "no 'files processed' line in ansible-lint output", False
    files = int(match.group(1))
    return files, f"{files} files linted (profile production)", True


def count_molecule(texts: list[str]) -> tuple[int, str, bool]:
    scenarios, checks, skipped_steps = 0, [], []
    for text in texts:
        # Testinfra's pytest closing line, e.g. "===== 3 passed in 1.23s =====".
        line = re.findall(r"=+ (\d+) passed(?:, (\d+) \w+)*.* in [\d.]+s.* =+", text)
        verified = sum(int(m[0]) for m in line)
        # Molecule's own report, e.g. "profiles : actions=15 successful=8 ... missing=5 failed=0": a
        # step whose playbook molecule did not find ("Missing playbook") ran nothing, silently.
        missing = sum(int(m) for m in re.findall(r"\bmissing=(\d+)", text))
        if missing:
            skipped_steps.append(missing)
        scenarios += 1 if verified and not missing else 0
        checks.append(verified)
    detail = f"{scenarios} scenario(s) passed, testinfra checks per scenario: {checks}"
    if skipped_steps:
        detail += f"; {sum(skipped_steps)} step(s) ran nothing (molecule: Missing playbook)"
    return scenarios, detail, all(checks) and not skipped_steps


def count_docs(check: Path | None, junit: Path | None) -> tuple[int, str, bool]:
    """The docs tier: pages scripts/docsite_check.py rendered in Chromium (its JSON), and the tests that
    prove the check fails on a broken copy of the site (tests/docs, JUnit)."""
    if not check or not check.exists():
        return 0, "no docs check result (the site was not built, or the check did not run)", False
    res = json.loads(check.read_text())
    problems = res.get("problems") or []
    detail = "%d pages rendered in headless Chromium (%d of modules, roles, filters), %d local links and %d anchors " \
        "checked, %d problem(s)" % (res.get("pages", 0), res.get("plugin_pages", 0), res.get("links", 0),
                                    res.get("anchors", 0), len(problems))
    if problems:
        detail += " (first: %s)" % problems[0]
    if junit and junit.exists():
        proof_passed, proof, proof_ok = count_junit(junit)
        detail += "; failure proofs: " + proof
    else:
        proof_passed, proof_ok = 0, False
        detail += "; failure proofs: no junit report"
    return res.get("pages", 0), detail, not problems and proof_ok and proof_passed > 0


def record(args: argparse.Namespace) -> int:
    RESULTS.mkdir(parents=True, exist_ok=True)
    if args.tier == "docs":
        count, detail, ok = count_docs(args.check and Path(args.check), args.junit and Path(args.junit))
        unit = "pages checked"
    elif args.tier in JUNIT_TIERS:
        if args.junit and Path(args.junit).exists():
            count, detail, ok = count_junit(Path(args.junit))
        else:
            count, detail, ok = 0, "no junit report", False
        unit = JUNIT_TIERS[args.tier]
    else:
        texts = [Path(p).read_text(errors="replace") for p in args.log if Path(p).exists()]
        if not texts:
            count, detail, ok = 0, "no log", False
        elif args.tier == "sanity":
            count, detail, ok = count_sanity(texts[0])
        elif args.tier == "lint":
            count, detail, ok = count_lint(texts[0])
        else:
            count, detail, ok = count_molecule(texts)
        unit = {"sanity": "sanity tests run", "lint": "files linted", "molecule": "molecule scenarios",
                "molecule-vm": "molecule scenarios"}[args.tier]
    ok = ok and args.rc == 0 and count > 0
    if args.note:
        detail += f"; {args.note}"
    if args.rc != 0:
        detail += f"; runner exit code {args.rc}" + (" (no tests collected)" if args.tier in JUNIT_TIERS and args.rc == 5 else "")
    result = {"tier": args.tier, "count": count, "unit": unit, "ok": ok, "detail": detail}
    (RESULTS / f"{args.tier}.json").write_text(json.dumps(result) + "\n")
    print(f"{args.tier}: {'OK' if ok else 'FAILED'} - {detail}")
    return 0 if ok else 1


def summary(args: argparse.Namespace) -> int:
    tiers = args.tiers or TIERS
    print("\n==== test summary ====")
    failed = 0
    for tier in tiers:
        path = RESULTS / f"{tier}.json"
        if not path.exists():
            print(f"  {tier:11} FAILED  did not complete (no result recorded)")
            failed += 1
            continue
        res = json.loads(path.read_text())
        seconds = RESULTS / f"{tier}.seconds"
        took = f"{seconds.read_text().strip()}s" if seconds.exists() else "-"
        status = "ok" if res["ok"] else "FAILED"
        failed += 0 if res["ok"] else 1
        print(f"  {tier:11} {status:7} {took:>6} {res['count']:5} {res['unit']:19} ({res['detail']})")
    print(f"tiers: {len(tiers) - failed} passed, {failed} failed")
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("tier", choices=TIERS)
    rec.add_argument("--rc", type=int, required=True)
    rec.add_argument("--junit")
    rec.add_argument("--check", help="docs: the JSON result of scripts/docsite_check.py")
    rec.add_argument("--log", action="append", default=[])
    rec.add_argument("--note", help="said in the tier's detail (e.g. that it needed a second attempt, and why)")
    rec.set_defaults(func=record)
    summ = sub.add_parser("summary")
    summ.add_argument("tiers", nargs="*")
    summ.set_defaults(func=summary)
    args = parser.parse_args()
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
