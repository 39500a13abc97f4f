"""Protobuf code generated from proto/spark_suppress/connect.proto by `make proto`: do not edit."""
