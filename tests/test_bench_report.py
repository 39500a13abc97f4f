"""benchmarks/report.py: which run the published tables come from. Pure Python: no Spark session."""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

import report  # noqa: E402


def write(directory, name, benchmarks, mode="full", local_fs=None):
    path = directory / name
    body = {"mode": mode, "benchmarks": {b: {"title": f"{b} of {name}"} for b in benchmarks}}
    if local_fs is not None:  # runs before run.py --local-fs have none
        body["local_fs"] = local_fs
    path.write_text(json.dumps(body))
    return str(path)


def carry(directory, newest):
    """The newest run's results with what it carries, and {benchmark: the file it came from}."""
    with open(newest) as fh:
        results = json.load(fh)
    carried = report.carry_missing(results, newest, str(directory))
    return results, carried, {b: os.path.basename(f) for b, f in carried.items()}


def test_a_full_run_takes_what_it_did_not_run_from_the_newest_run_that_did(tmp_path):
    write(tmp_path, "20261126T000000Z-full.json", ["final_results", "kafka_sustained", "chains"])
    write(tmp_path, "20261127T000000Z-full-partial.json", ["kafka_sustained"])
    write(tmp_path, "20261128T000000Z-full-spark3.5.json", ["chains"])  # another line: never carried
    write(tmp_path, "20261128T010000Z-quick.json", ["chains"], mode="quick")  # a smoke run: never carried
    newest = write(tmp_path, "20261129T000000Z-full.json", ["final_results"])
    assert report.latest_results(str(tmp_path)) == newest  # a partial run is never the newest full run
    results, carried, sources = carry(tmp_path, newest)
    assert sources == {
        "kafka_sustained": "20261127T000000Z-full-partial.json",
        "chains": "20261126T000000Z-full.json",
    }
    assert results["benchmarks"]["final_results"]["title"] == "final_results of 20261129T000000Z-full.json"
    assert results["benchmarks"]["kafka_sustained"]["title"] == "kafka_sustained of 20261127T000000Z-full-partial.json"
    shown = "\n".join(report._carried(carried, str(tmp_path), results))
    assert "chains from `" in shown and "20261126T000000Z-full.json" in shown


def test_a_run_takes_a_benchmark_from_a_run_on_its_own_local_file_system_first_and_names_another(tmp_path):
    # Before the option every run was on Hadoop's own file system; the newest with chains is on it too.
    write(tmp_path, "20261126T000000Z-full.json", ["kafka_sustained", "chains"])
    write(tmp_path, "20261127T000000Z-full.json", ["chains"], local_fs="forkfree")
    write(tmp_path, "20261127T010000Z-full-partial.json", ["chains"], local_fs="hadoop")
    newest = write(tmp_path, "20261128T000000Z-full.json", ["final_results"], local_fs="forkfree")
    results, carried, sources = carry(tmp_path, newest)
    assert sources == {
        "chains": "20261127T000000Z-full.json",
        "kafka_sustained": "20261126T000000Z-full.json",
    }
    shown = "\n".join(report._carried(carried, str(tmp_path), results))
    assert "kafka_sustained from `" in shown
    assert "20261126T000000Z-full.json`, on Hadoop's local file system as" in shown
    assert "20261127T000000Z-full.json`;" in shown  # same file system: nothing said


def test_the_throughput_table_gives_each_system_its_fastest_and_slowest_run_beside_the_median():
    def system(label, runs):
        return {
            "label": label,
            "records": 1000,
            "seconds": sorted(runs)[len(runs) // 2],
            "records_per_s": 1.0,
            "runs": [{"seconds": r} for r in runs],
        }

    results = {
        "benchmarks": {
            "final_results": {
                "title": "Final results",
                "systems": [system("ours", [2.4, 2.9, 2.7]), system("pandas", [197.5])],
            }
        }
    }
    lines = report._throughput(results)
    assert "Runs: fastest-slowest (n)" in lines[1]
    ours = next(line for line in lines if "| ours |" in line)
    assert "| 2.70 | 2.40-2.90 (3) |" in ours, ours
    pandas = next(line for line in lines if "| pandas |" in line)
    assert "| 197.50 |  |" in pandas, pandas  # one run: no spread to show
