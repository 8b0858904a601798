#!/usr/bin/env python3
"""Summarizes the results of the official MCP conformance suite, both legs (scripts/conformance.sh).

    summarize.py [--require NAME]... [--require-client NAME]... [--expected FILE] [--expected-server FILE]
                 [--no-details] OUTDIR...

Each OUTDIR is one run of one requirement set. Its name says the leg: `client-REV` is one
`conformance client --requirements REV -o OUTDIR` run, any other name (`REV`) one
`conformance server --requirements REV -o OUTDIR` run. The suite writes one `checks.json` per
scenario (an array of checks, each with a status SUCCESS, FAILURE, WARNING, INFO or SKIPPED):

    server leg   OUTDIR/server-<scenario>-<timestamp>/checks.json
    client leg   OUTDIR/<scenario>-<timestamp>/checks.json, and for the scenarios whose name has
                 a `/` one folder per part: OUTDIR/auth/<name>-<timestamp>/checks.json is the
                 scenario `auth/<name>` (the client leg also keeps the client's stdout.txt and
                 stderr.txt there)

A scenario passes when none of its checks is a FAILURE. Beside the results, scripts/conformance.sh
keeps (all optional here):

    requirements.txt   `conformance list --requirements REV`: the scored scenarios of the leg, and
                       the ones run but never scored
    suite.stdout.log   the suite's stdout (its `=== SUMMARY ===` / `=== SUITE SUMMARY ===` lines and,
                       server leg, its `Not scored` block)
    suite.stderr.log   its stderr (a server scenario that throws leaves no checks.json, only a line
                       here)
    suite.exit         the suite's exit status

Without requirements.txt the scored/not-scored split comes from the stdout's `Not scored` block,
and without either every scenario counts as scored. A scenario that is listed or summarized but
has no checks.json counts as failed.

--expected FILE is the suite's `--expected-failures` file (YAML; only its `client:` list is read,
entries `scenario` or `scenario:check-id`). A scored client scenario listed there may fail: it is
reported as an expected failure, not a failure. One that passes is reported in a NOTE telling to
delete its line (the run does not fail). The suite itself, given that file, exits 1 both on a
listed scenario that passes ("stale baseline") and on a scored scenario with a WARNING; the client
leg's verdict therefore comes from the checks here, and the suite's exit status is only checked
against what they say (a mismatch fails: the suite did something this script does not understand).

--expected-server FILE is the same for the server leg (its `server:` list, read here only; the
suite's server leg is run without a baseline). It is for runs whose server cannot pass a check by
construction — the conformance fixtures one hop away behind a gateway that bridges them from a
legacy upstream — each entry with its reason in the file.

For each OUTDIR this prints the suite's own summary lines, the failing checks (id, message,
details) of every failing scored or required scenario and the warnings of the scored ones, the
expected failures (one line each), a NOTE for each scored or required scenario that passed without
a single SUCCESS check (nothing was verified; this does not fail), then one line
`LEG REV: P/N scored scenarios passed[, E expected failures]; not scored: ...`. A last block names
the required not-scored scenarios (--require for the server leg, --require-client for the client
leg) that failed or that no set of their leg ran.

Exit status: 1 when a scored scenario that is not an expected failure or a required scenario failed
in any set (or a required one ran in no set of its leg, or a client-leg suite exit status disagrees
with the checks), 0 otherwise, 2 on bad usage or unreadable results.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

TIMESTAMP = r"(?P<ts>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z)"
# server leg: `server-<scenario>-2026-11-29T12-33-44-609Z`
SERVER_RESULT_DIR = re.compile(r"^server-(?P<name>.+)-" + TIMESTAMP + "$")
# client leg: `<scenario>-2026-11-29T12-33-44-609Z` (the last part of a scenario name with `/`)
CLIENT_RESULT_DIR = re.compile(r"^(?P<name>.+)-" + TIMESTAMP + "$")
# `✓ tools-list: 2 passed, 0 failed[, 1 warnings]`, and the client leg's `- name: skipped`
SUMMARY_LINE = re.compile(r"^(?:[✓✗] (?P<name>\S+): \d+ passed, \d+ failed|- (?P<skipped>\S+): skipped$)")
# `Running requirements 2026-07-28 (50 scenarios) against ...` / `... (39 scenarios) in parallel...`
RUNNING_LINE = re.compile(r"^Running requirements (?P<rev>\S+) ")
# `Failed to run scenario tasks-x: Error: ...`
THREW_LINE = re.compile(r"^Failed to run scenario (?P<name>[^:\s]+): (?P<error>.*)$")
ANSI = re.compile(r"\x1b\[[0-9;]*m")

MESSAGE_MAX = 600
DETAILS_MAX = 600


@dataclass
class Scenario:
    name: str
    checks: list[dict] | None = None  # None: no checks.json
    error: str | None = None  # why there is no checks.json, from the suite's stderr
    client_output: str | None = None  # client leg: where the client's stdout.txt and stderr.txt are

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
    leg: str  # "server" or "client"
    rev: str
    scenarios: dict[str, Scenario] = field(default_factory=dict)
    scored: list[str] = field(default_factory=list)
    not_scored: dict[str, str] = field(default_factory=dict)  # name -> reason (extension, pending, ...)
    summary_lines: list[str] = field(default_factory=list)
    exit_status: str | None = None

    @property
    def label(self) -> str:
        return f"{self.leg} {self.rev}"


@dataclass
class Expected:
    """The `client:` list of an --expected-failures file."""

    path: Path
    scenarios: set[str] = field(default_factory=set)  # whole scenarios
    checks: dict[str, set[str]] = field(default_factory=dict)  # scenario -> check ids
    lines: dict[str, int] = field(default_factory=dict)  # entry -> line number

    def names(self) -> set[str]:
        return self.scenarios | set(self.checks)


@dataclass
class Verdict:
    """One set's outcome, against the expected failures."""

    failed: list[str] = field(default_factory=list)  # scored, failing, not expected: these fail the run
    expected: list[str] = field(default_factory=list)  # scored, failing as expected
    stale: list[str] = field(default_factory=list)  # expected entries (scenario or scenario:check) that pass


