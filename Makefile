# Every target installs what it needs: a fresh clone needs only Java 17+, Maven and Python 3.10+.
SHELL := /bin/bash
PYTHON ?= python3
SBT := build/sbt -Dsbt.log.noformat=true
VERSION := $(shell cat VERSION)

# ---- Spark lines (project/spark-lines.tsv; docs/spark-lines.md) ----
# SPARK picks the line one target works on (default 4.3); SCALA its Scala version (2.12 for 3.5, else 2.13).
# `make test` without SPARK runs every line (tests/lines.py); `make test SPARK=3.5` the whole suite on one line.
SPARK ?= 4.3
SCALA ?= $(if $(filter 3.5,$(SPARK)),2.12,2.13)
ALL_LINES := $(origin SPARK)
LINE_ROW := $(shell awk -v l=$(SPARK) -v s=$(SCALA) '!/^\#/ && $$1 == l && substr($$2, 1, length(s) + 1) == s "." {print}' project/spark-lines.tsv)
ifeq ($(strip $(LINE_ROW)),)
$(error Spark $(SPARK) on Scala $(SCALA) is not a supported line; project/spark-lines.tsv lists them: $(shell awk '!/^\#/ {printf "%s (Scala %s) ", $$1, $$2}' project/spark-lines.tsv))
endif
PYSPARK_VERSION := $(word 4,$(LINE_ROW))
PROJECT := spark$(subst .,,$(SPARK))_$(subst .,,$(SCALA))
VENV := $(if $(filter 4.3,$(SPARK)),.venv,.venv-$(SPARK))
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
JAR_NAME := spark-suppress_$(SPARK)_$(SCALA)-$(VERSION).jar
JAR := target/$(PROJECT)/scala-$(SCALA)/$(JAR_NAME)
BUNDLED_JAR := python/spark_suppress/jars/$(JAR_NAME)
SCALA_SOURCES := $(shell find jvm/src/main jvm/shims jvm/connect/scala jvm/connect/java jvm/connect/shims -type f 2>/dev/null) build.sbt VERSION project/spark-lines.tsv project/SparkLines.scala
# Spark 3.5's Connect server is a separate artifact; Maven Central here has spark-connect_2.12 up to 3.5.7 (build.sbt).
CONNECT35_VERSION := 3.5.7
CONNECT35_JAR := $(VENV)/connect/spark-connect_2.12-$(CONNECT35_VERSION).jar
EXTRA_SERVER_JARS := $(if $(filter 3.5,$(SPARK)),$(abspath $(CONNECT35_JAR)))
export SPARK_SUPPRESS_SERVER_JARS := $(EXTRA_SERVER_JARS)

# The conformance vectors: the repository's copy of ../shared/conformance (make sync-vectors refreshes it).
CONFORMANCE_DIR ?= tests/conformance/vectors
CHAINS_DIR ?= tests/conformance/chains:tests/conformance/chains_filter
export CONFORMANCE_DIR CHAINS_DIR
SHARED_CONFORMANCE := ../shared/conformance
VENDORED_CONFORMANCE := tests/conformance
VECTOR_FOLDERS := vectors chains chains_filter

.PHONY: venv jar jars lint format test test-cluster-faults reliability-sinks conformance-once test-connect-plugin sync-vectors check-vectors test-jvm test-python test-connect test-connect-client conformance conformance-connect demo wheel publish-local bench reliability clean proto

venv: $(VENV)/.installed

# What a line's PySpark needs beside its own requirements: PySpark 3.5 runs NumPy 1, which pyarrow 20 and later refuse.
PYSPARK_PINS := $(if $(filter 3.5,$(SPARK)),"pyarrow<20")

# The line's PySpark (with its Connect client) and the test and benchmark tools; 3.5 also gets its Connect server jar.
$(VENV)/.installed: python/pyproject.toml requirements-dev.txt project/spark-lines.tsv
ifeq ($(PYSPARK_VERSION),-)
	@echo "Spark $(SPARK) on Scala $(SCALA) has no PySpark on PyPI: its Python tests run on Scala 2.12 (make test SPARK=$(SPARK))"; exit 1
endif
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q "pyspark[connect]==$(PYSPARK_VERSION)" $(PYSPARK_PINS) -r requirements-dev.txt
	$(PIP) install -q --no-deps -e python
