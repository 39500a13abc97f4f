package io.github.sparksuppress.wire

import scala.jdk.CollectionConverters._

import net.razorvine.pickle.Unpickler
import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.CatalystTypeConverters
import org.apache.spark.sql.execution.python.EvaluatePython
import org.apache.spark.sql.types.StructType

/**
 * A test step's rows as the Python package sends them over py4j: a pickled list of tuples in Spark's internal form
 * (PySpark's `StructType.toInternal`), read with the converter PySpark's own `createDataFrame` uses on the JVM. They
 * used to cross as a DataFrame made by `createDataFrame`, whose rows the facade collected: a Spark job, and a Python
 * worker to re-pickle them, for every step of one or two rows.
 */
private[wire] object PickledRows {

  def decode(pickled: Array[Byte], schema: StructType): Seq[Row] = {
    val fromPython = EvaluatePython.makeFromJava(schema)
    val toRow = CatalystTypeConverters.createToScalaConverter(schema)
    val unpickler = new Unpickler()
    try {
      unpickler.loads(pickled).asInstanceOf[java.util.List[_]].asScala.toList.map { tuple =>
        toRow(fromPython(tuple)).asInstanceOf[Row]
      }
    } finally unpickler.close()
  }
}
