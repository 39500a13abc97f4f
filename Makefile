# Every target installs what it needs: a fresh clone needs only Java 17+, Maven and Python 3.10+.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
SBT := build/sbt -Dsbt.log.noformat=true
VERSION := $(shell cat VERSION)
JAR := target/scala-2.13/spark-suppress_2.13-$(VERSION).jar
BUNDLED_JAR := python/spark_suppress/jars/spark-suppress_2.13-$(VERSION).jar
SCALA_SOURCES := $(shell find jvm/src/main -type f 2>/dev/null) build.sbt VERSION
CONFORMANCE_DIR ?= ../shared/conformance/vectors
CHAINS_DIR ?= ../shared/conformance/chains
export CONFORMANCE_DIR CHAINS_DIR

.PHONY: venv jar test test-jvm test-python test-connect test-connect-client conformance conformance-connect demo wheel publish-local bench reliability clean proto

venv: $(VENV)/.installed

$(VENV)/.installed: python/pyproject.toml requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -r requirements-dev.txt
	$(PIP) install -q --no-deps -e python
	touch $@

$(JAR): $(SCALA_SOURCES) $(VENV)/.installed
	$(SBT) package

$(BUNDLED_JAR): $(JAR)
	mkdir -p $(dir $@)
	rm -f $(dir $@)*.jar
	cp $(JAR) $@

jar: $(BUNDLED_JAR)

test-jvm: venv
	$(SBT) test

test-python: jar
	$(PY) -m pytest -q tests

# The join vectors run a second time with a watermark on the stream: its release on the watermark (on by default)
# must not change Kafka's timing (docs/join.md).
conformance: jar
	$(PY) tests/conformance/run.py
	$(PY) tests/conformance/run.py --join-stream-watermark

# The same operators over Spark Connect (docs/connect.md): the Python tests that take a session, plus Connect's own,
# on an in-process local Connect server with the plugins; then every conformance vector through Connect.
CONNECT_TESTS := tests/test_connect.py tests/test_suppress.py tests/test_emit.py tests/test_join.py tests/test_chains.py

test-connect: jar
	SPARK_SUPPRESS_CONNECT=1 $(PY) -m pytest -q $(CONNECT_TESTS)

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

test: test-jvm test-python conformance test-connect conformance-connect test-connect-client

demo: jar
	$(PY) -m spark_suppress.demo

wheel: jar
	rm -rf dist python/build
	$(PIP) wheel -q --no-deps --no-build-isolation -w dist ./python
	@ls dist/*.whl

publish-local: venv
	$(SBT) publishLocal publishM2

bench: jar
	$(PY) benchmarks/run.py

# The reliability checks at full size (docs/reliability.md); RELIABILITY_LONG=1 adds the soak run.
reliability: jar
	RELIABILITY=1 $(SBT) "testOnly io.github.sparksuppress.reliability.*"
	$(PY) -m pytest -q tests/test_reliability.py
	$(PY) -m pytest -q reliability

# Regenerates the committed protobuf code of the Connect plugin (docs/connect.md) from proto/. protoc comes from Maven
# Central at the version of the protobuf runtimes in PySpark 4.3.0. The Java code is rewritten onto the protobuf
# runtime that the Connect server carries shaded (org.sparkproject.connect.protobuf): Spark ships no other.
PROTOC_VERSION := 33.5
PROTOC := target/protoc/protoc-$(PROTOC_VERSION)
PROTOC_ARTIFACT := com.google.protobuf:protoc:4.$(PROTOC_VERSION):exe:linux-x86_64

# protoc comes from Maven Central through Maven, as the sbt launcher does (build/sbt).
$(PROTOC):
	mkdir -p $(dir $@)
	mvn -q -B dependency:copy -Dartifact=$(PROTOC_ARTIFACT) -DoutputDirectory=$(dir $@) -Dmdep.stripVersion=false
	mv $(dir $@)protoc-4.$(PROTOC_VERSION)-linux-x86_64.exe $@ && chmod +x $@

proto: $(PROTOC)
	rm -rf jvm/src/main/java/io/github/sparksuppress/connect/proto python/spark_suppress/proto/connect_pb2.py*
	mkdir -p jvm/src/main/java python/spark_suppress/proto
	$(PROTOC) -Iproto --java_out=jvm/src/main/java --python_out=python/spark_suppress/proto --pyi_out=python/spark_suppress/proto \
		proto/spark_suppress/connect.proto
	mv python/spark_suppress/proto/spark_suppress/connect_pb2.py* python/spark_suppress/proto/
	rmdir python/spark_suppress/proto/spark_suppress
	sed -i 's/com\.google\.protobuf\./org.sparkproject.connect.protobuf./g' jvm/src/main/java/io/github/sparksuppress/connect/proto/*.java

clean:
	rm -rf target project/target project/project dist python/build python/*.egg-info python/spark_suppress/jars
	rm -rf $(VENV) .pytest_cache benchmarks/work spark-warehouse
