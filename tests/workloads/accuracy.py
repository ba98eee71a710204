#!/usr/bin/env python3
"""Measures sparkprof's diagnosis against the workload corpus: what was planted, what was found.

For every fixture (fixtures/<spark version>/<workload>.zstd, Spark's own event log of a workload
in manifest.json) runs `sparkprof analyze <fixture> --format json` and compares the report's
findings with the workload's manifest entry. A profiled workload ("profile": true) is analysed
with its run's profile too (<workload>.sparkprof.zstd beside the log, decompressed to a temporary
file for `--profile`). Then:

* an expectation {"rule", "job", "root", "severity"} is found when a finding has that rule, a
  severity of at least `severity` (default warning) and, when `job` is given, stage_ids that
  intersect the stages of the jobs whose description contains `job` (the report's jobs[]; the
  event log's SparkListenerJobStart events when the report has none);
* an expectation with "frame" is found only when the finding's evidence frames (frames[]: the
  frame or the application frame) name it: a profile rule must point at the code planted, e.g.
  the Python function the workers ran;
* an expectation with "cause" is found only when the finding's title names it (case
  insensitive): a failure finding must say what ran out first, e.g. "Python worker memory";
  with "recommends" only when each listed setting is among the finding's recommendations (a
  key or its parent: "spark.memory.offHeap" matches spark.memory.offHeap.size), and with
  "must_not_recommend" only when none of those is (a code change matches by its text);
* a root expectation must rank above every other warning or critical finding (findings are
  ordered most important first);
* a false positive is a warning or critical finding whose rule the workload neither expects nor
  allows (info findings are never counted); an "allow" entry is a rule's name, or
  {"rule", "must_not_recommend"}: the finding may stand but not recommend those settings (a
  control with the fix applied may still be told what remains, never to apply the fix again);
* a must_not rule may not fire (warning or critical); a control workload may have no critical
  finding.

Prints per rule true positives, false positives, false negatives, precision and recall, and per
workload and Spark version what was found. --write FILE writes that as a Markdown page;
--check-docs FILE fails when FILE differs from what --write would write.

Exit codes: 0 every planted problem found on its stage and ranked as asked, no control critical,
no must_not rule (expectations marked known_gap are printed, not failed); 1 otherwise (or the
doc differs); 77 skipped: no fixtures.
"""

import argparse
import concurrent.futures
import dataclasses
import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from generate import (FIXTURES, MANIFEST, PROFILE_SUFFIX, decompressed_log,  # noqa: E402
                      load_manifest)

SKIPPED = 77
SEVERITY_RANK = {"info": 0, "warning": 1, "critical": 2}
DOC_COMMAND = ("python3 tests/workloads/accuracy.py --sparkprof build/cli/sparkprof "
               "--write docs/diagnosis-accuracy.md")


def significant(finding):
    return SEVERITY_RANK.get(finding.get("severity"), 0) >= SEVERITY_RANK["warning"]


def analyze(sparkprof, path, profile=None):
    """The report of one application (the JSON of `sparkprof analyze`), with the run's profile
    when given (a zstd-compressed profile.sparkprof)."""
    with tempfile.TemporaryDirectory(prefix="sparkprof-accuracy-") as temp:
        command = [sparkprof, "analyze", path, "--format", "json", "-q"]
        if profile:
            zstd = shutil.which("zstd")
            if not zstd:
                raise RuntimeError(f"zstd is not installed to decompress {profile}")
            plain = os.path.join(temp, "profile.sparkprof")
            subprocess.run([zstd, "-dqf", profile, "-o", plain], check=True)
            command += ["--profile", plain]
        result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"sparkprof analyze {path} exited with {result.returncode}: "
                           f"{result.stderr.strip()[:500]}")
    report = json.loads(result.stdout)
    if "applications" in report:
        report = report["applications"][0]
    return report


def jobs_of(report, path):
    """[(job id, description, {stage ids})]: the report's jobs[], else the event log's."""
    if "jobs" in report:
        return [(j["job_id"], j.get("description") or "", set(j.get("stage_ids", [])))
                for j in report["jobs"]]
    text = decompressed_log(path)
    if text is None:
        raise RuntimeError("the report has no jobs[] and zstd is not installed to read the log")
    jobs = []
    for line in text.splitlines():
        if '"SparkListenerJobStart"' not in line:
            continue
        event = json.loads(line)
        description = (event.get("Properties") or {}).get("spark.job.description") or ""
        jobs.append((event["Job ID"], description, set(event.get("Stage IDs", []))))
    return jobs