def die(message: str) -> NoReturn:
    """Bad usage or unreadable results: exit status 2 (1 means failing scenarios)."""
    print(message, file=sys.stderr)
    sys.exit(2)


def read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None


def unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def strip_comment(line: str) -> str:
    """A YAML comment starts with `#` at the start of the line or after whitespace."""
    match = re.search(r"(^|\s)#", line)
    return line[: match.start()] if match else line


def parse_expected(path: Path, leg: str = "client") -> Expected:
    """The tiny YAML subset the file uses: top-level `key:` with `- item` lines or `key: [a, b]`;
    the list of `leg` is read."""
    text = read_text(path)
    if text is None:
        die(f"summarize: {path} does not exist")
    expected = Expected(path=path)
    lists: dict[str, list[tuple[str, int]]] = {}
    key = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = strip_comment(raw).rstrip()
        if not line.strip() or line.strip() == "---":
            continue
        if match := re.match(r"^(?P<key>[A-Za-z_][\w-]*):\s*(?P<rest>.*)$", line):
            key = match["key"]
            lists.setdefault(key, [])
            rest = match["rest"].strip()
            if rest.startswith("[") and rest.endswith("]"):
                items = [unquote(item) for item in rest[1:-1].split(",") if item.strip()]
                lists[key] += [(item, number) for item in items]
                key = None
            elif rest not in ("", "[]", "~", "null"):
                die(f"summarize: {path}:{number}: `{key}:` must be followed by a list")
            continue
        if (match := re.match(r"^\s+-\s+(?P<item>.+)$", line)) and key is not None:
            lists[key].append((unquote(match["item"]), number))
            continue
        die(f"summarize: {path}:{number}: cannot read {raw.strip()!r} (only `{leg}:` and `- scenario` lines)")
    other = "server" if leg == "client" else "client"
    unknown = sorted(k for k, items in lists.items() if k != leg and (k != other or items))
    if unknown:
        die(f"summarize: {path}: only a `{leg}:` list is read here, not {', '.join(unknown)}")
    for item, number in lists.get(leg, []):
        scenario, _, check = item.partition(":")
        if not scenario or (_ and not check) or " " in item:
            die(f"summarize: {path}:{number}: {item!r} is not `scenario` or `scenario:check-id`")
        expected.lines[item] = number
        if check:
            expected.checks.setdefault(scenario, set()).add(check)
        else:
            expected.scenarios.add(scenario)
    for scenario in expected.scenarios & set(expected.checks):
        die(f"summarize: {path}: {scenario} is listed whole and per check")
    return expected


def parse_requirements(text: str, leg: str) -> tuple[list[str], dict[str, str]]:
    """The scenarios of one leg in `conformance list --requirements REV`: scored, and not scored."""
    scored: list[str] = []
    not_scored: dict[str, str] = {}
    section = None
    reason = ""
    suffix = f" [{leg}]"
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
            if section == leg:
                scored.append(item)
            elif section == "not-scored" and item.endswith(suffix):
                not_scored[item[: -len(suffix)]] = reason
    return scored, not_scored


