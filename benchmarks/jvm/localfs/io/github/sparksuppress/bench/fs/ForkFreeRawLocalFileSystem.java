package io.github.sparksuppress.bench.fs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;

import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's raw local file system with its two hot shell calls done in Java instead.
 *
 * <p>Without Hadoop's native library (PySpark's wheels ship none), {@code RawLocalFileSystem} starts a {@code chmod}
 * process for every file and directory it creates, and a {@code readlink} process for both paths of every rename.
 * A streaming query renames and creates files in every micro-batch (the offset and commit logs, each state store's
 * delta file, the file sink's output and metadata log), about 1,250 processes for a 22-batch run of benchmark 1, each
 * a few milliseconds on the benchmark machine. Spark on HDFS, on object stores, or with the native library starts none.
 */
public class ForkFreeRawLocalFileSystem extends RawLocalFileSystem {

  @Override
  public void setPermission(Path p, FsPermission permission) throws IOException {
    String symbolic = permission.toString();
    // java.nio takes the nine rwx characters only: a sticky bit or an extended form stays with Hadoop's own call.
    if (symbolic.length() != 9 || permission.getStickyBit()) {
      super.setPermission(p, permission);
      return;
    }
    Files.setPosixFilePermissions(pathToFile(p).toPath(), PosixFilePermissions.fromString(symbolic));
  }

  /** A path that is not a symbolic link has the status of its file (FileNotFoundException if none), as in Hadoop. */
  @Override
  public FileStatus getFileLinkStatus(Path f) throws IOException {
    if (Files.isSymbolicLink(pathToFile(f).toPath())) {
      return super.getFileLinkStatus(f);
    }
    return getFileStatus(f);
  }
}
