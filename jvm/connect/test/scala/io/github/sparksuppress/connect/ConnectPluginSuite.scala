package io.github.sparksuppress.connect

import scala.jdk.CollectionConverters._

import org.apache.spark.connect.{proto => sparkproto}
import org.apache.spark.sql.connect.plugin.{ExpressionPlugin, RelationPlugin}
import org.scalatest.funsuite.AnyFunSuite
import org.sparkproject.connect.protobuf.{Any => ProtoAny, ByteString}

import io.github.sparksuppress.RuntimeCompatibility
import io.github.sparksuppress.connect.proto.{
  Aggregate, AggregateWindowed, Connect, JoinVersioned, Metrics, StringFold, Suppress
}

/**
 * The plugins' handling of messages that never reach the planner (the rest runs end to end in tests/test_connect.py).
 */
class ConnectPluginSuite extends AnyFunSuite {

  test("another plugin's extension passes through both plugins untouched") {
    // A Spark message packed as an extension stands in for any message of another plugin.
    val foreign = ProtoAny.pack(sparkproto.Range.newBuilder().setEnd(3).build())
    assert(SparkSuppressRelations.transform(foreign, null).isEmpty)
    assert(StringFoldExpressions.transform(foreign, null).isEmpty)
  }

  test("a client of another version is refused before anything is planned, naming both versions") {
    val message = Suppress.newBuilder().setInput(ByteString.EMPTY).setClientVersion("9.9.9").build()
    val e = intercept[IllegalArgumentException](SparkSuppressRelations.transform(ProtoAny.pack(message), null))
    assert(e.getMessage.startsWith(ConnectSupport.VersionMismatchPrefix))
    assert(e.getMessage.contains(
      s"the Python package is version 9.9.9 but the Spark Connect server runs the spark-suppress jar version " +
        s"${RuntimeCompatibility.libraryVersion}"
    ))
    def minor(v: String) = v.split('.').take(2).mkString(".")
    val line = s"${minor(org.apache.spark.SPARK_VERSION)}_${minor(scala.util.Properties.versionNumberString)}"
    assert(e.getMessage.contains(s"--jars spark-suppress_$line-9.9.9.jar"), e.getMessage)
  }

  test("a message without client_version is refused before anything is planned, naming the field and the fix") {
    // proto3 cannot tell an absent string from an empty one: both must be refused, for every message with the field.
    val server = RuntimeCompatibility.libraryVersion
    val messages = Seq(
      "Suppress" -> Suppress.newBuilder().setInput(ByteString.EMPTY).setClientVersion("").build(),
      "AggregateWindowed" -> AggregateWindowed.newBuilder().setSpec(ByteString.copyFromUtf8("x")).build(),
      "Aggregate" -> Aggregate.newBuilder().setSpec(ByteString.copyFromUtf8("x")).build(),
      "JoinVersioned" -> JoinVersioned.newBuilder().setSpec(ByteString.copyFromUtf8("x")).build(),
      "Metrics" -> Metrics.newBuilder().addObservationNames("spark_suppress:x#1").build()
    )
    messages.foreach { case (kind, message) =>
      val e = intercept[IllegalArgumentException](SparkSuppressRelations.transform(ProtoAny.pack(message), null))
      assert(e.getMessage.startsWith(s"spark-suppress: the client's $kind message has no client_version"), e.getMessage)
      assert(e.getMessage.contains(s"pip install spark-suppress==$server"), e.getMessage)
    }
  }

  test("the class names servers are configured with (spark_suppress.connect_server_conf) are this line's plugins") {
    val loader = getClass.getClassLoader
    def plugin(name: String) = Class.forName(s"io.github.sparksuppress.connect.$name", false, loader)
    assert(classOf[RelationPlugin].isAssignableFrom(plugin("SparkSuppressRelationPlugin")))
    assert(classOf[ExpressionPlugin].isAssignableFrom(plugin("StringFoldExpressionPlugin")))
  }

  test("the generated messages round-trip on the server's protobuf runtime under the type URL the client packs") {
    val fold = StringFold.newBuilder().setInitial("0").setSeparator("+").build()
    val any = ProtoAny.pack(fold)
    assert(any.getTypeUrl == "type.googleapis.com/spark_suppress.connect.StringFold")
    assert(ProtoAny.parseFrom(any.toByteArray).unpack(classOf[StringFold]) == fold)
  }

  test("no field of the plugin's messages can name a class to load or a file to read: each one is reviewed here") {
    // The review: the bytes fields are Spark's own Relation and Expression messages, which Spark's planner turns into
    // plans exactly as it does a DataFrame the same client builds (a data source, a file it may read: what the client
    // could do without this plugin); spec goes to SpecDecoder, whose messages hold column names, durations and
    // enums (no class, no path; SpecDecoderSuite reviews spec.proto's fields); versions and observation names are
    // compared with the server's. A field added to connect.proto fails here until it is reviewed the same way.
    val reviewed = Map(
      "Suppress" -> Seq("input: BYTES", "client_version: STRING", "spec: BYTES"),
      "AggregateWindowed" -> Seq(
        "input: BYTES",
        "repeated aggregations: BYTES",
        "client_version: STRING",
        "spec: BYTES"
      ),
      "Aggregate" -> Seq("input: BYTES", "repeated aggregations: BYTES", "client_version: STRING", "spec: BYTES"),
      "JoinVersioned" -> Seq(
        "stream: BYTES",
        "table: BYTES",
        "initial_versions: BYTES",
        "client_version: STRING",
        "spec: BYTES"
      ),
      "StringFold" -> Seq("column: BYTES", "initial: STRING", "separator: STRING"),
      "Metrics" -> Seq("repeated observation_names: STRING", "client_version: STRING")
    )
    val declared = Connect.getDescriptor.getMessageTypes.asScala.map { m =>
      m.getName -> m.getFields.asScala.map(f => s"${if (f.isRepeated) "repeated " else ""}${f.getName}: ${f.getType}")
        .toSeq
    }.toMap
    assert(declared == reviewed)
  }
}
