package io.github.sparksuppress.testing

import java.io.UncheckedIOException
import java.nio.file.{DirectoryNotEmptyException, Files, NoSuchFileException, Path}

/** Deleting a stopped query's checkpoint, which Spark may still be changing. */
private[sparksuppress] object CheckpointFiles {

  /** How many walks of the tree a deletion makes at most before it gives up with the last walk's error. */
  val Attempts = 5

  /**
   * Deletes `root` and everything under it. Spark's state store maintenance runs on a thread of its own and, for a
   * while after the query stopped, may still write a snapshot into a state directory or delete an old file: a walk
   * that meets a directory that gained a file, or a file already gone, walks the tree again. `beforeDelete` sees each
   * path before it is deleted (tests change the tree there, as that thread would).
   */
  def delete(root: Path, beforeDelete: Path => Unit = _ => ()): Unit = {
    var attempt = 1
    while (Files.exists(root)) {
      try {
        val paths = Files.walk(root)
        try
          paths.sorted(java.util.Comparator.reverseOrder[Path]()).forEach { p =>
            beforeDelete(p)
            Files.deleteIfExists(p)
          }
        finally paths.close()
      } catch {
        case _: DirectoryNotEmptyException | _: NoSuchFileException | _: UncheckedIOException if attempt < Attempts =>
          attempt += 1
      }
    }
  }
}
