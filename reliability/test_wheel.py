"""The wheel (as `make wheel` builds it) installs into a fresh virtual environment and runs from there."""

import os
import shutil
import subprocess
import sys

from conftest import BUNDLED_JAR, ROOT, SCRIPTS, cached_pyspark_wheel, result_of, run


def test_the_wheel_installs_into_a_fresh_venv_and_runs_the_demo_and_a_pipeline(jar, tmp_path):
    # `make wheel`: the jar bundled into the package, then pip wheel of ./python (no build isolation).
    os.makedirs(os.path.dirname(BUNDLED_JAR), exist_ok=True)
    shutil.copyfile(jar, BUNDLED_JAR)
    dist = tmp_path / "dist"
    build = run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist), "./python"],
        timeout=600,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    wheels = list(dist.glob("spark_suppress-*.whl"))
    assert len(wheels) == 1, wheels
    with __import__("zipfile").ZipFile(wheels[0]) as z:
        names = z.namelist()
    assert f"spark_suppress/jars/{os.path.basename(jar)}" in names, "the jar is inside the wheel"
    assert all(n.startswith(("spark_suppress/", "spark_suppress-")) for n in names), "only the package: no test jars"
    assert "spark_suppress/demo.py" not in names, "the demo is an example (examples/demo.py), not the package"

    venv = tmp_path / "venv"
    created = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True, timeout=300)
    assert created.returncode == 0, created.stderr
    python = str(venv / "bin" / "python")
    # Nothing of the source tree on the path, for pip too: with the caller's PYTHONPATH on python/ (a worktree's
    # tests), pip found the package's build metadata there and installed nothing ("already satisfied").
    outside = {"PYTHONPATH": "", "PYSPARK_PYTHON": python}
    pyspark = cached_pyspark_wheel() or "pyspark==4.3.0"
    installed = run([python, "-m", "pip", "install", "-q", pyspark, str(wheels[0])], timeout=900, env_extra=outside)
    assert installed.returncode == 0, installed.stderr[-3000:]

    # Run from outside the source tree, so that spark_suppress can only come from the venv: first the demo as a
    # newcomer runs it, then the pipeline that compares its results with expected rows.
    demo = run([python, os.path.join(ROOT, "examples", "demo.py")], timeout=900, cwd=str(tmp_path), env_extra=outside)
    assert demo.returncode == 0, f"stdout:\n{demo.stdout[-3000:]}\nstderr:\n{demo.stderr[-6000:]}"
    for section in (
        "1. Alerting on final results",
        "2. User sessions",
        "3. Rate limiting",
        "4. Orders joined",
        "demo finished in",
    ):
        assert section in demo.stdout, demo.stdout[-3000:]

    proc = run(
        [python, os.path.join(SCRIPTS, "pipeline.py"), str(tmp_path / "work"), "--master", "local[2]"],
        timeout=900,
        cwd=str(tmp_path),
        env_extra=outside,
    )
    result = result_of(proc)
    assert result["spark_suppress_file"].startswith(str(venv)), result["spark_suppress_file"]
    assert result["ok"], result
    assert ROOT not in result["spark_suppress_file"]
