"""spark-suppress: Kafka Streams' suppress, emit strategies and grace-period stream-table join for Spark.

Start a session with the bundled jar::

    from pyspark.sql import SparkSession
    import spark_suppress as ss
    spark = ss.configure(SparkSession.builder).getOrCreate()
"""

from ._jvm import __version__, configure, jar_path
from .errors import (
    ClassicSessionRequiredError,
    JarNotFoundError,
    SparkSuppressError,
    VersionMismatchError,
)
from .operators import metrics, suppress
# ---- stream-table join (KIP-923 on KIP-889) ----
from .join import join_versioned
# ---- end of stream-table join ----
from .suppressed import BufferConfig, EagerBufferConfig, StrictBufferConfig, Suppressed

# ---- windowed aggregation with emit strategies (KIP-825) ----
from .windowed import aggregate_windowed, string_fold
from .windows import EmitStrategy, SessionWindows, SlidingWindows, TimeWindows

# ---- end of windowed aggregation ----

__all__ = [
    "__version__",
    "configure",
    "jar_path",
    "suppress",
    "metrics",
    # ---- stream-table join ----
    "join_versioned",
    # ---- end of stream-table join ----
    "Suppressed",
    "BufferConfig",
    "EagerBufferConfig",
    "StrictBufferConfig",
    "SparkSuppressError",
    "JarNotFoundError",
    "VersionMismatchError",
    "ClassicSessionRequiredError",
    # windowed aggregation with emit strategies (KIP-825)
    "aggregate_windowed",
    "string_fold",
    "TimeWindows",
    "SlidingWindows",
    "SessionWindows",
    "EmitStrategy",
]
