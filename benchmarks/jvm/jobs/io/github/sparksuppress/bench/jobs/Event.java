package io.github.sparksuppress.bench.jobs;

import java.io.Serializable;

/**
 * A record as the job reads it: its key and event time in ms. A bean, read by column name, so that the input can keep
 * the watermarked timestamp column (event-time timeouts need it in the plan) without the job deserializing it.
 */
public final class Event implements Serializable {
  private String key;
  private long ms;

  public String getKey() {
    return key;
  }

  public void setKey(String key) {
    this.key = key;
  }

  public long getMs() {
    return ms;
  }

  public void setMs(long ms) {
    this.ms = ms;
  }
}
