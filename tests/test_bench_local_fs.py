"""benchmarks/harness/local_fs.py: the fork-free local file system does what Hadoop's does, without child processes.

The file operations run in a fresh JVM (a local SparkSession with the run's settings), once on Hadoop's own local file
system and once on the fork-free one, through the two APIs Spark writes with (FileSystem and FileContext). The child
processes are counted by the JVM's flight recorder (its jdk.ProcessStart events, as in benchmarks/README.md), so that
the test also pins what the option is for: if a Hadoop release stops starting processes, the probe on Hadoop's own
file system fails.
"""

import json
import os
import sys

import pytest
from conftest import run_python

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

from harness import local_fs  # noqa: E402

FILES = 20  # each: a create with a permission, a rename, a permission change

CHECK = r"""
import json, os, sys, tempfile
sys.path.insert(0, "benchmarks")
from harness import local_fs
from pyspark.sql import SparkSession

builder = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
for k, v in local_fs.conf().items():
    builder = builder.config(k, v)
spark = builder.getOrCreate()
jvm, gw = spark._jvm, spark.sparkContext._gateway
hadoop = jvm.org.apache.hadoop

def processes_started(action):
    # The JVM's own record of the processes it starts (jdk.ProcessStart), not the machine's: other work may run.
    recording = jvm.jdk.jfr.Recording()
    recording.enable("jdk.ProcessStart")
    recording.start()
    action()
    recording.stop()
    path = jvm.java.io.File(tempfile.mkdtemp(prefix="localfs-jfr-"), "processes.jfr").toPath()
    recording.dump(path)
    recording.close()
    return jvm.jdk.jfr.consumer.RecordingFile.readAllEvents(path).size()

def run(fs_conf, name, files):
    root = tempfile.mkdtemp(prefix="localfs-" + name + "-")
    uri = jvm.java.net.URI("file:///")
    fs = hadoop.fs.FileSystem.newInstance(uri, fs_conf)
    fc = hadoop.fs.FileContext.getFileContext(uri, fs_conf)
    perm = hadoop.fs.permission.FsPermission
    overwrite = gw.new_array(hadoop.fs.Options.Rename, 1)
    overwrite[0] = hadoop.fs.Options.Rename.OVERWRITE
    no_opts = gw.new_array(hadoop.fs.Options.CreateOpts, 0)
    flags = jvm.java.util.EnumSet.of(hadoop.fs.CreateFlag.CREATE, hadoop.fs.CreateFlag.OVERWRITE)
    def write_files():
        for i in range(files):
            tmp = hadoop.fs.Path(f"{root}/tmp-{i}")
            out = fs.create(tmp, perm(0o640), True, 4096, 1, 1 << 20, None)
            out.write(bytearray(f"file {i}".encode()))
            out.close()
            fs.rename(tmp, hadoop.fs.Path(f"{root}/fs-{i}"))
            fs.setPermission(hadoop.fs.Path(f"{root}/fs-{i}"), perm(0o600))
            ctmp = hadoop.fs.Path(f"{root}/ctmp-{i}")
            out = fc.create(ctmp, flags, no_opts)
            out.write(bytearray(f"context {i}".encode()))
            out.close()
            fc.rename(ctmp, hadoop.fs.Path(f"{root}/fc-{i}"), overwrite)

    created = processes_started(write_files)
    os.symlink(f"{root}/fs-0", f"{root}/link")
    link = fs.getFileLinkStatus(hadoop.fs.Path(f"{root}/link"))
    try:
        fs.getFileLinkStatus(hadoop.fs.Path(f"{root}/missing"))
        missing = "found"
    except Exception as e:
        missing = "FileNotFoundException" if "FileNotFoundException" in str(e) else str(e)
    return {
        # The FileSystem API's class may be a subclass from another jar (Hive's, for file:); its raw one is Hadoop's.
        "classes": [fs.getRawFileSystem().getClass().getName(), fc.getDefaultFileSystem().getClass().getName()],
        "processes": created,
        "files": sorted(f for f in os.listdir(root) if not f.startswith(".")),
        "contents": [open(f"{root}/{api}-{i}").read() for api in ("fs", "fc") for i in range(files)],
        "modes": [oct(os.stat(f"{root}/fs-{i}").st_mode & 0o777) for i in range(files)],
        "checksums": sorted(f for f in os.listdir(root) if f.endswith(".crc")),
        "link": [link.isSymlink(), str(link.getSymlink())],
        "missing": missing,
    }

stock = run(hadoop.conf.Configuration(), "hadoop", FILES_)
configured = run(spark.sparkContext._jsc.hadoopConfiguration(), "configured", FILES_)
print("RESULT " + json.dumps({"hadoop": stock, "configured": configured}))
spark.stop()
"""


@pytest.fixture(scope="module")
def results():
    proc = run_python(CHECK.replace("FILES_", str(FILES)), env_extra={local_fs.ENV: local_fs.FORK_FREE})
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    return json.loads(lines[-1][len("RESULT ") :])


def test_hadoops_own_local_file_system_starts_child_processes_for_creates_and_renames(results):
    # The probe: each file here started 14 processes on Hadoop 3.5.0 (chmod per create, readlink per rename path).
    assert results["hadoop"]["classes"] == [
        "org.apache.hadoop.fs.RawLocalFileSystem",
        "org.apache.hadoop.fs.local.LocalFs",
    ]
    assert results["hadoop"]["processes"] >= 4 * FILES


def test_the_fork_free_file_system_is_in_place_and_starts_none(results):
    fork_free = results["configured"]
    assert fork_free["classes"] == [
        f"{local_fs.PACKAGE}.ForkFreeRawLocalFileSystem",
        f"{local_fs.PACKAGE}.ForkFreeLocalFs",
    ]
    assert fork_free["processes"] == 0


def test_the_fork_free_file_system_leaves_the_same_files_as_hadoops(results):
    stock, fork_free = results["hadoop"], results["configured"]
    for key in ("files", "contents", "modes", "checksums", "missing"):
        assert fork_free[key] == stock[key], key
    assert fork_free["modes"] == ["0o600"] * FILES
    assert fork_free["contents"][0] == "file 0" and fork_free["contents"][FILES] == "context 0"
    assert fork_free["missing"] == "FileNotFoundException"
    # A symbolic link is still read as one.
    assert fork_free["link"][0] is True and fork_free["link"][1].endswith("/fs-0")
    assert stock["link"][0] is True


def test_an_unknown_local_file_system_is_refused_naming_the_variable_and_the_choices(monkeypatch):
    monkeypatch.setenv(local_fs.ENV, "nio")
    with pytest.raises(ValueError, match=r"BENCH_LOCAL_FS='nio': use one of forkfree, hadoop \(default forkfree\)"):
        local_fs.conf()
    monkeypatch.setenv(local_fs.ENV, "hadoop")
    assert local_fs.conf() == {}
    monkeypatch.delenv(local_fs.ENV)
    assert local_fs.mode() == "forkfree"
