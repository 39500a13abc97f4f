"""Jars of the benchmarks' small Java sources, compiled with ``javac`` against the running PySpark's own jars (each
Spark line its own Spark and Hadoop) and cached in the work directory, so that nothing of them reaches the project's
build, its jar or its wheel."""

from __future__ import annotations

import glob
import hashlib
import os
import subprocess
import tempfile
import zipfile


def _sources(directory: str):
    return sorted(glob.glob(os.path.join(directory, "**", "*.java"), recursive=True))


def jar(sources: str, name: str, work_dir: str) -> str:
    """The jar of every Java file under ``sources`` for the running PySpark, compiled once per source and PySpark
    version: ``<work_dir>/<sources' folder name>/<name>-<PySpark version>-<digest>.jar``."""
    import pyspark

    spark_jars = os.path.join(os.path.dirname(pyspark.__file__), "jars")
    files = _sources(sources)
    digest = hashlib.sha256(pyspark.__version__.encode())
    for path in files:
        with open(path, "rb") as fh:
            digest.update(fh.read())
    folder = os.path.join(work_dir, os.path.basename(os.path.normpath(sources)))
    out = os.path.join(folder, f"{name}-{pyspark.__version__}-{digest.hexdigest()[:12]}.jar")
    if os.path.exists(out):
        return out
    os.makedirs(folder, exist_ok=True)
    with tempfile.TemporaryDirectory() as classes:
        result = subprocess.run(
            ["javac", "-nowarn", "-d", classes, "-cp", os.path.join(spark_jars, "*"), *files],
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            raise RuntimeError(f"javac could not compile {sources} against {spark_jars}:\n{result.stderr}")
        # A name of its own: several processes (the tests' suites) may compile the same jar at once.
        fd, partial = tempfile.mkstemp(suffix=".tmp", dir=folder)
        os.close(fd)
        with zipfile.ZipFile(partial, "w") as z:
            for path in glob.glob(os.path.join(classes, "**", "*.class"), recursive=True):
                z.write(path, os.path.relpath(path, classes))
        os.replace(partial, out)
    return out