@dataclasses.dataclass
class Outcome:
    """One expectation of one workload on one Spark version."""
    rule: str
    job: str
    root: bool
    status: str        # found | missed | weak | wrong-stage | unnamed | wrong-cause |
                       # wrong-advice | outranked | no-job
    detail: str = ""   # why, with the numbers from the report
    rank: int = 0      # 1-based position of the matching finding among all findings
    known_gap: str = ""

    @property
    def found(self):
        return self.status in ("found", "outranked")

    @property
    def ok(self):
        return self.status == "found" or bool(self.known_gap)


@dataclasses.dataclass
class WorkloadResult:
    name: str
    version: str
    outcomes: list = dataclasses.field(default_factory=list)
    false_positives: list = dataclasses.field(default_factory=list)  # (rule, severity, stages)
    must_not_fired: list = dataclasses.field(default_factory=list)
    allowed_advice: list = dataclasses.field(default_factory=list)  # an allowed finding's advice
    control_criticals: list = dataclasses.field(default_factory=list)
    error: str = ""

    @property
    def failures(self):
        problems = [f"{o.rule}: {o.status} ({o.detail})" for o in self.outcomes if not o.ok]
        problems += [f"must_not {rule} fired on stages {stages}"
                     for rule, _, stages in self.must_not_fired]
        problems += [f"allowed {problem}" for problem in self.allowed_advice]
        problems += [f"critical {rule} on a control (stages {stages})"
                     for rule, stages in self.control_criticals]
        if self.error:
            problems.append(self.error)
        return problems


def stage_list(stages):
    return ",".join(str(s) for s in sorted(stages)) or "none"


def evaluate(workload, version, report, jobs):
    """Compares one report with its workload's manifest entry."""
    result = WorkloadResult(workload["name"], version)
    findings = report.get("findings", [])
    expected_rules = {e["rule"] for e in workload.get("expect", [])}
    allow_entries = [a if isinstance(a, dict) else {"rule": a} for a in workload.get("allow", [])]
    allowed = expected_rules | {a["rule"] for a in allow_entries}
    for expectation in workload.get("expect", []):
        result.outcomes.append(match(expectation, findings, jobs, workload.get("known_gap")))
    for finding in findings:
        if not significant(finding):
            continue
        stages = finding.get("stage_ids", [])
        if finding["rule"] not in allowed:
            result.false_positives.append((finding["rule"], finding["severity"], stages))
        if finding["rule"] in workload.get("must_not", []):
            result.must_not_fired.append((finding["rule"], finding["severity"], stages))
        for entry in allow_entries:
            problem = entry["rule"] == finding["rule"] and advice_problem(entry, finding)
            if problem:
                result.allowed_advice.append(problem)
        if workload.get("control") and finding["severity"] == "critical":
            result.control_criticals.append((finding["rule"], stages))
    return result


