"""benchmarks/sustained_search.py: which rates it probes, what it writes, and when it fails. No broker and no
system: the probe is a fake that keeps up with rates up to a limit."""

import contextlib
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

import sustained_search  # noqa: E402
from harness import kafka_streams, kafka_sustained  # noqa: E402
from harness.config import FULL  # noqa: E402


class FakeKafka:
    @contextlib.contextmanager
    def broker(self, *args, **kwargs):
        yield "127.0.0.1:1"


def fake(monkeypatch, limits, bad_check_at=None):
    """Each system keeps up with rates up to its limit; the probe at ``bad_check_at`` fails its check."""
    probed = []

    def probe(env, system, job, rate, trigger="default", latency_run=False):
        probed.append((system, job, rate))
        ok = rate != bad_check_at
        return {"system": system, "job": job, "rate": rate, "sustained": rate <= limits[system], "check": {"ok": ok}}

    monkeypatch.setattr(kafka_sustained, "probe", probe)
    monkeypatch.setattr(kafka_streams, "_local_kafka", lambda root: FakeKafka())
    monkeypatch.setattr(kafka_streams, "spark_jars", lambda root: [])
    monkeypatch.setattr(kafka_sustained, "classpath", lambda root, work: "")
    return probed


def written(tmp_path):
    (path,) = tmp_path.glob("*-sustained.json")
    return json.loads(path.read_text())


def test_from_a_higher_start_the_search_probes_what_benchmark_11_probes_after_its_doublings(monkeypatch, tmp_path):
    limits = {"kafka-streams": 510_000, "spark-suppress": 640_000}
    probed = fake(monkeypatch, limits)
    assert sustained_search.main(["--start-rate", "400000", "--results-dir", str(tmp_path)]) == 0
    from_50k = fake(monkeypatch, limits)
    assert sustained_search.main(["--results-dir", str(tmp_path / "full")]) == 0
    for system in limits:
        mine = [r for s, _, r in probed if s == system]
        theirs = [r for s, _, r in from_50k if s == system]
        # The same rates in the same order after the three doublings, with three probes more left to bisect.
        assert theirs[:3] == [50_000, 100_000, 200_000]
        assert mine[: len(theirs) - 3] == theirs[3:]
        assert len(theirs) == FULL.kafka_sustained.max_probes  # from 50,000 both searches ran out of probes
    out = written(tmp_path)
    assert out["job"] == "final_results" and out["start_rate"] == 400_000
    found = {s["system"]: s["sustained_records_per_s"] for s in out["systems"]}
    # Bisection within 5%: below each limit, and within 5% of the rate above it that failed.
    assert found == {"kafka-streams": 500_000, "spark-suppress": 625_000}
    assert out["check"] == {"ok": True, "probes": len(probed), "failed": 0}


def test_a_probe_whose_check_failed_fails_the_command(monkeypatch, tmp_path):
    fake(monkeypatch, {"kafka-streams": 510_000, "spark-suppress": 640_000}, bad_check_at=600_000)
    assert sustained_search.main(["--start-rate", "400000", "--results-dir", str(tmp_path)]) == 1
    assert written(tmp_path)["check"]["failed"] == 2  # both systems probed 600,000


@pytest.mark.parametrize(
    "args, message",
    [
        (["--systems", "flink"], "--systems 'flink': give some of kafka-streams, spark-suppress"),
        (["--start-rate", "0"], "--start-rate 0: give a positive rate"),
    ],
)
def test_bad_arguments_are_refused_with_the_fix(monkeypatch, capsys, args, message):
    fake(monkeypatch, {})
    with pytest.raises(SystemExit) as exit_:
        sustained_search.main(args)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err
