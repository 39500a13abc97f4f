"""Benchmark 4's repeated points: how many runs a point gets, and which run's figures it reports. No Spark session."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

from harness import scaling  # noqa: E402


def test_a_point_runs_until_it_has_read_the_fixed_points_records_in_steady_batches_at_most_five_times():
    assert scaling.runs_for(100_000, 1_000_000) == scaling.MAX_RUNS == 5  # one steady batch a run
    assert scaling.runs_for(300_000, 1_000_000) == 4
    assert scaling.runs_for(1_000_000, 1_000_000) == 1
    assert scaling.runs_for(10_000_000, 1_000_000) == 1
    assert scaling.runs_for(40_000, 10_000) == 1  # the quick mode's points


def test_a_point_reports_its_median_runs_own_figures_beside_every_runs_steady_cost():
    costs = [2.0, 2.5, 2.4, 9.0, 2.45]
    runs = [{"steady_us_per_record": c, "state_rows": i, "seconds": 10.0 + i} for i, c in enumerate(costs)]
    point = scaling.median_run(runs)
    assert point["steady_us_per_record"] == 2.45
    assert (point["state_rows"], point["seconds"]) == (4, 14.0)  # the figures of that run, not of another
    assert point["runs"] == 5 and point["steady_us_per_record_runs"] == costs
    assert scaling.median_run(runs[:2])["steady_us_per_record"] == 2.0  # of two, the lower
    assert "runs" not in runs[4]  # the runs themselves are left as they were
