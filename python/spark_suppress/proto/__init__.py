"""Protobuf code generated from proto/spark_suppress/*.proto (spec.proto: the operators' specs, both transports;
connect.proto: the Spark Connect plugin's messages) by `make proto`: do not edit."""