def match(expectation, findings, jobs, workload_gap):
    rule = expectation["rule"]
    job = expectation.get("job")
    outcome = Outcome(rule, job or "", bool(expectation.get("root")), "missed",
                      known_gap=expectation.get("known_gap") or workload_gap or "")
    floor = SEVERITY_RANK[expectation.get("severity", "warning")]
    job_stages = None
    if job:
        described = [j for j in jobs if job in j[1]]
        if not described:
            outcome.status = "no-job"
            outcome.detail = f"no job's description contains '{job}'"
            return outcome
        job_stages = set().union(*(j[2] for j in described))
    of_rule = [(i, f) for i, f in enumerate(findings) if f["rule"] == rule]
    on_stage = [(i, f) for i, f in of_rule
                if job_stages is None or job_stages & set(f.get("stage_ids", []))]
    strong = [(i, f) for i, f in on_stage if SEVERITY_RANK.get(f["severity"], 0) >= floor]
    frame = expectation.get("frame")
    named = [(i, f) for i, f in strong if not frame or any(
        frame in e.get("frame", "") or frame in e.get("application_frame", "")
        for e in f.get("frames", []))]
    cause = expectation.get("cause")
    caused = [(i, f) for i, f in named if not cause or cause.lower() in f["title"].lower()]
    advised = [(i, f) for i, f in caused if advice_problem(expectation, f) is None]
    if not of_rule:
        outcome.detail = "no finding"
    elif not on_stage:
        elsewhere = sorted({s for _, f in of_rule for s in f.get("stage_ids", [])})
        outcome.status = "wrong-stage"
        outcome.detail = (f"{rule} on stages {stage_list(elsewhere)}; job '{job}' has stages "
                          f"{stage_list(job_stages)}")
    elif not strong:
        outcome.status = "weak"
        outcome.detail = (f"{rule} is {on_stage[0][1]['severity']}, expected at least "
                          f"{expectation.get('severity', 'warning')}")
    elif not named:
        outcome.status = "unnamed"
        outcome.detail = f"{rule} names no frame with '{frame}'"
    elif not caused:
        outcome.status = "wrong-cause"
        outcome.detail = f"{rule}'s title does not name '{cause}': {named[0][1]['title']}"
    elif not advised:
        outcome.status = "wrong-advice"
        outcome.detail = advice_problem(expectation, caused[0][1])
    else:
        index, _ = advised[0]
        outcome.status = "found"
        outcome.rank = index + 1
        above = [f["rule"] for f in findings[:index] if significant(f)]
        if outcome.root and above:
            outcome.status = "outranked"
            outcome.detail = f"ranked {index + 1}, below {', '.join(above)}"
    return outcome


def advice_problem(expectation, finding):
    """What is wrong with a finding's recommendations against the expectation's "recommends"
    and "must_not_recommend" (config keys or their prefixes); None when nothing is."""
    recommendations = finding.get("recommendations", [])
    keys = [r.get("config", "") for r in recommendations]

    def recommended(key):
        return any(k == key or k.startswith(key + ".") for k in keys if k) or any(
            key in r.get("change", "") for r in recommendations if r.get("kind") == "code")

    missing = [k for k in expectation.get("recommends", []) if not recommended(k)]
    unwanted = [k for k in expectation.get("must_not_recommend", []) if recommended(k)]
    if not missing and not unwanted:
        return None
    problems = [f"does not recommend {', '.join(missing)}"] if missing else []
    problems += [f"recommends {', '.join(unwanted)}"] if unwanted else []
    return f"{finding['rule']} {' and '.join(problems)} (it recommends {', '.join(keys) or 'no setting'})"


@dataclasses.dataclass
class RuleCounts:
    true_positives: int = 0
    false_negatives: int = 0
    false_positives: int = 0

    @staticmethod
    def ratio(hits, total):
        return f"{hits / total:.2f}" if total else "-"

    @property
    def precision(self):
        return self.ratio(self.true_positives, self.true_positives + self.false_positives)

    @property
    def recall(self):
        return self.ratio(self.true_positives, self.true_positives + self.false_negatives)


def rule_counts(results):
    counts = {}
    for result in results:
        for outcome in result.outcomes:
            entry = counts.setdefault(outcome.rule, RuleCounts())
            if outcome.found:
                entry.true_positives += 1
            else:
                entry.false_negatives += 1
        for rule, _, _ in result.false_positives:
            counts.setdefault(rule, RuleCounts()).false_positives += 1
    return dict(sorted(counts.items()))


def fixture_versions(fixtures):
    if not os.path.isdir(fixtures):
        return []
    return sorted(v for v in os.listdir(fixtures)
                  if os.path.isdir(os.path.join(fixtures, v)) and any(
                      n.endswith(".zstd") for n in os.listdir(os.path.join(fixtures, v))))


