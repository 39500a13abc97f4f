package io.github.sparksuppress.bench.jobs;

import java.io.Serializable;

/**
 * A key's open tumbling windows and their counts, as a Java bean so that Spark's bean encoder stores it as two arrays
 * of longs (the state a hand-written job would keep; no Kryo, no Java serialization).
 */
public final class OpenWindows implements Serializable {
  private long[] starts = new long[0];
  private long[] counts = new long[0];

  public long[] getStarts() {
    return starts;
  }

  public void setStarts(long[] starts) {
    this.starts = starts;
  }

  public long[] getCounts() {
    return counts;
  }

  public void setCounts(long[] counts) {
    this.counts = counts;
  }
}
