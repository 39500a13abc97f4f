"""benchmarks/jvm/jobs: the hand-written flatMapGroupsWithState job the large-state benchmark measures the engine
against counts what Spark's append aggregation counts, worked out by hand below. It runs in a fresh JVM with a
benchmark session (harness/streaming.session), whose driver class path holds the jobs' jar (harness/jvm_jobs.py)."""

import json

from conftest import run_python

# Four files, one micro-batch each, watermark delay 2 s (the benchmarks' WATERMARK_DELAY):
# 1. a@1.0, a@9.999, b@4.0 s         -> window [0, 10): a 2, b 1; watermark after: 7.999 s
# 2. a@10.0, a@12.5, b@3.0 s         -> b@3.0 is behind but its window is open (end 10 > 7.999): b 2; [10, 20): a 2;
#                                        watermark after: 10.5 s, which closes [0, 10) for a and b
# 3. b@9.0 s, a@25.0 s               -> b@9.0's window closed (end 10 <= 10.5): dropped; [20, 30): a 1;
#                                        watermark after: 23.0 s, which closes [10, 20)
# 4. c@40.0 s                        -> [40, 50): c 1; watermark after: 38 s, which closes [20, 30) for a
# Open at the end: c's [40, 50).
EXPECTED = [
    ["a", 0, 10_000, 2],
    ["a", 10_000, 20_000, 2],
    ["a", 20_000, 30_000, 1],
    ["b", 0, 10_000, 2],
]

SCRIPT = r"""
import json, os, sys, tempfile
sys.path.insert(0, "benchmarks")
import pyarrow as pa, pyarrow.parquet as pq
from harness import events, jvm_jobs, streaming

batches = [
    [("a", 1_000), ("a", 9_999), ("b", 4_000)],
    [("a", 10_000), ("a", 12_500), ("b", 3_000)],
    [("b", 9_000), ("a", 25_000)],
    [("c", 40_000)],
]
root = tempfile.mkdtemp(prefix="jvm-jobs-")
data = os.path.join(root, "in")
os.makedirs(data)
seq = 0
for i, batch in enumerate(batches):
    n = len(batch)
    pq.write_table(pa.table({
        "key": pa.array([k for k, _ in batch]),
        "ts": pa.array([t * 1000 for _, t in batch], pa.timestamp("us", tz="UTC")),
        "value": pa.array([0] * n, pa.int64()),
        "seq": pa.array(list(range(seq, seq + n)), pa.int64()),
    }), os.path.join(data, f"part-{i:05d}.parquet"))
    seq += n
events._in_name_order(data)
spark = streaming.session("jvm-jobs-test")
stream = streaming.read_files(spark, data, events.EVENT_SCHEMA).select("key", "ts")
counts = jvm_jobs.window_counts(stream.withWatermark("ts", streaming.WATERMARK_DELAY), 10_000)
out = os.path.join(root, "out")
q = (counts.writeStream.format("parquet").option("path", out).option("checkpointLocation", os.path.join(root, "ckpt"))
     .trigger(availableNow=True).outputMode("append").start())
q.awaitTermination()
rows = [[r["key"], int(r["window_start"].timestamp() * 1000), int(r["window_end"].timestamp() * 1000), r["count"]]
        for r in spark.read.parquet(out).collect()]
print("ROWS " + json.dumps(sorted(rows)))
spark.stop()
"""


def test_bare_window_count_emits_closed_windows_once_and_drops_a_record_of_a_closed_window():
    proc = run_python(SCRIPT)
    assert proc.returncode == 0, proc.stderr[-4000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("ROWS "))
    assert json.loads(line[len("ROWS ") :]) == EXPECTED
