#!/usr/bin/env python3
"""Summarizes server-leg results of the official MCP conformance suite (scripts/conformance.sh).

    summarize.py [--require NAME]... [--no-details] OUTDIR...

Each OUTDIR is one `conformance server --requirements REV -o OUTDIR` run. The suite writes one
`server-<scenario>-<timestamp>/checks.json` per scenario (an array of checks, each with a status
SUCCESS, FAILURE, WARNING, INFO or SKIPPED); a scenario passes when none of its checks is a FAILURE.
Beside the results, scripts/conformance.sh keeps (all optional here):

    requirements.txt   `conformance list --requirements REV`: the scored server scenarios, and the
                       ones run but never scored
    suite.stdout.log   the suite's stdout (its `=== SUMMARY ===` lines and `Not scored` block)
    suite.stderr.log   its stderr (a scenario that throws leaves no checks.json, only a line here)
    suite.exit         the suite's exit status

Without requirements.txt the scored/not-scored split comes from the stdout's `Not scored` block,
and without either every scenario counts as scored. A scenario that is listed or summarized but
has no checks.json counts as failed.

For each OUTDIR this prints the suite's own summary lines, the failing checks (id, message,
details) of every failing scored or --require'd scenario and the warnings of the scored ones, a
NOTE for each of those that passed without a single SUCCESS check (nothing was verified; this does
not fail), then one line `REV: P/N scored scenarios passed; not scored: ...`. A last block names the --require'd
not-scored scenarios that failed or that no set ran.

Exit status: 1 when a scored scenario or a --require'd scenario failed in any set (or a
--require'd one ran in no set), 0 otherwise, 2 on bad usage or unreadable results.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

# `server-<scenario>-2026-11-29T12-33-44-609Z`
RESULT_DIR = re.compile(r"^server-(?P<name>.+)-(?P<ts>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z)$")
# `✓ tools-list: 2 passed, 0 failed[, 1 warnings]`
SUMMARY_LINE = re.compile(r"^[✓✗] (?P<name>\S+): \d+ passed, \d+ failed")
# `Running requirements 2026-07-28 (50 scenarios) against ...`
RUNNING_LINE = re.compile(r"^Running requirements (?P<rev>\S+) ")
# `Failed to run scenario tasks-x: Error: ...`
THREW_LINE = re.compile(r"^Failed to run scenario (?P<name>[^:\s]+): (?P<error>.*)$")

MESSAGE_MAX = 600
DETAILS_MAX = 600


@dataclass
class Scenario:
    name: str
    checks: list[dict] | None = None  # None: no checks.json
    error: str | None = None  # why there is no checks.json, from the suite's stderr

    def failures(self) -> list[dict]:
        return [c for c in self.checks or [] if c.get("status") == "FAILURE"]

    def warnings(self) -> list[dict]:
        return [c for c in self.checks or [] if c.get("status") == "WARNING"]

    @property
    def passed(self) -> bool:
        return self.checks is not None and not self.failures()

    @property
    def vacuous(self) -> bool:
        """Passed without a single SUCCESS check: nothing was verified (e.g. only INFO or SKIPPED)."""
        return self.passed and not any(c.get("status") == "SUCCESS" for c in self.checks or [])

    def vacuous_reason(self) -> str:
        for check in self.checks or []:
            message = check.get("errorMessage") or (check.get("details") or {}).get("message")
            if isinstance(message, str) and message:
                return f"{check.get('status')} {check.get('id')}: {message}"
        statuses = sorted({str(c.get("status")) for c in self.checks or []})
        return f"its checks are only {', '.join(statuses) or 'absent'}"


@dataclass
class RunSet:
    outdir: Path
    rev: str
    scenarios: dict[str, Scenario] = field(default_factory=dict)
    scored: list[str] = field(default_factory=list)
    not_scored: dict[str, str] = field(default_factory=dict)  # name -> reason (extension, pending, ...)
    summary_lines: list[str] = field(default_factory=list)
    exit_status: str | None = None


def read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None


def parse_requirements(text: str) -> tuple[list[str], dict[str, str]]:
    """The server scenarios of `conformance list --requirements REV`: scored, and not scored."""
    scored: list[str] = []
    not_scored: dict[str, str] = {}
    section = None
    reason = ""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("Server scenarios"):
            section = "server"
        elif line.startswith("Client scenarios"):
            section = "client"
        elif line.startswith("Run and reported, but never scored"):
            section = "not-scored"
        elif section == "not-scored" and re.match(r"^[\w-]+ \(\d+\):$", line):
            reason = line.split(" ")[0]
        elif line.startswith("- "):
            item = line[2:].strip()
            if section == "server":
                scored.append(item)
            elif section == "not-scored" and item.endswith(" [server]"):
                not_scored[item[: -len(" [server]")]] = reason
    return scored, not_scored


def parse_stdout(text: str, run: RunSet) -> None:
    in_summary = False
    in_not_scored = False
    for raw in text.splitlines():
        line = raw.rstrip()
        if match := RUNNING_LINE.match(line):
            run.rev = match["rev"]
        if line.startswith("=== SUMMARY ==="):
            in_summary = True
            continue
        if line.startswith("Not scored for "):
            in_not_scored = True
            continue
        if in_not_scored:
            match = re.match(r"^\s+[✓✗] (?P<name>\S+)(?: \((?P<reason>[^)]*)\))?$", line)
            if match:
                run.not_scored.setdefault(match["name"], match["reason"] or "not scored")
            continue
        if in_summary and SUMMARY_LINE.match(line):
            run.summary_lines.append(line)


def load(outdir: Path) -> RunSet:
    if not outdir.is_dir():
        raise SystemExit(f"summarize: {outdir} is not a directory")
    run = RunSet(outdir=outdir, rev=outdir.name)

    requirements = read_text(outdir / "requirements.txt")
    if requirements:
        run.scored, run.not_scored = parse_requirements(requirements)
    stdout = read_text(outdir / "suite.stdout.log")
    if stdout:
        parse_stdout(stdout, run)
    status = read_text(outdir / "suite.exit")
    run.exit_status = status.strip() if status else None

    # The newest result directory of each scenario (an OUTDIR that was not emptied may hold several).
    newest: dict[str, tuple[str, Path]] = {}
    for child in outdir.iterdir():
        match = RESULT_DIR.match(child.name)
        if match and child.is_dir():
            name, stamp = match["name"], match["ts"]
            if name not in newest or stamp > newest[name][0]:
                newest[name] = (stamp, child)
    for name, (_, path) in sorted(newest.items(), key=lambda item: item[1][0]):  # in run order
        scenario = run.scenarios.setdefault(name, Scenario(name))
        checks_file = path / "checks.json"
        try:
            checks = json.loads(checks_file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            scenario.error = f"{checks_file} is missing"
            continue
        except json.JSONDecodeError as e:
            raise SystemExit(f"summarize: {checks_file}: {e}")
        if not isinstance(checks, list):
            raise SystemExit(f"summarize: {checks_file} is not an array of checks")
        scenario.checks = checks

    # Scenarios the suite announced (listed, summarized) but that left no checks.json.
    announced = list(run.scored) + list(run.not_scored)
    announced += [SUMMARY_LINE.match(line)["name"] for line in run.summary_lines]
    for name in announced:
        run.scenarios.setdefault(name, Scenario(name))
    stderr = read_text(outdir / "suite.stderr.log") or ""
    for line in stderr.splitlines():
        if (match := THREW_LINE.match(line)) and match["name"] in run.scenarios:
            scenario = run.scenarios[match["name"]]
            if scenario.checks is None:
                scenario.error = f"the scenario threw: {match['error']}"
    for scenario in run.scenarios.values():
        if scenario.checks is None and scenario.error is None:
            scenario.error = "no checks.json (see suite.stderr.log)"

    if not run.scored:  # no requirements.txt: whatever ran and is not known as not scored
        run.scored = [name for name in run.scenarios if name not in run.not_scored]
    return run


def clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_lines(check: dict) -> list[str]:
    status = check.get("status", "?")
    lines = [f"      {status} {check.get('id', '?')}: {clip(str(check.get('errorMessage') or check.get('description') or ''), MESSAGE_MAX)}"]
    details = check.get("details")
    if details:
        lines.append(f"        details: {clip(json.dumps(details, ensure_ascii=False), DETAILS_MAX)}")
    return lines


def scenario_lines(scenario: Scenario, warnings: bool) -> list[str]:
    if scenario.checks is None:
        return [f"    ✗ {scenario.name}: {clip(scenario.error or 'no result', MESSAGE_MAX)}"]
    lines = []
    shown = scenario.failures() + (scenario.warnings() if warnings else [])
    if shown:
        lines.append(f"    {'✓' if scenario.passed else '✗'} {scenario.name}:")
        for check in shown:
            lines.extend(check_lines(check))
    return lines


def report(run: RunSet, required: set[str], details: bool) -> tuple[list[str], list[str]]:
    """Prints one set; returns (failed scored scenarios, failed required not-scored scenarios)."""
    print(f"== {run.rev} ({run.outdir}; suite exit status {run.exit_status or 'unknown'})")
    if run.summary_lines:
        for line in run.summary_lines:
            print(line)
    else:  # no stdout log: the same lines from checks.json
        for scenario in run.scenarios.values():
            checks = scenario.checks or []
            ok = sum(c.get("status") == "SUCCESS" for c in checks)
            print(f"{'✓' if scenario.passed else '✗'} {scenario.name}: {ok} passed, {len(scenario.failures())} failed")

    scored = [run.scenarios[name] for name in run.scored]
    not_scored = [run.scenarios[name] for name in run.not_scored if name in run.scenarios]
    failed_scored = [s.name for s in scored if not s.passed]
    failed_required = [s.name for s in not_scored if s.name in required and not s.passed]

    if details:
        lines = []
        for scenario in scored:
            lines.extend(scenario_lines(scenario, warnings=True))
        for scenario in not_scored:
            if scenario.name in required:
                lines.extend(scenario_lines(scenario, warnings=False))
        if lines:
            print(f"-- {run.rev}: failing checks (scored and required scenarios) and warnings (scored)")
            print("\n".join(lines))

    for scenario in scored + [s for s in not_scored if s.name in required]:
        if scenario.vacuous:
            print(f"NOTE {run.rev}: {scenario.name} passed without any SUCCESS check (nothing verified): "
                  f"{clip(scenario.vacuous_reason(), MESSAGE_MAX)}")

    passed_not_scored = [s for s in not_scored if s.passed]
    failing_not_scored = [s.name for s in not_scored if not s.passed]
    tail = f"{len(passed_not_scored)}/{len(not_scored)} passed"
    if failing_not_scored:
        tail += f" (failing: {', '.join(failing_not_scored)})"
    print(f"{run.rev}: {len(scored) - len(failed_scored)}/{len(scored)} scored scenarios passed; not scored: {tail}")
    if failed_scored:
        print(f"{run.rev}: scored scenarios failing: {', '.join(failed_scored)}")
    print()
    return failed_scored, failed_required


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdirs", nargs="+", type=Path, metavar="OUTDIR")
    parser.add_argument(
        "--require",
        action="append",
        default=[],
        metavar="NAME",
        help="a not-scored scenario that must pass wherever it runs (repeatable)",
    )
    parser.add_argument("--no-details", action="store_true", help="only the summary lines")
    args = parser.parse_args()

    runs = [load(outdir) for outdir in args.outdirs]
    required = set(args.require)
    bad = False
    required_failures: list[str] = []
    for run in runs:
        failed_scored, failed_required = report(run, required, not args.no_details)
        bad = bad or bool(failed_scored)
        required_failures += [f"{name} ({run.rev})" for name in failed_required]

    ran = {name for run in runs for name in run.scenarios}
    never_ran = sorted(required - ran)
    if required:
        if required_failures or never_ran:
            bad = True
            for failure in required_failures:
                print(f"required not-scored scenario failed: {failure}")
            for name in never_ran:
                print(f"required not-scored scenario not run by any set: {name}")
        else:
            print(f"required not-scored scenarios: all passed ({', '.join(sorted(required))})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
