"""What a stateful query keeps per key, read back from its checkpoint with Spark's state data source."""

from __future__ import annotations

from typing import Any, Dict, Optional


def _binary_length_sum(spark_df, column: str) -> Optional[str]:
    """An expression summing the lengths of the binary fields of struct ``column`` (spark-suppress's state and
    key are binary), or None if it has none."""
    from pyspark.sql.types import BinaryType, StructType

    def walk(dtype, path):
        if isinstance(dtype, BinaryType):
            yield f"coalesce(octet_length({path}), 0)"
        elif isinstance(dtype, StructType):
            for f in dtype.fields:
                yield from walk(f.dataType, f"{path}.`{f.name}`")

    parts = list(walk(spark_df.schema[column].dataType, f"`{column}`"))
    return " + ".join(parts) if parts else None


def encoded(spark, checkpoint: str, batch_id: int, operator_id: int = 0) -> Dict[str, Any]:
    """Rows of one stateful operator at ``batch_id`` and the average bytes of the binary fields of their keys and
    values: the encoded state spark-suppress writes per group (Spark's row framing and JVM objects aside)."""
    from pyspark.sql import functions as F

    df = spark.read.format("statestore").option("batchId", batch_id).option("operatorId", operator_id).load(checkpoint)
    key_expr, value_expr = _binary_length_sum(df, "key"), _binary_length_sum(df, "value")
    aggs = [F.count(F.lit(1)).alias("rows")]
    if key_expr:
        aggs.append(F.avg(F.expr(key_expr)).alias("key"))
    if value_expr:
        aggs.append(F.avg(F.expr(value_expr)).alias("value"))
    row = df.agg(*aggs).collect()[0].asDict()
    return {
        "rows": int(row["rows"]),
        "key_bytes_per_row": round(row.get("key") or 0.0, 1),
        "value_bytes_per_row": round(row.get("value") or 0.0, 1),
    }


def distinct_keys(spark, checkpoint: str, batch_id: int, key_field: str, operator_id: int = 0) -> Dict[str, Any]:
    """State rows of one stateful operator at ``batch_id`` and the distinct values of ``key_field`` of their keys:
    how many of the user's keys a state keyed by more than the key (Spark's (window, key)) holds."""
    from pyspark.sql import functions as F

    df = spark.read.format("statestore").option("batchId", batch_id).option("operatorId", operator_id).load(checkpoint)
    row = df.agg(F.count(F.lit(1)).alias("rows"), F.countDistinct(F.col(f"key.`{key_field}`")).alias("keys")).collect()[
        0
    ]
    return {"rows": int(row["rows"]), "keys": int(row["keys"])}
