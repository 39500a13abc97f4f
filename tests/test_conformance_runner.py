"""The conformance runner judges a vector by its fields, never by its id.

The vectors below are not in the shared set and get fresh random ids on every run, so a runner that looks a case
up by id (a build error, a Kafka-only skip, a restart) meets none of them. Their expected outputs were worked out
by hand from KAFKA_SEMANTICS.md (section 3 and 4; see each vector's notes), never by running the operators.
"""

import json
import os
import subprocess
import sys
import uuid
from collections import Counter

from conftest import ROOT

JOINER = 'streamValue + "+" + tableValue   (null table value rendered as "null")'


def _join_config(grace, versioned, retention, filtered=False, how="inner", key_type="int32"):
    return {
        "joinType": how,
        "graceMs": grace,
        "table": {"versioned": versioned, "historyRetentionMs": retention, "filtered": filtered},
        "joiner": JOINER,
        "keyType": key_type,
    }


def _rec(seq, side, key, value, ts):
    return {"seq": seq, "side": side, "key": key, "value": value, "ts": ts}


def _out(after_seq, key, value, ts):
    return {"after_seq": after_seq, "key": key, "value": value, "ts": ts}


# grace == history retention is allowed. s1@2 is buffered and released when the buffer's stream time reaches 8
# (2 <= 8 - 5), joined as of 2: t2@1 (accepted: 1 >= 0 - 5). s3@1 is late (8 - 5 = 3 > 1): joined at once as of 1,
# inclusive, t2. s2@8 is released at 14 (8 <= 9); s4@14 stays buffered.
GRACE_EQUALS_HISTORY = {
    "feature": "grace_join",
    "config": _join_config(grace=5, versioned=True, retention=5),
    "input": [
        _rec(0, "table", 1, "t1", 0),
        _rec(1, "stream", 1, "s1", 2),
        _rec(2, "table", 1, "t2", 1),
        _rec(3, "stream", 1, "s2", 8),
        _rec(4, "stream", 1, "s3", 1),
        _rec(5, "stream", 1, "s4", 14),
    ],
    "expected": [_out(3, 1, "s1+t2", 2), _out(4, 1, "s3+t2", 1), _out(5, 1, "s2+t2", 8)],
    # Not a number: nothing to compare, so the runner leaves it out rather than failing.
    "expected_metrics": [{"after_seq": 5, "note": "no metric asserted"}],
}

CASES = {
    "grace_equals_history": ("PASS", GRACE_EQUALS_HISTORY),
    # The same vector with one output wrong (t1 is no longer the version at 8): the comparison must catch it.
    "wrong_output": (
        "FAIL",
        dict(GRACE_EQUALS_HISTORY, expected=[_out(3, 1, "s1+t2", 2), _out(4, 1, "s3+t2", 1), _out(5, 1, "s2+t1", 8)]),
    ),
    "grace_over_history": (
        "PASS",
        {
            "feature": "grace_join",
            "config": dict(
                _join_config(grace=10, versioned=True, retention=9, how="left", key_type="string"),
                pipeline="stream.leftJoin(table(versioned, history 9 ms), joiner, grace 10 ms)",
            ),
            "input": [],
            "expected_error": "IllegalArgumentException: 'History retention must be at least grace period.'",
            "error_at": "build",
        },
    ),
    "grace_on_filtered_non_versioned": (
        "PASS",
        {
            "feature": "grace_join",
            "config": dict(
                _join_config(grace=1, versioned=False, retention=None, filtered=True, key_type="int64"),
                pipeline="stream.join(table(non-versioned).filter(...), joiner, grace 1 ms)",
            ),
            "input": [],
            "expected_error": "IllegalArgumentException at builder.build(): 'KTable must be versioned ...'",
            "error_at": "build",
        },
    ),
    # Nothing in this config is refused (grace may equal the history retention): a runner that trusted error_at
    # alone would pass it.
    "error_the_config_does_not_explain": (
        "FAIL",
        {
            "feature": "grace_join",
            "config": _join_config(grace=7, versioned=True, retention=7),
            "input": [],
            "expected_error": "IllegalArgumentException",
            "error_at": "build",
        },
    ),
    "unlimited_windows": (
        "SKIP",
        {
            "feature": "emit_strategy",
            "config": {"window": {"type": "unlimited"}, "emitStrategy": "onWindowClose"},
            "input": [],
            "expected_error": "IllegalArgumentException",
            "error_at": "build",
        },
    ),
    "suppress_on_versioned_table": (
        "SKIP",
        {
            "feature": "suppress",
            "config": {
                "pipeline": "table(versioned).suppress(untilTimeLimit(5 ms, unbounded()))",
                "mode": "untilTimeLimit",
                "timeLimitMs": 5,
                "maxRecords": None,
                "maxBytes": None,
                "bufferFull": "unbounded",
                "input": {"versionedTable": True},
            },
            "input": [],
            "expected_error": "TopologyException",
            "error_at": "build",
        },
    ),
}


def test_runner_judges_vectors_it_has_never_seen_by_their_config(tmp_path):
    ids = {case: f"unseen.{uuid.uuid4().hex}" for case in CASES}
    by_feature = {}
    for case, (_, vector) in CASES.items():
        by_feature.setdefault(vector["feature"], []).append(dict(vector, id=ids[case]))
    for feature, vectors in by_feature.items():
        family = {"family": f"unseen_{feature}", "feature": feature, "description": "hand-made", "vectors": vectors}
        (tmp_path / f"{feature}.json").write_text(json.dumps(family))

    no_chains = tmp_path / "no-chains"  # only the hand-made vectors: not the shared chains `make` points CHAINS_DIR at
    no_chains.mkdir()
    result = subprocess.run(
        [sys.executable, os.path.join("tests", "conformance", "run.py")],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
        env=dict(os.environ, CONFORMANCE_DIR=str(tmp_path), CHAINS_DIR=str(no_chains)),
    )
    lines = result.stdout.splitlines()
    for case, (verdict, _) in CASES.items():
        mine = [line for line in lines if line.split(" ", 2)[1:2] in ([ids[case]], [ids[case] + ":"])]
        assert len(mine) == 1 and mine[0].startswith(verdict + " "), (case, mine, result.stdout, result.stderr[-3000:])
    skips = [line for line in lines if line.startswith("SKIP ")]
    assert all("Kafka-only" in line for line in skips), skips
    want = Counter(verdict for verdict, _ in CASES.values())
    assert lines[-1] == f"{want['PASS']} passed, {want['FAIL']} failed, {want['SKIP']} skipped", result.stdout
    assert result.returncode == 1  # any failure fails the run
