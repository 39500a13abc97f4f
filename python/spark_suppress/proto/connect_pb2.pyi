from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class Suppress(_message.Message):
    __slots__ = ("input", "client_version", "spec")
    INPUT_FIELD_NUMBER: _ClassVar[int]
    CLIENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    input: bytes
    client_version: str
    spec: bytes
    def __init__(self, input: _Optional[bytes] = ..., client_version: _Optional[str] = ..., spec: _Optional[bytes] = ...) -> None: ...

class AggregateWindowed(_message.Message):
    __slots__ = ("input", "aggregations", "client_version", "spec")
    INPUT_FIELD_NUMBER: _ClassVar[int]
    AGGREGATIONS_FIELD_NUMBER: _ClassVar[int]
    CLIENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    input: bytes
    aggregations: _containers.RepeatedScalarFieldContainer[bytes]
    client_version: str
    spec: bytes
    def __init__(self, input: _Optional[bytes] = ..., aggregations: _Optional[_Iterable[bytes]] = ..., client_version: _Optional[str] = ..., spec: _Optional[bytes] = ...) -> None: ...

class Aggregate(_message.Message):
    __slots__ = ("input", "aggregations", "client_version", "spec")
    INPUT_FIELD_NUMBER: _ClassVar[int]
    AGGREGATIONS_FIELD_NUMBER: _ClassVar[int]
    CLIENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    input: bytes
    aggregations: _containers.RepeatedScalarFieldContainer[bytes]
    client_version: str
    spec: bytes
    def __init__(self, input: _Optional[bytes] = ..., aggregations: _Optional[_Iterable[bytes]] = ..., client_version: _Optional[str] = ..., spec: _Optional[bytes] = ...) -> None: ...

class JoinVersioned(_message.Message):
    __slots__ = ("stream", "table", "initial_versions", "client_version", "spec")
    STREAM_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    INITIAL_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    CLIENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    stream: bytes
    table: bytes
    initial_versions: bytes
    client_version: str
    spec: bytes
    def __init__(self, stream: _Optional[bytes] = ..., table: _Optional[bytes] = ..., initial_versions: _Optional[bytes] = ..., client_version: _Optional[str] = ..., spec: _Optional[bytes] = ...) -> None: ...

class StringFold(_message.Message):
    __slots__ = ("column", "initial", "separator")
    COLUMN_FIELD_NUMBER: _ClassVar[int]
    INITIAL_FIELD_NUMBER: _ClassVar[int]
    SEPARATOR_FIELD_NUMBER: _ClassVar[int]
    column: bytes
    initial: str
    separator: str
    def __init__(self, column: _Optional[bytes] = ..., initial: _Optional[str] = ..., separator: _Optional[str] = ...) -> None: ...

class Metrics(_message.Message):
    __slots__ = ("observation_names", "client_version")
    OBSERVATION_NAMES_FIELD_NUMBER: _ClassVar[int]
    CLIENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    observation_names: _containers.RepeatedScalarFieldContainer[str]
    client_version: str
    def __init__(self, observation_names: _Optional[_Iterable[str]] = ..., client_version: _Optional[str] = ...) -> None: ...
