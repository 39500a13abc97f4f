"""The Python package's shape (no Spark session needed): modules by operator that reach the transports through the
one dispatcher, no import cycles, and numpydoc docstrings whose runnable examples run."""

import ast
import doctest
import importlib
import inspect
import os

import pytest

import spark_suppress as ss
from spark_suppress.testing import TestDriver

PACKAGE = os.path.dirname(os.path.abspath(ss.__file__))
OPERATOR_MODULES = ["suppress", "aggregate", "join", "metrics", "testing"]


def _modules():
    return sorted(f[:-3] for f in os.listdir(PACKAGE) if f.endswith(".py"))


def _imports(module):
    """The package's modules that ``module`` imports anywhere in its code (inside functions too), by name."""
    with open(os.path.join(PACKAGE, module + ".py")) as f:
        tree = ast.parse(f.read())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("spark_suppress"):
            parts = node.module.split(".")
            found.update([parts[1]] if len(parts) > 1 else [a.name for a in node.names])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("spark_suppress."))
    return {m for m in found if m in _modules() or m == "proto"}


def test_the_package_has_no_import_cycles():
    graph = {m: _imports(m) - {"proto"} for m in _modules()}
    # __init__ imports every public module; nothing may import it back.
    assert not [m for m, deps in graph.items() if "__init__" in deps]
    done, path = set(), []

    def visit(m):
        if m in path:
            raise AssertionError("import cycle: " + " -> ".join(path[path.index(m) :] + [m]))
        if m in done:
            return
        path.append(m)
        for d in sorted(graph.get(m, ())):
            visit(d)
        path.pop()
        done.add(m)

    for m in graph:
        visit(m)


@pytest.mark.parametrize("module", OPERATOR_MODULES)
def test_operators_reach_the_transports_only_through_the_dispatcher(module):
    assert {"_jvm", "_connect", "_connect_testing"}.isdisjoint(_imports(module))
    with open(os.path.join(PACKAGE, module + ".py")) as f:
        assert "is_connect" not in f.read(), f"{module} asks for the session's kind itself instead of _transport"


def test_the_demo_is_an_example_not_a_module_of_the_package():
    assert "demo" not in _modules()
    assert os.path.isfile(os.path.join(os.path.dirname(os.path.dirname(PACKAGE)), "examples", "demo.py"))


def _public_callables():
    """Every public function and class of the package, and every public method and property of those classes."""
    for name in ss.__all__:
        obj = getattr(ss, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            yield name, obj
    for cls in [getattr(ss, n) for n in ss.__all__ if inspect.isclass(getattr(ss, n))] + [TestDriver]:
        if issubclass(cls, Exception):
            continue
        if cls is TestDriver:
            yield "TestDriver", cls
        for attr, member in vars(cls).items():
            if attr.startswith("_"):
                continue
            function = member.__func__ if isinstance(member, staticmethod) else member
            if inspect.isfunction(function) or isinstance(member, property):
                yield f"{cls.__name__}.{attr}", function


def _sections(doc):
    lines = inspect.cleandoc(doc).splitlines()
    return {lines[i].strip() for i in range(len(lines) - 1) if set(lines[i + 1].strip()) == {"-"}}


@pytest.mark.parametrize("name, obj", list(_public_callables()), ids=lambda x: x if isinstance(x, str) else "")
def test_every_public_function_and_class_has_a_numpydoc_docstring(name, obj):
    doc = inspect.getdoc(obj)
    assert doc, f"{name} has no docstring"
    if isinstance(obj, property):
        return  # a property's docstring says what it is; its type is its annotation
    sections = _sections(doc)
    if inspect.isclass(obj) and issubclass(obj, Exception):
        return
    assert "Examples" in sections, f"{name}: no Examples section"
    if inspect.isfunction(obj):
        signature = inspect.signature(obj)
        if [p for p in signature.parameters if p not in ("self", "cls")]:
            assert "Parameters" in sections, f"{name}: no Parameters section"
        if signature.return_annotation not in (None, "None", inspect.Signature.empty):
            assert "Returns" in sections, f"{name}: no Returns section"
        if "." not in name:  # the package's functions say what they raise
            assert "Raises" in sections, f"{name}: no Raises section"
    else:
        assert "Parameters" in sections, f"{name}: no Parameters section"


@pytest.mark.parametrize("module", ["suppress", "aggregate"])
def test_the_runnable_docstring_examples_run(module):
    # The module, not the function of the same name that the package exports.
    result = doctest.testmod(importlib.import_module(f"spark_suppress.{module}"), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 10
    assert result.failed == 0


def test_importing_the_package_loads_neither_classic_pyspark_nor_py4j():
    # A pyspark-client install has neither: the transports import them only when a classic session calls.
    from conftest import run_python

    result = run_python(
        "import sys\n"
        "import spark_suppress, spark_suppress.testing, spark_suppress._transport\n"
        "print('LOADED:' + ','.join(m for m in sys.modules if m.startswith(('pyspark.sql.classic', 'py4j'))))\n"
    )
    assert "LOADED:" in result.stdout, result.stderr[-3000:]
    assert result.stdout.split("LOADED:", 1)[1].strip() == ""


def test_a_spark_35_connect_progress_report_totals_the_input_rows_of_its_sources():
    # PySpark 3.5's Connect client gives the progress JSON as a dict, without the computed total the Connect test
    # driver waits on; without it a processing-time step compared None with a count.
    from spark_suppress._connect import progress_field

    report = {"batchId": 3, "sources": [{"numInputRows": 2}, {"numInputRows": 5}]}
    assert progress_field(report, "numInputRows") == 7
    assert progress_field(report, "batchId") == 3
    assert progress_field({"batchId": 4, "numInputRows": 1, "sources": []}, "numInputRows") == 1


def test_string_fold_without_any_session_says_to_create_one():
    """Classic PySpark in a process with a JVM but no session (Connect columns need no session at all)."""
    from conftest import run_python

    result = run_python(
        "from pyspark import SparkContext\n"
        "from pyspark.sql import functions as F\n"
        "import spark_suppress as ss\n"
        "sc = SparkContext('local[1]', 'no-session')\n"  # a JVM, so that columns can be made, but no session
        "try:\n"
        "    ss.string_fold(F.col('label'))\n"
        "except RuntimeError as e:\n"
        "    print('ERR:' + str(e))\n"
        "sc.stop()\n"
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "ERR:string_fold needs a SparkSession, and this process has none" in result.stdout
    assert "spark_suppress.configure(SparkSession.builder).getOrCreate()" in result.stdout