ifneq ($(EXTRA_SERVER_JARS),)
	mvn -q -B dependency:copy -Dartifact=org.apache.spark:spark-connect_2.12:$(CONNECT35_VERSION) \
		-DoutputDirectory=$(VENV)/connect -Dmdep.stripVersion=false
endif
	touch $@

# Lines whose Spark comes from the wheel compile against the venv's jars; 3.5 on Scala 2.13 comes from Maven Central.
$(JAR): $(SCALA_SOURCES) $(if $(filter -,$(PYSPARK_VERSION)),,$(VENV)/.installed)
	$(SBT) $(PROJECT)/package

$(BUNDLED_JAR): $(JAR)
	mkdir -p $(dir $@)
	cp $(JAR) $@

jar: $(BUNDLED_JAR)

# Every line's jar, bundled for the wheel: each line's `make jar`, which does nothing for a jar newer than its sources
# (`tests/lines.py --build-only` builds them all in one sbt run instead).
jars:
	@awk '!/^#/ {split($$2, v, "."); print $$1, v[1] "." v[2]}' project/spark-lines.tsv | while read line scala; do \
		$(MAKE) --no-print-directory jar SPARK=$$line SCALA=$$scala || exit 1; done

# Style: ruff (lint and format check, ruff.toml) on every Python file and mypy on the package (mypy.ini); their
# versions are pinned in requirements-dev.txt. `make test` runs it first (tests/lines.py: once, on the default line).
# Whatever SPARK says, it runs in the default line's venv: mypy checks the package against that PySpark's types.
lint:
	$(MAKE) --no-print-directory venv SPARK=4.3 SCALA=2.13
	.venv/bin/python tests/lint.py

# Applies the formatters make lint checks: ruff on Python, scalafmt on Scala.
format:
	$(MAKE) --no-print-directory venv SPARK=4.3 SCALA=2.13
	.venv/bin/python -m ruff format .
	build/sbt spark43_213/scalafmtAll spark35_212/scalafmtAll bench/scalafmtAll

test-jvm: $(if $(filter -,$(PYSPARK_VERSION)),,venv)
	$(SBT) $(PROJECT)/test

test-python: jar
	$(PY) -m pytest -q tests

# The join vectors run a second time with a watermark on the stream: its release on the watermark (on by default)
# must not change Kafka's timing (docs/join.md).
conformance: jar
	$(PY) tests/conformance/run.py
	$(PY) tests/conformance/run.py --join-stream-watermark

# Every vector once on py4j (no second join pass): what `make test` runs on the lines other than the default, where
# Connect's own tests (test-connect-plugin) stand for Connect; the default line runs every vector over Connect too.
conformance-once: jar
	$(PY) tests/conformance/run.py

# The same operators over Spark Connect (docs/connect.md): the Python tests that take a session, plus Connect's own,
# on an in-process local Connect server with the plugins; then every conformance vector through Connect.
CONNECT_TESTS := tests/test_connect.py tests/test_connect_fuzz.py tests/test_suppress.py tests/test_emit.py \
	tests/test_join.py tests/test_chains.py

test-connect: jar
	SPARK_SUPPRESS_CONNECT=1 $(PY) -m pytest -q $(CONNECT_TESTS)

# Connect's own tests alone (the plugin, its settings and errors, each operator over Connect): what `make test` runs
# over Connect on the lines other than the default.
test-connect-plugin: jar
	SPARK_SUPPRESS_CONNECT=1 $(PY) -m pytest -q tests/test_connect.py tests/test_connect_fuzz.py

conformance-connect: jar
	SPARK_SUPPRESS_CONNECT=1 $(PY) tests/conformance/run.py

# The wheel in a fresh venv with only pyspark-client (no classic PySpark), against a Connect server of this venv.
CLIENT_VENV := target/connect-client-venv
PYSPARK_CLIENT_VERSION ?= 4.2.0

