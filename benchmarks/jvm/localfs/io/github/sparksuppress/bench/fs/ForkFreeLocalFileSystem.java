package io.github.sparksuppress.bench.fs;

import org.apache.hadoop.fs.LocalFileSystem;

/** Hadoop's checksummed local file system ({@code fs.file.impl}) over {@link ForkFreeRawLocalFileSystem}. */
public class ForkFreeLocalFileSystem extends LocalFileSystem {
  public ForkFreeLocalFileSystem() {
    super(new ForkFreeRawLocalFileSystem());
  }
}
