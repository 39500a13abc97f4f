"""spark-submit on a local-cluster: a standalone master and two workers whose executors are separate JVMs.

The application is a plain Python script that imports spark_suppress and gets the jar only through --jars: if the
jar did not reach the executors, the state functions (which run there) could not be loaded.
"""

import os

from conftest import SCRIPTS, python_env, result_of, run, spark_submit


def test_spark_submit_on_a_local_cluster_runs_suppress_and_the_join(jar, tmp_path):
    proc = run(
        [
            spark_submit(),
            "--master",
            "local-cluster[2,1,1024]",
            "--jars",
            jar,
            "--conf",
            "spark.executor.memory=1024m",
            os.path.join(SCRIPTS, "pipeline.py"),
            str(tmp_path / "work"),
        ],
        timeout=900,
        env_extra=python_env(),
    )
    result = result_of(proc)
    assert result["master"] == "local-cluster[2,1,1024]"
    assert len(result["executors"]) == 3, f"the driver and two executors: {result['executors']}"
    assert result["suppress"]["got"] == result["suppress"]["expected"]
    assert result["aggregate"]["got"] == result["aggregate"]["expected"]
    assert result["join"]["got"] == result["join"]["expected"]
    assert result["ok"] and proc.returncode == 0