def parse_stdout(text: str, run: RunSet) -> None:
    in_summary = False
    in_not_scored = False
    for raw in text.splitlines():
        line = ANSI.sub("", raw).rstrip()
        if match := RUNNING_LINE.match(line):
            run.rev = match["rev"]
        if line.startswith("=== SUMMARY ===") or line.startswith("=== SUITE SUMMARY ==="):
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
        if line.startswith("Total: "):
            in_summary = False
        if in_summary and SUMMARY_LINE.match(line):
            run.summary_lines.append(line)


def result_dirs(outdir: Path, leg: str) -> list[tuple[str, str, Path]]:
    """(scenario, timestamp, folder) for every result folder of the leg."""
    found = []
    if leg == "server":
        for child in outdir.iterdir():
            if child.is_dir() and (match := SERVER_RESULT_DIR.match(child.name)):
                found.append((match["name"], match["ts"], child))
        return found
    # Client leg: a folder named `<part>-<timestamp>` is a result; any other folder (`auth`) is one
    # part of longer scenario names.
    pending = [(outdir, "")]
    while pending:
        folder, prefix = pending.pop()
        for child in folder.iterdir():
            if not child.is_dir():
                continue
            if match := CLIENT_RESULT_DIR.match(child.name):
                found.append((prefix + match["name"], match["ts"], child))
            elif prefix.count("/") < 3:
                pending.append((child, f"{prefix}{child.name}/"))
    return found


