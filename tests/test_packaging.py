"""The package, the bundled jar, and the errors a user meets when the jar is missing or mismatched."""

import os

import pytest
from conftest import ROOT, run_python

import spark_suppress as ss
from spark_suppress import _jars, _jvm, _spec


def test_version_comes_from_the_single_version_file():
    with open(os.path.join(ROOT, "VERSION")) as f:
        assert ss.__version__ == f.read().strip()


def _running_line():
    import pyspark

    line = ".".join(pyspark.__version__.split(".")[:2])
    return line, "2.12" if line == "3.5" else "2.13"


def test_jar_path_points_at_the_bundled_jar_of_the_installed_spark_line():
    path = ss.jar_path()
    assert os.path.isfile(path)
    line, scala = _running_line()
    assert path.endswith(f"spark-suppress_{line}_{scala}-{ss.__version__}.jar")


def test_the_supported_lines_are_the_builds():
    with open(os.path.join(ROOT, "project", "spark-lines.tsv")) as f:
        rows = [r.split() for r in f if r.strip() and not r.startswith("#")]
    built = {}
    for line, scala, *_ in rows:
        built.setdefault(line, []).append(".".join(scala.split(".")[:2]))
    assert {line: tuple(scalas) for line, scalas in built.items()} == _jars.SUPPORTED_LINES


@pytest.mark.parametrize(
    "version, scala, name",
    [
        ("3.5.2", None, "3.5_2.12"),
        ("3.5.0", "2.13", "3.5_2.13"),
        ("4.0.0", None, "4.0_2.13"),
        ("4.1", None, "4.1_2.13"),
        ("4.2.1", "2.13.18", "4.2_2.13"),
        ("4.3.0", None, "4.3_2.13"),
    ],
)
def test_each_spark_line_gets_its_own_jar(version, scala, name):
    assert _jars.spark_line(version, scala) == tuple(name.split("_"))
    expected = os.path.join(os.path.dirname(_jars.__file__), "jars", f"spark-suppress_{name}-{ss.__version__}.jar")
    if os.path.isfile(expected):
        assert ss.jar_path(version, scala) == expected
    else:  # a source checkout where only some lines are built: the error says how to build this one
        with pytest.raises(ss.JarNotFoundError, match=r"make jar SPARK=" + name.split("_")[0]):
            ss.jar_path(version, scala)


@pytest.mark.parametrize(
    "version, scala, words",
    [
        ("3.4.1", None, r"no build for Spark 3\.4\.1: it supports the Spark lines 3\.5, 4\.0, 4\.1, 4\.2, 4\.3"),
        ("5.0.0", None, r"no build for Spark 5\.0\.0"),
        ("4.0.0", "2.12", r"built for Spark 4\.0 on Scala 2\.13, not Scala 2\.12"),
    ],
)
def test_an_unsupported_spark_line_is_refused_with_the_supported_ones(version, scala, words):
    with pytest.raises(ss.UnsupportedSparkError, match=words):
        ss.jar_path(version, scala)


def test_connect_server_conf_refuses_the_line_without_a_connect_plugin():
    with pytest.raises(ss.UnsupportedSparkError, match="no Spark Connect plugin for Spark 3.5 on Scala 2.13"):
        ss.connect_server_conf("3.5.2", "2.13")


def test_configure_appends_to_existing_jars():
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.config("spark.jars", "/opt/other.jar")
    ss.configure(builder)
    assert builder._options["spark.jars"] == f"/opt/other.jar,{ss.jar_path()}"
    ss.configure(builder)  # idempotent
    assert builder._options["spark.jars"].count(ss.jar_path()) == 1
    builder._options.pop("spark.jars")


def test_configured_session_sees_the_jar_of_the_same_version(spark):
    facade = _jvm.facade(spark)
    assert facade.version() == ss.__version__


def test_version_mismatch_is_reported(spark, monkeypatch):
    monkeypatch.setattr(_jars, "__version__", "9.9.9")
    monkeypatch.setattr(_jvm, "_facades", {})
    with pytest.raises(
        ss.VersionMismatchError, match=r"jar on the JVM classpath is version .* Python package is version 9\.9\.9"
    ):
        _jvm.facade(spark)


def test_missing_jar_gives_the_fix_not_a_py4j_error():
    result = run_python(
        "from pyspark.sql import SparkSession\n"
        "import spark_suppress as ss\n"
        "from spark_suppress import _jvm\n"
        "spark = SparkSession.builder.master('local[1]').config('spark.ui.enabled','false').getOrCreate()\n"
        "try:\n"
        "    _jvm.facade(spark)\n"
        "except ss.JarNotFoundError as e:\n"
        "    print('ERR:' + str(e))\n"
    )
    assert "ERR:" in result.stdout, result.stderr[-3000:]
    message = result.stdout.split("ERR:", 1)[1]
    assert "spark_suppress.configure(SparkSession.builder)" in message
    assert "--jars" in message
    assert "JavaPackage" not in message


def test_wheel_bundles_the_jar_and_declares_its_license_without_deprecation_warnings(tmp_path):
    import subprocess
    import sys
    import zipfile

    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path), "./python"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    # setuptools >= 77 reads an SPDX string; the older license table draws a deprecation block on every build.
    assert "project.license" not in result.stdout + result.stderr
    (wheel,) = tmp_path.glob("spark_suppress-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        metadata = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    line, scala = _running_line()
    assert f"spark_suppress/jars/spark-suppress_{line}_{scala}-{ss.__version__}.jar" in names
    assert "License-Expression: Apache-2.0" in metadata.splitlines()
    # The demo is an example beside the package (examples/, `make demo`); style tools are the tests', not users'.
    modules = {n for n in names if n.endswith(".py")}
    assert "spark_suppress/demo.py" not in modules
    assert modules >= {f"spark_suppress/{m}.py" for m in ("suppress", "aggregate", "join", "testing", "metrics")}
    # The one dependency: the protobuf runtime of the spec messages (classic PySpark does not bring it; _spec.py).
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    assert requires == [f"Requires-Dist: {_spec.PROTOBUF_REQUIREMENT}"]
    assert "spark_suppress/proto/spec_pb2.py" in modules
