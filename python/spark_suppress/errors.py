"""Errors raised by the Python side of spark-suppress before anything reaches the JVM."""


class SparkSuppressError(RuntimeError):
    """Base class of the errors the Python wrapper raises itself."""


class JarNotFoundError(SparkSuppressError):
    """The JVM of this Spark session cannot load spark-suppress's classes."""


class UnsupportedSparkError(SparkSuppressError):
    """The Spark line (or its Scala version) is not one that spark-suppress is built for."""


class VersionMismatchError(SparkSuppressError):
    """The jar on the JVM's classpath is another version than this Python package."""


class ConnectPluginMissingError(JarNotFoundError):
    """The Spark Connect server was started without spark-suppress's jar or plugin settings."""

    def __init__(self, message: str, expression: bool = False) -> None:
        super().__init__(message)
        #: True when the missing plugin is the expression plugin behind ``string_fold``.
        self.expression = expression


class ClassicSessionRequiredError(SparkSuppressError):
    """The session is a Spark Connect session: there is no local JVM to run the operators in."""
