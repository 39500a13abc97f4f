"""benchmarks/run.py's results files: what a run cut short keeps, and what a run that ends leaves. No Spark session: the
benchmarks are fakes."""

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

import report  # noqa: E402
import run  # noqa: E402
from harness import buffer_core, kafka_streams  # noqa: E402


class Killed(BaseException):
    """What a kill looks like to the run: not an Exception, so the run records no failure and stops there."""


@pytest.fixture
def fakes(monkeypatch):
    monkeypatch.setattr(run, "require_jar", lambda: None)
    monkeypatch.delenv("BENCH_QUICK", raising=False)
    measured = {"title": "buffer core", "versions": {"kafka-streams": "4.2.0", "jmh": "1.37", "scala": "2.13"}}
    monkeypatch.setattr(buffer_core, "run", lambda root, work, jmh: dict(measured))
    cold_start = {"title": "cold start", "versions": {"kafka-streams": "4.2.0"}}
    monkeypatch.setattr(kafka_streams, "run", lambda ctx, root, event_log: dict(cold_start))
    monkeypatch.setattr(report, "summary", lambda results: "")  # the tables need real results
    return monkeypatch


def test_a_full_run_cut_short_leaves_a_partial_run_with_what_it_measured(fakes, tmp_path):
    def killed(*args, **kwargs):
        raise Killed()

    fakes.setattr(kafka_streams, "run", killed)
    with pytest.raises(Killed):
        run.main(["--results-dir", str(tmp_path), "--work-dir", str(tmp_path / "work"), "--no-plots"])
    files = sorted(p.name for p in tmp_path.glob("*.json*"))
    assert len(files) == 1 and files[0].endswith("-full-partial.json"), files  # never taken for a full run
    with open(tmp_path / files[0]) as fh:
        saved = json.load(fh)
    assert saved["finished"] is False
    assert list(saved["benchmarks"]) == ["buffer_core"]
    assert saved["benchmarks"]["buffer_core"]["title"] == "buffer core"


def test_a_run_that_ends_leaves_its_own_file_only(fakes, tmp_path):
    code = run.main(
        ["--only", "buffer_core,kafka_streams", "--results-dir", str(tmp_path), "--work-dir", str(tmp_path / "w")]
        + ["--no-plots"]
    )
    assert code == 0
    files = sorted(p.name for p in tmp_path.glob("*.json*"))
    assert len(files) == 1 and files[0].endswith("-full-partial.json"), files  # some benchmarks only: partial
    with open(tmp_path / files[0]) as fh:
        saved = json.load(fh)
    assert saved["finished"] is True and list(saved["benchmarks"]) == ["buffer_core", "kafka_streams"]


def test_a_full_run_that_ends_leaves_its_full_file_and_no_partial_one(fakes, tmp_path):
    import importlib

    from harness import profile, streaming

    class Session:
        stopped = False

        def stop(self):
            Session.stopped = True

    fakes.setattr(streaming, "session", lambda event_log_dir=None: Session())
    fakes.setattr(profile.EventLog, "of", staticmethod(lambda spark: None))
    fakes.setattr(run.machine, "versions", lambda root, spark=None: {"spark-suppress": "test"})
    for name in run.SPARK_BENCHMARKS:
        module = importlib.import_module(f"harness.{name}")
        fakes.setattr(module, "run", lambda ctx, name=name: {"title": name})
    code = run.main(["--results-dir", str(tmp_path), "--work-dir", str(tmp_path / "w"), "--no-plots"])
    assert code == 0
    files = sorted(p.name for p in tmp_path.glob("*.json*"))
    assert len(files) == 1 and files[0].endswith("-full.json"), files  # the partial file it kept until now is gone
    with open(tmp_path / files[0]) as fh:
        saved = json.load(fh)
    assert saved["finished"] is True
    assert list(saved["benchmarks"]) == [b for b in run.ALL if b not in run.OPT_IN]
    assert Session.stopped


def test_a_long_benchmark_cut_short_keeps_its_finished_parts_apart_from_the_finished_benchmarks(fakes, tmp_path):
    from harness import kafka_sustained

    def cut_short(ctx, root):
        ctx.progress("kafka_sustained", {"probes": [{"rate": 50_000, "sustained": True}]})
        ctx.progress("kafka_sustained", {"probes": [{"rate": 50_000, "sustained": True}, {"rate": 100_000}]})
        raise Killed()

    fakes.setattr(kafka_sustained, "run", cut_short)
    args = ["--results-dir", str(tmp_path), "--work-dir", str(tmp_path / "w"), "--no-plots"]
    with pytest.raises(Killed):
        run.main(["--only", "buffer_core,kafka_sustained"] + args)
    (path,) = tmp_path.glob("*.json")
    with open(path) as fh:
        saved = json.load(fh)
    assert saved["finished"] is False and list(saved["benchmarks"]) == ["buffer_core"]  # report.py tables these
    assert [p["rate"] for p in saved["unfinished"]["kafka_sustained"]["probes"]] == [50_000, 100_000]

    def ends(ctx, root):
        ctx.progress("kafka_sustained", {"probes": [{"rate": 50_000}]})
        return {"title": "sustained", "versions": {"kafka-streams": "4.2.0"}}

    fakes.setattr(kafka_sustained, "run", ends)
    path.unlink()
    assert run.main(["--only", "kafka_sustained"] + args) == 0
    (path,) = tmp_path.glob("*.json")
    with open(path) as fh:
        saved = json.load(fh)
    assert "unfinished" not in saved and saved["benchmarks"]["kafka_sustained"]["title"] == "sustained"