test-connect-client: wheel
	rm -rf $(CLIENT_VENV)
	$(PYTHON) -m venv $(CLIENT_VENV)
	$(CLIENT_VENV)/bin/pip install -q pyspark-client==$(PYSPARK_CLIENT_VERSION) pytest==8.4.2
	$(CLIENT_VENV)/bin/pip install -q dist/*.whl
	$(PY) tests/connect_client/run.py $(CLIENT_VENV)/bin/python

# Copies the vectors from ../shared/conformance into the repository, which must carry what its tests read.
sync-vectors:
	@test -d $(SHARED_CONFORMANCE) || { echo "no $(SHARED_CONFORMANCE) to copy from"; exit 1; }
	for d in $(VECTOR_FOLDERS); do rm -rf $(VENDORED_CONFORMANCE)/$$d && cp -r $(SHARED_CONFORMANCE)/$$d $(VENDORED_CONFORMANCE)/$$d; done
	cp $(SHARED_CONFORMANCE)/KAFKA_SEMANTICS.md $(VENDORED_CONFORMANCE)/

# Fails when ../shared/conformance exists and its vectors differ from the repository's copy; passes without it.
check-vectors:
	@if [ -d $(SHARED_CONFORMANCE) ]; then for d in $(VECTOR_FOLDERS); do \
		diff -rq $(SHARED_CONFORMANCE)/$$d $(VENDORED_CONFORMANCE)/$$d >/dev/null || { \
		echo "tests/conformance/$$d differs from $(SHARED_CONFORMANCE)/$$d: run 'make sync-vectors' and commit the copy"; \
		exit 1; }; done; fi

# Without SPARK: every line, concurrently where it helps, with a table of line x suite at the end (tests/lines.py).
# With SPARK=X: the whole suite on that line.
ifeq ($(ALL_LINES),file)
test: check-vectors
	$(PYTHON) tests/lines.py
else ifeq ($(PYSPARK_VERSION),-)
test: check-vectors test-jvm
else
DEFAULT_LINE_ONLY := $(if $(filter 4.3,$(SPARK)),test-connect-client test-cluster-faults)
test: check-vectors lint test-jvm test-python conformance test-connect conformance-connect $(DEFAULT_LINE_ONLY)
endif

# The quick slice of the cluster faults (docs/reliability.md): a standalone master and two workers on loopback, one
# run of the aggregation with an executor killed with SIGKILL mid-batch, then the driver (spark-submit) killed and the
# job resubmitted from its checkpoint; `make reliability` runs every operator with more kills.
test-cluster-faults: jar
	$(PY) -m pytest -q reliability/test_cluster_faults.py

# The demo is an example beside the package, not part of the wheel (examples/).
demo: jar
	$(PY) examples/demo.py

# The wheel carries every line's jar; spark_suppress picks the one for the running Spark.
wheel: jars
	rm -rf dist python/build
	$(PIP) wheel -q --no-deps --no-build-isolation -w dist ./python
	@ls dist/*.whl

# Every line's artifact (spark-suppress_<line>_<scala>) into ~/.ivy2/local and ~/.m2.
publish-local:
	$(SBT) publishLocalAllLines

# `make bench SPARK=3.5` (any line): the final-results benchmark on that line against its own append aggregation.
bench: jar
	$(PY) benchmarks/run.py $(if $(filter file,$(ALL_LINES)),,--spark $(SPARK))

# The reliability checks at full size (docs/reliability.md); RELIABILITY_LONG=1 adds the soak run.
# Without SPARK, the restart-equivalence checks also run on the oldest line (3.5, Scala 2.12), at make test's size:
# the full size runs every operator on both providers on the default line already, and on 3.5 it cost about as much
# again (two sbt runs, so that RELIABILITY stays out of the second one's environment).
reliability: jar
	$(if $(filter file,$(ALL_LINES)),$(MAKE) --no-print-directory venv SPARK=3.5)
	RELIABILITY=1 $(SBT) "$(PROJECT)/testOnly io.github.sparksuppress.reliability.*"
	$(if $(filter file,$(ALL_LINES)),env -u RELIABILITY -u RELIABILITY_LONG $(SBT) \
		"spark35_212/testOnly io.github.sparksuppress.reliability.RestartEquivalence*")
	$(PY) -m pytest -q tests/test_reliability.py
	SPARK_SUPPRESS_CONNECT=1 RELIABILITY=1 $(PY) -m pytest -q -s tests/test_connect_fuzz.py
	RELIABILITY=1 $(PY) -m pytest -q reliability --ignore=reliability/test_sinks.py
	$(MAKE) --no-print-directory reliability-sinks

# Kafka -> each operator (suppress, aggregation, join, chain) -> Delta / Kafka with kills. Delta has no release for
# Spark 4.3 (reliability/delta.py): these run on the nearest line with one, 4.2, unless SINKS_SPARK says otherwise.
SINKS_SPARK ?= 4.2
SINKS_PY := $(if $(filter 4.3,$(SINKS_SPARK)),.venv,.venv-$(SINKS_SPARK))/bin/python
reliability-sinks:
	$(MAKE) --no-print-directory jar SPARK=$(SINKS_SPARK)
	RELIABILITY=1 $(SINKS_PY) -m pytest -q reliability/test_sinks.py

# Regenerates the committed protobuf code from proto/: the operators' specs (spec.proto, both transports) and the
# Connect plugin's messages (connect.proto; docs/connect.md). protoc comes from Maven Central. The Java code is
# generated by the protoc of the oldest protobuf runtime a supported line carries (Spark 3.5's 3.23.4): protobuf
# runtimes run code generated by older protoc releases, never newer ones, and Spark 4.0 carries 4.29.3, 4.3 carries
# 4.33.5. Spark ships protobuf only shaded, so each file's Java code is rewritten onto a runtime the JVM has:
# spec.proto's onto spark-core's (org.sparkproject.spark_core.protobuf), which every line has, with or without a
# Connect server; connect.proto's onto the Connect server's (org.sparkproject.connect.protobuf), whose classes the
# plugin interfaces use. The Python code comes from the protoc of PySpark 4.3's protobuf runtime (33.5), which every
# line's newest protobuf runs (python/pyproject.toml declares that floor).
PROTOC_JAVA_VERSION := 3.23.4
PROTOC_PYTHON_VERSION := 4.33.5
PROTOC_DIR := target/protoc

# protoc comes from Maven Central through Maven, as the sbt launcher does (build/sbt).
$(PROTOC_DIR)/protoc-%:
	mkdir -p $(dir $@)
	mvn -q -B dependency:copy -Dartifact=com.google.protobuf:protoc:$*:exe:linux-x86_64 -DoutputDirectory=$(dir $@) \
		-Dmdep.stripVersion=false
	mv $(dir $@)protoc-$*-linux-x86_64.exe $@ && chmod +x $@

PROTO_JAVA := jvm/connect/java
SPEC_JAVA := jvm/src/main/java
PROTO_PYTHON := python/spark_suppress/proto

proto: $(PROTOC_DIR)/protoc-$(PROTOC_JAVA_VERSION) $(PROTOC_DIR)/protoc-$(PROTOC_PYTHON_VERSION)
	rm -rf $(PROTO_JAVA)/io/github/sparksuppress/connect/proto $(SPEC_JAVA)/io/github/sparksuppress/wire/proto
	rm -f $(PROTO_PYTHON)/connect_pb2.py* $(PROTO_PYTHON)/spec_pb2.py*
	mkdir -p $(PROTO_JAVA) $(SPEC_JAVA) $(PROTO_PYTHON)
	$(PROTOC_DIR)/protoc-$(PROTOC_JAVA_VERSION) -Iproto --java_out=$(PROTO_JAVA) proto/spark_suppress/connect.proto
	$(PROTOC_DIR)/protoc-$(PROTOC_JAVA_VERSION) -Iproto --java_out=$(SPEC_JAVA) proto/spark_suppress/spec.proto
	$(PROTOC_DIR)/protoc-$(PROTOC_PYTHON_VERSION) -Iproto --python_out=$(PROTO_PYTHON) --pyi_out=$(PROTO_PYTHON) \
		proto/spark_suppress/connect.proto proto/spark_suppress/spec.proto
	mv $(PROTO_PYTHON)/spark_suppress/*_pb2.py* $(PROTO_PYTHON)/
	rmdir $(PROTO_PYTHON)/spark_suppress
	sed -i 's/com\.google\.protobuf\./org.sparkproject.connect.protobuf./g' $(PROTO_JAVA)/io/github/sparksuppress/connect/proto/*.java
	sed -i 's/com\.google\.protobuf\./org.sparkproject.spark_core.protobuf./g' \
		$(SPEC_JAVA)/io/github/sparksuppress/wire/proto/*.java

clean:
	rm -rf target project/target project/project dist python/build python/*.egg-info python/spark_suppress/jars
	rm -rf .venv .venv-* .pytest_cache benchmarks/work spark-warehouse
