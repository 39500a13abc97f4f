package io.github.sparksuppress.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's local file system, setting permissions through java.nio and writing no checksum files. Without Hadoop's
 * native library (which PySpark's wheels and Maven's Hadoop jars do not ship) Hadoop's own forks {@code chmod} for
 * every file and directory it creates: several per micro-batch (offsets, commits, state deltas), which the tests
 * run by the thousand. A {@link LocalFileSystem} still, as Spark's RocksDB state store requires of the local one.
 * Only the tests' quick checkpoints use it (tests/session_conf.py, SparkSessionSuite.QuickCheckpoints); Python's
 * tests compile this file with javac against their PySpark's jars.
 */
public class ForklessLocalFileSystem extends LocalFileSystem {
  public ForklessLocalFileSystem() {
    super(new Raw());
    setWriteChecksum(false);
    setVerifyChecksum(false);
  }

  /** The raw local file system with a chmod that forks nothing. */
  public static class Raw extends RawLocalFileSystem {
    // Bit i of a POSIX mode, from the lowest: others' execute, write, read, then the group's, then the owner's.
    private static final PosixFilePermission[] MODE_BITS = {
      PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_READ,
      PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_READ,
      PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_READ
    };

    @Override
    public void setPermission(Path p, FsPermission permission) throws IOException {
      short mode = permission.toShort();
      Set<PosixFilePermission> set = EnumSet.noneOf(PosixFilePermission.class);
      for (int i = 0; i < MODE_BITS.length; i++) {
        if ((mode & (1 << i)) != 0) {
          set.add(MODE_BITS[i]);
        }
      }
      Files.setPosixFilePermissions(pathToFile(p).toPath(), set);
    }
  }
}
