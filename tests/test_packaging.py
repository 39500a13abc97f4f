"""The package, the bundled jar, and the errors a user meets when the jar is missing or mismatched."""

import os

import pytest

import spark_suppress as ss
from spark_suppress import _jvm

from conftest import ROOT, run_python


def test_version_comes_from_the_single_version_file():
    with open(os.path.join(ROOT, "VERSION")) as f:
        assert ss.__version__ == f.read().strip()


def test_jar_path_points_at_the_bundled_jar():
    path = ss.jar_path()
    assert os.path.isfile(path)
    assert path.endswith(f"spark-suppress_2.13-{ss.__version__}.jar")


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
    monkeypatch.setattr(_jvm, "__version__", "9.9.9")
    monkeypatch.setattr(_jvm, "_checked_gateways", set())
    with pytest.raises(ss.VersionMismatchError, match=r"jar on the JVM classpath is version .* Python package is version 9\.9\.9"):
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
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    # setuptools >= 77 reads an SPDX string; the older license table draws a deprecation block on every build.
    assert "project.license" not in result.stdout + result.stderr
    (wheel,) = tmp_path.glob("spark_suppress-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        metadata = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert f"spark_suppress/jars/spark-suppress_2.13-{ss.__version__}.jar" in names
    assert "License-Expression: Apache-2.0" in metadata.splitlines()