def evaluate_all(workloads, fixtures, versions, sparkprof):
    """{(workload, version): WorkloadResult} for every workload and version."""
    def one(workload, version):
        path = os.path.join(fixtures, version, workload["name"] + ".zstd")
        if not os.path.exists(path):
            return WorkloadResult(workload["name"], version,
                                  error=f"no fixture {os.path.relpath(path, REPO)} "
                                        "(tests/workloads/generate.py --write-fixtures)")
        profile = None
        if workload.get("profile"):
            profile = os.path.join(fixtures, version, workload["name"] + PROFILE_SUFFIX)
            if not os.path.exists(profile):
                return WorkloadResult(workload["name"], version,
                                      error=f"no profile {os.path.relpath(profile, REPO)} "
                                            "(tests/workloads/generate.py --write-fixtures)")
        try:
            report = analyze(sparkprof, path, profile)
            return evaluate(workload, version, report, jobs_of(report, path))
        except (RuntimeError, ValueError, KeyError, subprocess.CalledProcessError) as e:
            return WorkloadResult(workload["name"], version, error=str(e))

    pairs = [(w, v) for w in workloads for v in versions]
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        results = list(pool.map(lambda p: one(*p), pairs))
    return {(r.name, r.version): r for r in results}


# ---- presentation ---------------------------------------------------------------------------

def outcome_text(outcome):
    if outcome.status == "found":
        return f"{outcome.rule} found (#{outcome.rank})"
    gap = " [known gap]" if outcome.known_gap else ""
    return f"{outcome.rule} {outcome.status}: {outcome.detail}{gap}"


def result_text(result, control):
    """What one workload got on one version, for a table cell."""
    if result.error:
        return "ERROR: " + result.error
    parts = [outcome_text(o) for o in result.outcomes]
    if control and not result.control_criticals:
        parts.append("no critical")
    parts += [f"critical on a control: {rule}" for rule, _ in result.control_criticals]
    parts += [f"must_not {rule} ({severity})" for rule, severity, _ in result.must_not_fired]
    parts += [f"allowed {problem}" for problem in result.allowed_advice]
    extra = sorted({f"{rule} ({severity})" for rule, severity, _ in result.false_positives
                    if rule not in {r for r, _, _ in result.must_not_fired}})
    if extra:
        parts.append("false positive: " + ", ".join(extra))
    verdict = "FAIL" if result.failures else "ok"
    return f"{verdict}: " + "; ".join(parts) if parts else verdict


def rule_rows(counts):
    return [[rule, str(c.true_positives), str(c.false_negatives), str(c.false_positives),
             c.precision, c.recall] for rule, c in counts.items()]


RULE_HEADER = ["rule", "true positives", "false negatives", "false positives", "precision",
               "recall"]


def text_table(header, rows):
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

    def line(row):
        return "  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()

    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


def print_results(workloads, versions, results):
    for version in versions:
        print(f"\n== Spark {version}")
        for workload in workloads:
            result = results[(workload["name"], version)]
            print(f"{workload['name']}: {result_text(result, workload.get('control'))}")
    for version in versions:
        counts = rule_counts(r for r in results.values() if r.version == version)
        print(f"\n== per rule, Spark {version}\n" + text_table(RULE_HEADER, rule_rows(counts)))
    counts = rule_counts(results.values())
    print("\n== per rule, all versions\n" + text_table(RULE_HEADER, rule_rows(counts)))


