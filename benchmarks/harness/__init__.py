"""The benchmark harness behind benchmarks/run.py (see benchmarks/README.md)."""
