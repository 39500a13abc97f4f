"""Finding the bundled jar, putting it on a session, and reaching the one JVM facade."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ClassicSessionRequiredError, JarNotFoundError, UnsupportedSparkError, VersionMismatchError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_PACKAGE_DIR = Path(__file__).resolve().parent
__version__ = (_PACKAGE_DIR / "VERSION").read_text().strip()

FACADE_CLASS = "io.github.sparksuppress.python.PythonFacade"

# The Spark lines with a jar in the wheel, each with the Scala versions it is built for (the first is what that
# line's PySpark on PyPI runs). The build's own table is project/spark-lines.tsv; test_packaging keeps them equal.
SUPPORTED_LINES = {
    "3.5": ("2.12", "2.13"),
    "4.0": ("2.13",),
    "4.1": ("2.13",),
    "4.2": ("2.13",),
    "4.3": ("2.13",),
}


def _installed_spark() -> tuple[str, str | None]:
    """The installed PySpark's version and, where it bundles Spark's jars, the Scala version of those jars."""
    try:
        import pyspark
    except ImportError:
        raise JarNotFoundError(
            "PySpark is not installed, so spark-suppress cannot tell which Spark line's jar to use: install pyspark "
            "(or pyspark-client), or pass spark_version=, e.g. jar_path(spark_version='4.0')."
        ) from None
    jars = Path(pyspark.__file__).resolve().parent / "jars"
    libraries = sorted(jars.glob("scala-library-*.jar")) if jars.is_dir() else []
    scala = ".".join(libraries[0].name[len("scala-library-") :].split(".")[:2]) if libraries else None
    return pyspark.__version__, scala


def spark_line(spark_version: str | None = None, scala_version: str | None = None) -> tuple[str, str]:
    """The (Spark line, Scala version) whose jar runs on ``spark_version`` (default: the installed PySpark's).

    Raises
    ------
    UnsupportedSparkError
        If no jar of this package is built for that Spark line or Scala version.
    """
    installed_scala = None
    if spark_version is None:
        spark_version, installed_scala = _installed_spark()
    line = ".".join(str(spark_version).split(".")[:2])
    if line not in SUPPORTED_LINES:
        supported = ", ".join(SUPPORTED_LINES)
        raise UnsupportedSparkError(
            f"spark-suppress {__version__} has no build for Spark {spark_version}: it supports the Spark lines "
            f"{supported}. Run a supported Spark, or pass spark_version= for the Spark your cluster runs."
        )
    scalas = SUPPORTED_LINES[line]
    scala = ".".join(str(scala_version or installed_scala or scalas[0]).split(".")[:2])
    if scala not in scalas:
        raise UnsupportedSparkError(
            f"spark-suppress {__version__} is built for Spark {line} on Scala {' and '.join(scalas)}, not Scala "
            f"{scala}. Run a Spark {line} build on Scala {scalas[0]}."
        )
    return line, scala


def jar_path(spark_version: str | None = None, scala_version: str | None = None) -> str:
    """Absolute path of the bundled spark-suppress jar for a Spark line (for ``spark-submit --jars``).

    Parameters
    ----------
    spark_version : str, optional
        The Spark version the jar must run on, e.g. ``"3.5.2"`` or ``"4.0"``. Default: the installed PySpark's.
    scala_version : str, optional
        Its Scala version, e.g. ``"2.13"``. Default: the Scala of the installed PySpark's jars, else the one the
        line's PySpark runs (2.12 for Spark 3.5, 2.13 from 4.0).

    Returns
    -------
    str
        The path of ``spark-suppress_<line>_<scala>-<version>.jar`` inside this package.

    Raises
    ------
    UnsupportedSparkError
        If the Spark line or Scala version is not one this package is built for.
    JarNotFoundError
        If the jar is not bundled (a source checkout where it was not built).

    Examples
    --------
    >>> import spark_suppress as ss
    >>> ss.jar_path()  # doctest: +SKIP
    '.../spark_suppress/jars/spark-suppress_4.3_2.13-0.1.0.jar'
    >>> ss.jar_path(spark_version="3.5.2", scala_version="2.13")  # doctest: +SKIP
    '.../spark_suppress/jars/spark-suppress_3.5_2.13-0.1.0.jar'
    """
    line, scala = spark_line(spark_version, scala_version)
    jar = _PACKAGE_DIR / "jars" / _jar_name(line, scala)
    if not jar.is_file():
        make = f"make jar SPARK={line}" + (f" SCALA={scala}" if scala != SUPPORTED_LINES[line][0] else "")
        raise JarNotFoundError(
            f"the spark-suppress jar for Spark {line} (Scala {scala}) is not bundled at {jar}. In a source checkout "
            f"run `{make}` (or `make jars` for every line); otherwise install the spark-suppress wheel, which "
            "contains every line's jar."
        )
    return str(jar)


def _jar_name(line: str, scala: str) -> str:
    return f"spark-suppress_{line}_{scala}-{__version__}.jar"


def configure(builder: "SparkSession.Builder") -> "SparkSession.Builder":
    """Return ``builder`` with the bundled jar of the installed PySpark's line added to ``spark.jars``.

    Jars already listed are kept. For a local Spark Connect server (``builder.remote("local[2]")``) it also
    registers spark-suppress's Connect plugins, so the server the builder starts runs the operators; on Spark 3.5,
    whose Connect server is a package of its own, it adds ``org.apache.spark:spark-connect_2.12:<version>`` to
    ``spark.jars.packages`` unless ``spark.jars`` or ``spark.jars.packages`` already names a spark-connect jar. A
    remote server (``sc://...``) is configured where it starts (:func:`connect_server_conf`); its builder is
    returned unchanged.

    Call it before the first SparkSession of the process is created: a JVM that is already running does not
    pick up new jars.

    Parameters
    ----------
    builder : pyspark.sql.SparkSession.Builder
        The builder of the session to create.

    Returns
    -------
    pyspark.sql.SparkSession.Builder
        The same builder, configured.

    Raises
    ------
    UnsupportedSparkError
        If the installed PySpark's line is not supported.
    JarNotFoundError
        If its jar is not bundled.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> import spark_suppress as ss
    >>> spark = ss.configure(SparkSession.builder).getOrCreate()  # doctest: +SKIP
    """
    options = getattr(builder, "_options", {})
    remote = options.get("spark.remote")
    if remote is not None and not str(remote).startswith("local"):
        return builder
    settings = connect_server_conf() if remote is not None else {"spark.jars": jar_path()}
    if remote is not None:
        version, scala = _installed_spark()
        named = str(options.get("spark.jars", "")) + "," + str(options.get("spark.jars.packages", ""))
        if spark_line(version, scala)[0] == "3.5" and "spark-connect_" not in named:
            settings["spark.jars.packages"] = f"org.apache.spark:spark-connect_{scala or '2.12'}:{version}"
    for key, value in settings.items():
        existing = [v for v in str(options.get(key, "")).split(",") if v]
        if value not in existing:
            existing.append(value)
        builder = builder.config(key, ",".join(existing))
    return builder


def connect_server_conf(spark_version: str | None = None, scala_version: str | None = None) -> dict:
    """The settings that give a Spark Connect server spark-suppress.

    They are the ``--jars`` and ``--conf`` of ``start-connect-server.sh`` or ``spark-submit``: the bundled jar for
    the server's Spark line, the relation plugin that runs the operators and the expression plugin behind
    :func:`string_fold`. Spark 3.5 ships its Connect server as a package of its own: start a 3.5 server with
    ``--packages org.apache.spark:spark-connect_2.12:<its Spark version>`` as well.

    Parameters
    ----------
    spark_version : str, optional
        The server's Spark version. Default: the installed PySpark's (``pyspark`` or ``pyspark-client``, whose
        version is the server line's when client and server match).
    scala_version : str, optional
        The server's Scala version (default as for :func:`jar_path`).

    Returns
    -------
    dict
        Spark settings, name to value.

    Raises
    ------
    UnsupportedSparkError
        If the server's Spark line is not supported, or is 3.5 on Scala 2.13 (no Connect plugin is built for it).
    JarNotFoundError
        If the jar for that line is not bundled.
    """
    from ._connect import server_conf

    return server_conf(spark_version, scala_version)


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
    except (JarNotFoundError, UnsupportedSparkError):
        return "spark-suppress_<spark line>_<scala version>-" + __version__ + ".jar"


def dataframe_facade(df: "DataFrame") -> Any:
    require_classic(df)
    return facade(df.sparkSession)
