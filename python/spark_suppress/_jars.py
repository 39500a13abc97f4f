"""The bundled jars and the settings that put one on a session or a Spark Connect server.

A leaf of the package: both transports (``_jvm`` for py4j, ``_connect`` for Spark Connect) read the version, the
jar and the plugin names from here, and nothing here reaches a transport.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Dict, Optional

from .errors import JarNotFoundError, UnsupportedSparkError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_PACKAGE_DIR = Path(__file__).resolve().parent
__version__ = (_PACKAGE_DIR / "VERSION").read_text().strip()

RELATION_PLUGIN = "io.github.sparksuppress.connect.SparkSuppressRelationPlugin"
EXPRESSION_PLUGIN = "io.github.sparksuppress.connect.StringFoldExpressionPlugin"
RELATION_SETTING = "spark.connect.extensions.relation.classes"
EXPRESSION_SETTING = "spark.connect.extensions.expression.classes"
# The session function spark-suppress's aggregations register and evaluate by arrival (Scala: api.Latest).
LATEST_FUNCTION = "spark_suppress_latest"

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
    jar = _PACKAGE_DIR / "jars" / jar_name(line, scala)
    if not jar.is_file():
        make = f"make jar SPARK={line}" + (f" SCALA={scala}" if scala != SUPPORTED_LINES[line][0] else "")
        raise JarNotFoundError(
            f"the spark-suppress jar for Spark {line} (Scala {scala}) is not bundled at {jar}. In a source checkout "
            f"run `{make}` (or `make jars` for every line); otherwise install the spark-suppress wheel, which "
            "contains every line's jar."
        )
    return str(jar)


def jar_name(line: str, scala: str) -> str:
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


def connect_server_conf(spark_version: Optional[str] = None, scala_version: Optional[str] = None) -> Dict[str, str]:
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

    Examples
    --------
    >>> import spark_suppress as ss
    >>> conf = ss.connect_server_conf(spark_version="4.0.1")  # doctest: +SKIP
    >>> " ".join(f"--conf {k}={v}" for k, v in conf.items() if k != "spark.jars")  # doctest: +SKIP
    '--conf spark.connect.extensions.relation.classes=io.github.sparksuppress.connect.SparkSuppressRelationPlugin ...'
    """
    line, scala = spark_line(spark_version, scala_version)
    if (line, scala) == ("3.5", "2.13"):
        raise UnsupportedSparkError(
            "spark-suppress has no Spark Connect plugin for Spark 3.5 on Scala 2.13 (docs/connect.md): run the "
            "operators through a classic session (py4j), or a Connect server of Spark 3.5 on Scala 2.12 or of 4.0+."
        )
    return {
        "spark.jars": jar_path(spark_version, scala_version),
        RELATION_SETTING: RELATION_PLUGIN,
        EXPRESSION_SETTING: EXPRESSION_PLUGIN,
    }


def jar_hint() -> str:
    """The bundled jar's path for error messages, or its name pattern where there is none."""
    try:
        return jar_path()
    except (JarNotFoundError, UnsupportedSparkError):
        return "spark-suppress_<spark line>_<scala version>-" + __version__ + ".jar"
