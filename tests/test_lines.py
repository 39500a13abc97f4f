"""tests/lines.py, which runs `make test` on every Spark line: reading each runner's counts, and the table."""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import lines  # noqa: E402


def test_sbt_counts_add_up_every_tests_line():
    out = (
        "[info] Tests: succeeded 10, failed 0, canceled 0, ignored 1, pending 0\n"
        "[info] Tests: succeeded 5, failed 2, canceled 1, ignored 0, pending 0\n"
    )
    assert lines.counts("test-jvm", out) == (15, 2, 2)


def test_pytest_counts_come_from_its_closing_line():
    assert lines.counts("test-python", "....\n112 passed, 3 skipped in 323.00s (0:05:22)\n") == (112, 0, 3)
    assert lines.counts("test-python", "F.\n===== 1 failed, 1 passed in 2.1s =====\n") == (1, 1, 0)
    assert lines.counts("test-python", "== 2 passed, 1 error in 2.1s ==\n") == (2, 1, 0)


def test_conformance_totals_of_two_runs_add_up():
    out = "PASS a (1.0s)\n92 passed, 0 failed, 8 skipped\nPASS b (1.0s)\n12 passed, 1 failed, 0 skipped\n"
    assert lines.counts("conformance", out) == (104, 1, 8)


def test_only_the_projects_sbt_names_failed_fail_their_line():
    out = (
        "[info] Tests: succeeded 21, failed 0, canceled 0, ignored 0, pending 0\n"
        "[error] Failed tests:\n"
        "[error] \tio.github.sparksuppress.spark.SparkBehaviourProbeSuite\n"
        "[error] (spark43_213 / Test / test) sbt.TestsFailedException: Tests unsuccessful\n"
        "[error] (spark40_213 / Test / test) sbt.TestsFailedException: Tests unsuccessful\n"
    )
    assert lines.failed_projects(out) == {"spark43_213", "spark40_213"}
    assert lines.failed_projects("[success] Total time: 27 s\n") == set()


def test_a_run_without_a_closing_line_has_no_counts():
    assert lines.counts("test-jvm", "[error] Compilation failed\n") is None
    assert lines.counts("conformance", "Traceback (most recent call last):\n") is None


def test_the_table_marks_failures_and_suites_a_line_does_not_run():
    all_lines = lines.read_lines()
    first, last = all_lines[0], all_lines[-1]
    results = {
        (first.name, "test-jvm"): lines.Result(10, 0, 1, status="ok"),
        (last.name, "test-jvm"): lines.Result(9, 1, 0, status="failed"),
        (last.name, "test-python"): lines.Result(status="no counts"),
    }
    text = lines.table([first, last], results)
    jvm_row = next(r for r in text.splitlines() if r.startswith("test-jvm"))
    assert "10/0/1" in jvm_row and "9/1/0!" in jvm_row
    assert "NO COUNTS" in next(r for r in text.splitlines() if r.startswith("test-python"))
    # the default line alone runs the wheel with pyspark-client
    client_row = next(r for r in text.splitlines() if r.startswith("test-connect-client"))
    assert client_row.split("|")[1].strip() == "-" and client_row.split("|")[2].strip() == "not run"


def test_every_line_builds_and_runs_its_vectors_and_the_default_line_everything():
    for line in lines.read_lines():
        suites = lines.suites(line)
        assert suites[0] == ("lint" if line.default else "test-jvm")
        if line.default:
            assert set(suites) == {
                "lint",
                "test-jvm",
                "test-python",
                "conformance",
                "test-connect",
                "conformance-connect",
                "test-connect-client",
                "test-cluster-faults",
            }
        elif line.pyspark is not None:
            assert set(suites) == {"test-jvm", "conformance-once", "test-connect-plugin"}
        else:
            assert suites == ["test-jvm"]


def test_junit_reports_of_one_project_add_up(tmp_path):
    (tmp_path / "TEST-a.xml").write_text('<testsuite name="a" tests="5" errors="1" failures="1" skipped="1"/>')
    (tmp_path / "TEST-b.xml").write_text('<testsuite name="b" tests="3" errors="0" failures="0" skipped="0"/>')
    assert lines.junit_counts(str(tmp_path)) == (5, 2, 1)
    assert lines.junit_counts(str(tmp_path / "missing")) is None


def test_the_style_checks_run_once_and_their_closing_line_counts():
    assert sum("lint" in lines.suites(line) for line in lines.read_lines()) == 1
    out = (
        "$ ruff check\nAll checks passed!\n$ mypy python/spark_suppress\nFAIL ruff format --check\n2 passed, 1 failed\n"
    )
    assert lines.counts("lint", out) == (2, 1, 0)
    # sbt ends its output with "erase to the end of the screen" and no line break: the closing line starts with it.
    after_sbt = "$ sbt bench/compile\n\x1b[32msuccess\x1b[0m Total time: 11 s\n\x1b[0J6 passed, 0 failed\n"
    assert lines.counts("lint", after_sbt) == (6, 0, 0)


def test_a_failed_suite_is_explained_by_its_first_failures(tmp_path, monkeypatch):
    line = lines.read_lines()[-1]
    monkeypatch.setattr(lines, "ROOT", str(tmp_path))
    log = tmp_path / "python.log"
    log.write_text(
        "..F\nE   assert 1 == 2\n"
        "FAILED tests/test_a.py::test_one - AssertionError: one\nFAILED tests/test_a.py::test_two - two\n"
        "2 failed, 1 passed in 3.0s\n"
    )
    shown = lines.why(line, "test-python", lines.Result(1, 2, 0, status="failed", log="python.log"), most=1)
    assert shown == [
        f"  {line.name} test-python: FAILED tests/test_a.py::test_one - AssertionError: one",
        f"  {line.name} test-python: ... 1 more in python.log",
    ]
    reports = tmp_path / "target" / line.project / "test-reports"
    reports.mkdir(parents=True)
    (reports / "TEST-a.b.ProbeSuite.xml").write_text(
        '<testsuite name="a.b.ProbeSuite" tests="2" failures="1" errors="0">'
        '<testcase name="restarts"><failure message="4 did not equal 0" type="TestFailedException"/></testcase>'
        '<testcase name="ok"/></testsuite>'
    )
    assert lines.why(line, "test-jvm", lines.Result(1, 1, 0, status="failed")) == [
        f"  {line.name} test-jvm: ProbeSuite: restarts: 4 did not equal 0"
    ]


def test_the_cpu_meter_charges_a_process_cpu_to_the_tag_in_its_environment():
    from cpu_meter import TAG, CpuMeter

    burn = [sys.executable, "-c", "import time\nend = time.process_time() + 1.5\nwhile time.process_time() < end: pass"]
    tag = f"burner {os.getpid()}"  # of its own: the meter sees every process of the machine
    meter = CpuMeter(interval=0.2).start()
    try:
        subprocess.run(burn, env=dict(os.environ, **{TAG: tag}), check=True)
    finally:
        meter.stop()
    spent = meter.minutes().get(tag, 0.0) * 60
    # The burner spent 1.5 s, plus its start; the sampler misses what it spent after the last sample (one interval,
    # longer on a loaded machine), and must not count it twice.
    assert 0.9 < spent < 1.8, meter.minutes()
