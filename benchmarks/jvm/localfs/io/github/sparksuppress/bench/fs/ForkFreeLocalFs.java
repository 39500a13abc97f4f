package io.github.sparksuppress.bench.fs;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ChecksumFs;
import org.apache.hadoop.fs.DelegateToFileSystem;
import org.apache.hadoop.fs.FsConstants;
import org.apache.hadoop.fs.FsServerDefaults;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.local.LocalConfigKeys;

/**
 * The same for Hadoop's {@code FileContext} ({@code fs.AbstractFileSystem.file.impl}), through which Spark writes its
 * checkpoint: Hadoop's own {@code LocalFs} builds its raw file system itself, so it cannot be handed another one.
 */
public class ForkFreeLocalFs extends ChecksumFs {
  public ForkFreeLocalFs(URI uri, Configuration conf) throws IOException, URISyntaxException {
    super(new Raw(conf));
  }

  /** What Hadoop's {@code RawLocalFs} is, over {@link ForkFreeRawLocalFileSystem}. */
  static final class Raw extends DelegateToFileSystem {
    Raw(Configuration conf) throws IOException, URISyntaxException {
      super(
          FsConstants.LOCAL_FS_URI,
          new ForkFreeRawLocalFileSystem(),
          conf,
          FsConstants.LOCAL_FS_URI.getScheme(),
          false);
    }

    @Override
    public int getUriDefaultPort() {
      return -1; // no port for file:
    }

    @Override
    public FsServerDefaults getServerDefaults(Path f) throws IOException {
      return LocalConfigKeys.getServerDefaults();
    }

    @Override
    @Deprecated
    public FsServerDefaults getServerDefaults() throws IOException {
      return LocalConfigKeys.getServerDefaults();
    }

    @Override
    public boolean isValidName(String src) {
      return true; // any local path
    }
  }
}
