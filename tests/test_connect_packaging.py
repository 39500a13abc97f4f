"""What the Connect plugin adds to the jar, and what it must not add."""

import zipfile

import spark_suppress as ss


def test_the_jar_holds_the_plugins_and_messages_but_no_protobuf_runtime_or_spark_connect_classes():
    names = zipfile.ZipFile(ss.jar_path()).namelist()
    assert "io/github/sparksuppress/connect/SparkSuppressRelationPlugin.class" in names
    assert "io/github/sparksuppress/connect/StringFoldExpressionPlugin.class" in names
    assert "io/github/sparksuppress/connect/proto/Suppress.class" in names
    assert "io/github/sparksuppress/wire/proto/SuppressSpec.class" in names
    leaked = [
        n
        for n in names
        if n.startswith(
            (
                "com/google/",
                "org/sparkproject/",
                "org/apache/spark/connect/",
                "org/apache/spark/sql/connect/",
                "io/grpc/",
            )
        )
    ]
    assert leaked == []


def test_the_python_messages_import_without_classic_pyspark():
    from spark_suppress.proto import connect_pb2, spec_pb2

    spec = spec_pb2.AggregateSpec(key=["k"], timestamp="ts").SerializeToString()
    message = connect_pb2.Suppress(input=b"\x01", spec=spec, client_version=ss.__version__)
    assert connect_pb2.Suppress.FromString(message.SerializeToString()) == message