def markdown_cell(text):
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(markdown_cell(str(c)) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def expectation_text(expectation):
    """"job-failures (root; names 'Python worker memory'; recommends spark.executor.pyspark.memory)"."""
    parts = ["root"] if expectation.get("root") else []
    if expectation.get("cause"):
        parts.append(f"names '{expectation['cause']}'")
    if expectation.get("recommends"):
        parts.append("recommends " + ", ".join(expectation["recommends"]))
    if expectation.get("must_not_recommend"):
        parts.append("not " + ", ".join(expectation["must_not_recommend"]))
    return expectation["rule"] + (f" ({'; '.join(parts)})" if parts else "")


def markdown(workloads, versions, results):
    out = [
        "# Diagnosis accuracy on the workload corpus",
        "",
        f"Generated by `{DOC_COMMAND}` from the fixtures in `tests/workloads/fixtures/` "
        "(real Spark applications, each planting one known problem: `tests/workloads/README.md`). "
        "Do not edit by hand; the ctest `workloads_accuracy_docs` fails when this page is stale.",
        "",
        "A planted problem is found when a warning or critical finding has the expected rule on "
        "a stage of the job the manifest names; a root cause must rank above every other warning "
        "or critical finding. A false positive is a warning or critical finding whose rule the "
        "workload neither expects nor allows; a control run may have no critical finding. A "
        "failure expectation may also ask the finding to name its cause in its title and to "
        "recommend (or not) given settings.",
        "Workloads marked *(profiled)* ran with sparkprof's agent and plugin and are analysed "
        "with their run's profile (`analyze --profile`): only the profile shows their cause.",
        "",
        f"## Per rule (Spark {', '.join(versions)} together)",
        "",
        markdown_table(RULE_HEADER, rule_rows(rule_counts(results.values()))),
        "",
        "## Per workload",
        "",
    ]
    rows = []
    for workload in workloads:
        expected = ", ".join(expectation_text(e)
                             for e in workload.get("expect", [])) or "control: nothing critical"
        name = f"`{workload['name']}`" + (" *(profiled)*" if workload.get("profile") else "")
        rows.append([name, workload["problem"], expected]
                    + [result_text(results[(workload["name"], v)], workload.get("control"))
                       for v in versions])
    out.append(markdown_table(["workload", "planted", "expected"]
                              + [f"Spark {v}" for v in versions], rows))
    gaps = [(w["name"], w["known_gap"]) for w in workloads if w.get("known_gap")]
    gaps += [(w["name"] + " / " + e["rule"], e["known_gap"]) for w in workloads
             for e in w.get("expect", []) if e.get("known_gap")]
    out += ["", "## Known gaps", ""]
    out += [f"- `{name}`: {gap}" for name, gap in gaps] or ["None."]
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sparkprof", required=True, help="the sparkprof CLI")
    parser.add_argument("--fixtures", default=FIXTURES,
                        help="a directory of <spark version>/<workload>.zstd")
    parser.add_argument("--manifest", default=MANIFEST)
    parser.add_argument("--only", nargs="+", metavar="NAME", help="just these workloads")
    docs = parser.add_mutually_exclusive_group()
    docs.add_argument("--write", metavar="FILE", help="write the Markdown page")
    docs.add_argument("--check-docs", metavar="FILE",
                      help="fail when FILE differs from what --write would write")
    args = parser.parse_args()
    if args.only and (args.write or args.check_docs):
        parser.error("the page covers every workload: --only goes with neither --write nor "
                     "--check-docs")
    return check(args)


def check(args):
    """Evaluates args.fixtures; returns the exit code."""
    versions = fixture_versions(args.fixtures)
    if not versions:
        print(f"SKIPPED: no fixtures in {args.fixtures} (tests/workloads/generate.py "
              "--write-fixtures)")
        return SKIPPED
    sparkprof = shutil.which(args.sparkprof) or args.sparkprof
    if not os.access(sparkprof, os.X_OK):
        print(f"FAIL the sparkprof CLI is missing: {args.sparkprof} (scripts/build.sh release)")
        return 1
    workloads = load_manifest(args.manifest)
    if args.only:
        workloads = [w for w in workloads if w["name"] in args.only]
    results = evaluate_all(workloads, args.fixtures, versions, sparkprof)
    print_results(workloads, versions, results)
    failed = [(key, problem) for key, result in results.items() for problem in result.failures]
    gaps = [(key, o) for key, r in results.items() for o in r.outcomes
            if o.known_gap and o.status != "found"]
    for (name, version), outcome in gaps:
        print(f"known gap {name} on {version}: {outcome_text(outcome)} ({outcome.known_gap})")
    for (name, version), problem in failed:
        print(f"FAIL {name} on Spark {version}: {problem}")
    page = markdown(workloads, versions, results)
    status = 1 if failed else 0
    if args.write:
        with open(args.write, "w") as f:
            f.write(page)
        print(f"wrote {args.write}")
    if args.check_docs:
        with open(args.check_docs) as f:
            current = f.read()
        if current != page:
            print(f"FAIL {args.check_docs} is stale; regenerate it: {DOC_COMMAND}")
            sys.stdout.writelines(difflib.unified_diff(
                current.splitlines(True), page.splitlines(True), args.check_docs, "generated"))
            return 1
        print(f"ok {args.check_docs} is up to date")
        return 0  # the doc check is its own test: the accuracy failures are printed above
    print(f"\n{len(results)} workload runs; "
          + (f"{len(failed)} failures" if failed else "all pass"))
    return status


if __name__ == "__main__":
    sys.exit(main())
