"""spark-suppress: Kafka Streams' suppress, emit strategies and grace-period stream-table join for Spark.

Start a session with the bundled jar::

    from pyspark.sql import SparkSession
    import spark_suppress as ss
    spark = ss.configure(SparkSession.builder).getOrCreate()

or a Spark Connect session whose server has the jar and plugin (``ss.connect_server_conf()``; for a local server
``ss.configure(SparkSession.builder.remote("local[2]")).getOrCreate()`` sets both): the same functions work on it.
"""

from ._jars import __version__, configure, connect_server_conf, jar_path
from .aggregate import (
    EmitStrategy,
    SessionWindows,
    SlidingWindows,
    TimeWindows,
    aggregate,
    aggregate_windowed,
    latest,
    string_fold,
)
from .errors import (
    ClassicSessionRequiredError,
    ConnectPluginMissingError,
    JarNotFoundError,
    SparkSuppressError,
    UnsupportedSparkError,
    VersionMismatchError,
)
from .join import join_versioned
from .metrics import metrics
from .state_check import explain_state_failure
from .suppress import BufferConfig, EagerBufferConfig, StrictBufferConfig, Suppressed, suppress

__all__ = [
    "__version__",
    "configure",
    "connect_server_conf",
    "jar_path",
    # operators
    "suppress",
    "aggregate_windowed",
    "aggregate",
    "join_versioned",
    "metrics",
    "explain_state_failure",
    # configuration
    "Suppressed",
    "BufferConfig",
    "EagerBufferConfig",
    "StrictBufferConfig",
    "TimeWindows",
    "SlidingWindows",
    "SessionWindows",
    "EmitStrategy",
    "string_fold",
    "latest",
    # errors
    "SparkSuppressError",
    "JarNotFoundError",
    "VersionMismatchError",
    "ClassicSessionRequiredError",
    "ConnectPluginMissingError",
    "UnsupportedSparkError",
]
