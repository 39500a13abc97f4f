package io.github.sparksuppress.testing

import java.nio.file.{DirectoryNotEmptyException, Files, Path}

import org.scalatest.funsuite.AnyFunSuite

class CheckpointFilesSuite extends AnyFunSuite {

  /** A checkpoint's shape: a state directory holding a delta file; returns (root, the state directory). */
  private def checkpoint(): (Path, Path) = {
    val root = Files.createTempDirectory("checkpoint-files-suite")
    val state = Files.createDirectories(root.resolve("state").resolve("0").resolve("0"))
    Files.write(state.resolve("1.delta"), Array[Byte](1, 2, 3))
    (root, state)
  }

  test("a state directory that gains a file while the checkpoint is deleted goes on the next walk") {
    val (root, state) = checkpoint()
    var visits = 0
    CheckpointFiles.delete(
      root,
      p =>
        if (p == state) {
          visits += 1
          // As Spark's maintenance thread writes a snapshot after the query stopped.
          if (visits == 1) Files.write(state.resolve("1.snapshot"), Array[Byte](4))
        }
    )
    assert(!Files.exists(root))
    assert(visits == 2)
  }

  test("a directory that keeps gaining files fails the deletion after the last attempt, naming it") {
    val (root, state) = checkpoint()
    var visits = 0
    val e = intercept[DirectoryNotEmptyException] {
      CheckpointFiles.delete(
        root,
        p =>
          if (p == state) {
            visits += 1
            Files.write(state.resolve(s"$visits.snapshot"), Array[Byte](4))
          }
      )
    }
    assert(visits == CheckpointFiles.Attempts)
    assert(e.getMessage.contains(state.toString))
    CheckpointFiles.delete(root)
    assert(!Files.exists(root))
  }
}
