"""Finding the bundled jar, putting it on a session, and reaching the one JVM facade."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ClassicSessionRequiredError, JarNotFoundError, VersionMismatchError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_PACKAGE_DIR = Path(__file__).resolve().parent
__version__ = (_PACKAGE_DIR / "VERSION").read_text().strip()

SCALA_BINARY_VERSION = "2.13"
FACADE_CLASS = "io.github.sparksuppress.python.PythonFacade"


def jar_path() -> str:
    """Absolute path of the spark-suppress jar bundled with this package (for ``spark-submit --jars``)."""
    jar = _PACKAGE_DIR / "jars" / f"spark-suppress_{SCALA_BINARY_VERSION}-{__version__}.jar"
    if not jar.is_file():
        raise JarNotFoundError(
            f"the spark-suppress jar is not bundled at {jar}. In a source checkout run `make jar`; "
            "otherwise install the spark-suppress wheel, which contains it."
        )
    return str(jar)


def configure(builder: "SparkSession.Builder") -> "SparkSession.Builder":
    """Return ``builder`` with the bundled jar added to ``spark.jars`` (keeping any jars already listed).

    For a local Spark Connect server (``builder.remote("local[2]")``) it also registers spark-suppress's Connect
    plugins, so the server the builder starts runs the operators. A remote server (``sc://...``) is configured
    where it starts (:func:`connect_server_conf`); its builder is returned unchanged.

    Call it before the first SparkSession of the process is created: a JVM that is already running does not
    pick up new jars.
    """
    options = getattr(builder, "_options", {})
    remote = options.get("spark.remote")
    if remote is not None and not str(remote).startswith("local"):
        return builder
    settings = connect_server_conf() if remote is not None else {"spark.jars": jar_path()}
    for key, value in settings.items():
        existing = [v for v in str(options.get(key, "")).split(",") if v]
        if value not in existing:
            existing.append(value)
        builder = builder.config(key, ",".join(existing))
    return builder


def connect_server_conf() -> dict:
    """The settings that give a Spark Connect server spark-suppress (``--jars`` and ``--conf`` of
    ``start-connect-server.sh`` or ``spark-submit``): the bundled jar, the relation plugin that runs the operators
    and the expression plugin behind :func:`string_fold`."""
    from ._connect import server_conf

    return server_conf()


def _is_connect(obj: Any) -> bool:
    module = type(obj).__module__
    return module.startswith("pyspark.sql.connect")


def require_classic(obj: Any) -> None:
    """Raise a clear error for Spark Connect sessions and DataFrames, which have no JVM in this process."""
    if _is_connect(obj):
        raise ClassicSessionRequiredError(
            "this spark_suppress call needs a classic PySpark session (it reaches the JVM through py4j, and a "
            "Spark Connect client has no JVM). The operators, metrics and TestDriver also work on Spark Connect "
            "sessions whose server has spark-suppress's plugin (docs/connect.md); for py4j create the session with "
            "spark_suppress.configure(SparkSession.builder).getOrCreate() without .remote(...) or SPARK_REMOTE."
        )


_checked_gateways: set[int] = set()


def facade(spark: "SparkSession") -> Any:
    """The JVM facade object for ``spark``, after checking that the jar is there and has this version."""
    require_classic(spark)
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    gateway_id = id(spark.sparkContext._gateway)
    if gateway_id not in _checked_gateways:
        loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        try:
            jvm.java.lang.Class.forName(FACADE_CLASS, True, loader)
        except Exception as e:  # py4j raises Py4JJavaError wrapping ClassNotFoundException
            if "ClassNotFoundException" not in str(e) and "NoClassDefFoundError" not in str(e):
                raise
            raise JarNotFoundError(
                "spark-suppress's classes are not on this Spark session's JVM classpath. Start the session with "
                "the jar: spark = spark_suppress.configure(SparkSession.builder).getOrCreate() (before any other "
                "SparkSession is created in this process), or spark-submit --jars "
                f"{_jar_hint()}, or set spark.jars to that path."
            ) from None
        jar_version = _facade_class(jvm).version()
        if jar_version != __version__:
            raise VersionMismatchError(
                f"the spark-suppress jar on the JVM classpath is version {jar_version}, but the Python package "
                f"is version {__version__}. Put the matching jar on the classpath (spark_suppress.jar_path() "
                "gives the bundled one) or install the spark-suppress wheel of the jar's version."
            )
        _facade_class(jvm).checkRuntime()
        _checked_gateways.add(gateway_id)
    return _facade_class(jvm)


def _facade_class(jvm: Any) -> Any:
    return jvm.io.github.sparksuppress.python.PythonFacade


def _jar_hint() -> str:
    try:
        return jar_path()
    except JarNotFoundError:
        return f"spark-suppress_{SCALA_BINARY_VERSION}-{__version__}.jar"


def dataframe_facade(df: "DataFrame") -> Any:
    require_classic(df)
    return facade(df.sparkSession)