def load(outdir: Path) -> RunSet:
    if not outdir.is_dir():
        die(f"summarize: {outdir} is not a directory")
    leg = "client" if outdir.name.startswith("client-") else "server"
    run = RunSet(outdir=outdir, leg=leg, rev=outdir.name.removeprefix("client-"))

    requirements = read_text(outdir / "requirements.txt")
    if requirements:
        run.scored, run.not_scored = parse_requirements(requirements, leg)
    stdout = read_text(outdir / "suite.stdout.log")
    if stdout:
        parse_stdout(stdout, run)
    status = read_text(outdir / "suite.exit")
    run.exit_status = status.strip() if status else None

    # The newest result directory of each scenario (an OUTDIR that was not emptied may hold several).
    newest: dict[str, tuple[str, Path]] = {}
    for name, stamp, path in result_dirs(outdir, leg):
        if name not in newest or stamp > newest[name][0]:
            newest[name] = (stamp, path)
    for name, (_, path) in sorted(newest.items(), key=lambda item: (item[1][0], item[0])):  # in run order
        scenario = run.scenarios.setdefault(name, Scenario(name))
        checks_file = path / "checks.json"
        try:
            checks = json.loads(checks_file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            scenario.error = f"{checks_file} is missing"
            continue
        except json.JSONDecodeError as e:
            die(f"summarize: {checks_file}: {e}")
        if not isinstance(checks, list):
            die(f"summarize: {checks_file} is not an array of checks")
        scenario.checks = checks
        if leg == "client" and (path / "stderr.txt").exists():
            scenario.client_output = str(path.relative_to(outdir))

    # Scenarios the suite announced (listed, summarized) but that left no checks.json.
    announced = list(run.scored) + list(run.not_scored)
    for line in run.summary_lines:
        match = SUMMARY_LINE.match(line)
        announced.append(match["name"] or match["skipped"])
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


def judge(run: RunSet, expected: Expected | None) -> Verdict:
    """The scored scenarios that fail the run, those that fail as expected, and stale entries.
    In an extension scenario's own run (`ext-NAME`), a scenario that verified nothing (all its
    checks SKIPPED or INFO: the extension undeclared) fails too."""
    verdict = Verdict()
    extension = run.rev.startswith("ext-")
    for name in run.scored:
        scenario = run.scenarios[name]
        if expected is None or name not in expected.names():
            if not scenario.passed or (extension and scenario.vacuous):
                verdict.failed.append(name)
        elif name in expected.scenarios:
            (verdict.expected if not scenario.passed else verdict.stale).append(name)
        else:  # per-check entries: the listed checks may fail, the others may not
            allowed = expected.checks[name]
            other = [c.get("id", "?") for c in scenario.failures() if c.get("id") not in allowed]
            if scenario.checks is None or other:
                verdict.failed.append(name)
            elif scenario.failures():
                verdict.expected.append(name)
            failing = {c.get("id") for c in scenario.failures()}
            verdict.stale += [f"{name}:{check}" for check in sorted(allowed) if check not in failing
                              and any(c.get("id") == check and c.get("status") == "SUCCESS" for c in scenario.checks or [])]
    return verdict


def passes_as_expected(scenario: Scenario, expected: Expected | None) -> bool:
    """A required not-scored scenario passes when it has no failing check, or only checks the
    expected-failures file allows it (per check, or the whole scenario)."""
    if scenario.passed:
        return True
    if expected is None or scenario.checks is None:
        return False
    if scenario.name in expected.scenarios:
        return True
    allowed = expected.checks.get(scenario.name, set())
    return all(c.get("id") in allowed for c in scenario.failures())


def suite_baseline_status(run: RunSet, expected: Expected) -> int:
    """The exit status `conformance client --expected-failures` gives for these checks: 1 when a
    scored scenario has a FAILURE or WARNING not in the baseline, or a listed one has neither."""
    bad = ("FAILURE", "WARNING")
    for name in run.scored:
        scenario = run.scenarios[name]
        checks = scenario.checks if scenario.checks is not None else [{"id": name, "status": "FAILURE"}]
        failing = [c for c in checks if c.get("status") in bad]
        if name in expected.scenarios:
            if not failing:
                return 1
        elif name in expected.checks:
            allowed = expected.checks[name]
            if any(c.get("id") not in allowed for c in failing):
                return 1
            if any(c.get("id") == check and c.get("status") == "SUCCESS" for c in checks for check in allowed):
                return 1
        elif failing:
            return 1
    return 0


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
        where = f" (client output: {scenario.client_output}/stderr.txt)" if scenario.client_output and not scenario.passed else ""
        lines.append(f"    {'✓' if scenario.passed else '✗'} {scenario.name}:{where}")
        for check in shown:
            lines.extend(check_lines(check))
    return lines


def expected_line(scenario: Scenario) -> str:
    if scenario.checks is None:
        return f"    ~ {scenario.name}: {clip(scenario.error or 'no result', 200)}"
    failures = scenario.failures()
    first = failures[0] if failures else {}
    message = clip(str(first.get("errorMessage") or first.get("description") or ""), 160)
    return f"    ~ {scenario.name}: {len(failures)} failing check(s), first {first.get('id', '?')}: {message}"


def report(run: RunSet, required: set[str], expected: Expected | None, details: bool) -> tuple[Verdict, list[str], list[str]]:
    """Prints one set; returns its verdict, the failed required not-scored scenarios and other
    problems (a client-leg suite exit status that the checks do not explain)."""
    print(f"== {run.label} ({run.outdir}; suite exit status {run.exit_status or 'unknown'})")
    if run.summary_lines:
        for line in run.summary_lines:
            print(line)
    else:  # no stdout log: the same lines from checks.json
        for scenario in run.scenarios.values():
            checks = scenario.checks or []
            ok = sum(c.get("status") == "SUCCESS" for c in checks)
            print(f"{'✓' if scenario.passed else '✗'} {scenario.name}: {ok} passed, {len(scenario.failures())} failed")

    verdict = judge(run, expected)
    scored = [run.scenarios[name] for name in run.scored]
    not_scored = [run.scenarios[name] for name in run.not_scored if name in run.scenarios]
    failed_required = [s.name for s in not_scored if s.name in required and not passes_as_expected(s, expected)]
    expected_names = set(verdict.expected)

    if details:
        lines = []
        for scenario in scored:
            if scenario.name not in expected_names:
                lines.extend(scenario_lines(scenario, warnings=True))
        for scenario in not_scored:
            if scenario.name in required:
                lines.extend(scenario_lines(scenario, warnings=False))
        if lines:
            print(f"-- {run.label}: failing checks (scored and required scenarios) and warnings (scored)")
            print("\n".join(lines))
        if verdict.expected:
            print(f"-- {run.label}: expected failures (listed in {expected.path if expected else '?'}; they do not fail the run)")
            for name in verdict.expected:
                print(expected_line(run.scenarios[name]))

    for scenario in scored + [s for s in not_scored if s.name in required]:
        if scenario.vacuous and scenario.name not in verdict.stale:
            print(f"NOTE {run.label}: {scenario.name} passed without any SUCCESS check (nothing verified): "
                  f"{clip(scenario.vacuous_reason(), MESSAGE_MAX)}")
    for entry in verdict.stale:
        line = f" (line {expected.lines[entry]})" if expected and entry in expected.lines else ""
        print(f"NOTE {run.label}: {entry} passes now although it is listed as an expected failure: "
              f"delete its line{line} from {expected.path if expected else 'the expected-failures file'}")

    problems = []
    if run.leg == "client" and expected is not None and run.exit_status in ("0", "1"):
        want = suite_baseline_status(run, expected)
        if int(run.exit_status) != want:
            problems.append(f"{run.label}: the suite exited with status {run.exit_status}, but its checks.json "
                            f"files make {want} expected (see {run.outdir / 'suite.stdout.log'} and suite.stderr.log)")
        elif want == 1 and not verdict.failed:
            reasons = []
            if verdict.stale:
                reasons.append("expected failures that pass (stale baseline)")
            warned = [s.name for s in scored if s.passed and s.warnings() and s.name not in expected.names()]
            if warned:
                reasons.append(f"warnings in {', '.join(warned)}")
            print(f"NOTE {run.label}: the suite exited with status 1 because of {' and '.join(reasons) or '?'}; "
                  f"this does not fail the run")

    passed_not_scored = [s for s in not_scored if s.passed]
    failing_not_scored = [s.name for s in not_scored if not s.passed]
    tail = f"{len(passed_not_scored)}/{len(not_scored)} passed"
    if failing_not_scored:
        tail += f" (failing: {', '.join(failing_not_scored)})"
    passed_scored = sum(s.passed for s in scored)
    middle = f", {len(verdict.expected)} expected failures" if verdict.expected else ""
    print(f"{run.label}: {passed_scored}/{len(scored)} scored scenarios passed{middle}; not scored: {tail}")
    if verdict.expected and not details:  # with details, listed above one line each
        print(f"{run.label}: expected failures: {', '.join(verdict.expected)}")
    if verdict.failed:
        print(f"{run.label}: scored scenarios failing: {', '.join(verdict.failed)}")
    print()
    return verdict, failed_required, problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdirs", nargs="+", type=Path, metavar="OUTDIR")
    parser.add_argument(
        "--require",
        action="append",
        default=[],
        metavar="NAME",
        help="a not-scored server scenario that must pass wherever it runs (repeatable)",
    )
    parser.add_argument(
        "--require-client",
        action="append",
        default=[],
        metavar="NAME",
        help="a not-scored client scenario that must pass wherever it runs (repeatable)",
    )
    parser.add_argument(
        "--expected",
        type=Path,
        metavar="FILE",
        help="the client leg's --expected-failures file (its `client:` list)",
    )
    parser.add_argument(
        "--expected-server",
        type=Path,
        metavar="FILE",
        help="checks the server leg may fail (the file's `server:` list)",
    )
    parser.add_argument("--no-details", action="store_true", help="only the summary lines")
    args = parser.parse_args()

    expected = parse_expected(args.expected) if args.expected else None
    expected_server = parse_expected(args.expected_server, "server") if args.expected_server else None
    expectations = {"client": expected, "server": expected_server}
    runs = [load(outdir) for outdir in args.outdirs]
    required = {"server": set(args.require), "client": set(args.require_client)}
    bad = False
    required_failures: list[str] = []
    problems: list[str] = []
    for run in runs:
        verdict, failed_required, run_problems = report(
            run, required[run.leg], expectations[run.leg], not args.no_details
        )
        bad = bad or bool(verdict.failed) or bool(run_problems)
        problems += run_problems
        required_failures += [f"{name} ({run.label})" for name in failed_required]

    for problem in problems:
        print(f"FAILED: {problem}")

    if expected is not None and any(run.leg == "client" for run in runs):
        scored = {name for run in runs if run.leg == "client" for name in run.scored}
        for name in sorted(expected.names() - scored):
            print(f"NOTE: {name} is listed in {expected.path} but is a scored scenario of no client set run here "
                  f"(the entry has no effect)")

    lines = [f"required not-scored scenario failed: {failure}" for failure in required_failures]
    for leg, names in required.items():
        ran = {name for run in runs if run.leg == leg for name in run.scenarios}
        for name in sorted(names - ran):
            lines.append(f"required not-scored {leg} scenario not run by any {leg} set: {name}")
    if lines:
        bad = True
        print("\n".join(lines))
    elif required["server"] or required["client"]:
        listed = "; ".join(f"{leg}: {', '.join(sorted(names))}" for leg, names in required.items() if names)
        print(f"required not-scored scenarios: all passed ({listed})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
