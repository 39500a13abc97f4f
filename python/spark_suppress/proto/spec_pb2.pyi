from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SuppressionMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SUPPRESSION_MODE_UNSPECIFIED: _ClassVar[SuppressionMode]
    SUPPRESSION_MODE_UNTIL_TIME_LIMIT: _ClassVar[SuppressionMode]
    SUPPRESSION_MODE_UNTIL_WINDOW_CLOSES: _ClassVar[SuppressionMode]

class BufferTime(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BUFFER_TIME_UNSPECIFIED: _ClassVar[BufferTime]
    BUFFER_TIME_FIRST: _ClassVar[BufferTime]
    BUFFER_TIME_LATEST: _ClassVar[BufferTime]

class Clock(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CLOCK_UNSPECIFIED: _ClassVar[Clock]
    CLOCK_EVENT: _ClassVar[Clock]
    CLOCK_PROCESSING: _ClassVar[Clock]

class WhenFull(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    WHEN_FULL_UNSPECIFIED: _ClassVar[WhenFull]
    WHEN_FULL_UNBOUNDED: _ClassVar[WhenFull]
    WHEN_FULL_EMIT_EARLY: _ClassVar[WhenFull]
    WHEN_FULL_SHUT_DOWN: _ClassVar[WhenFull]
    WHEN_FULL_SPILL_TO_DISK: _ClassVar[WhenFull]

class SizeModel(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SIZE_MODEL_UNSPECIFIED: _ClassVar[SizeModel]
    SIZE_MODEL_KAFKA: _ClassVar[SizeModel]
    SIZE_MODEL_VALUE_BYTES: _ClassVar[SizeModel]

class LateRecords(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LATE_RECORDS_UNSPECIFIED: _ClassVar[LateRecords]
    LATE_RECORDS_DROP: _ClassVar[LateRecords]
    LATE_RECORDS_EMIT: _ClassVar[LateRecords]

class EmitStrategy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EMIT_STRATEGY_UNSPECIFIED: _ClassVar[EmitStrategy]
    EMIT_STRATEGY_ON_WINDOW_CLOSE: _ClassVar[EmitStrategy]
    EMIT_STRATEGY_ON_WINDOW_UPDATE: _ClassVar[EmitStrategy]

class JoinType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    JOIN_TYPE_UNSPECIFIED: _ClassVar[JoinType]
    JOIN_TYPE_INNER: _ClassVar[JoinType]
    JOIN_TYPE_LEFT: _ClassVar[JoinType]
SUPPRESSION_MODE_UNSPECIFIED: SuppressionMode
SUPPRESSION_MODE_UNTIL_TIME_LIMIT: SuppressionMode
SUPPRESSION_MODE_UNTIL_WINDOW_CLOSES: SuppressionMode
BUFFER_TIME_UNSPECIFIED: BufferTime
BUFFER_TIME_FIRST: BufferTime
BUFFER_TIME_LATEST: BufferTime
CLOCK_UNSPECIFIED: Clock
CLOCK_EVENT: Clock
CLOCK_PROCESSING: Clock
WHEN_FULL_UNSPECIFIED: WhenFull
WHEN_FULL_UNBOUNDED: WhenFull
WHEN_FULL_EMIT_EARLY: WhenFull
WHEN_FULL_SHUT_DOWN: WhenFull
WHEN_FULL_SPILL_TO_DISK: WhenFull
SIZE_MODEL_UNSPECIFIED: SizeModel
SIZE_MODEL_KAFKA: SizeModel
SIZE_MODEL_VALUE_BYTES: SizeModel
LATE_RECORDS_UNSPECIFIED: LateRecords
LATE_RECORDS_DROP: LateRecords
LATE_RECORDS_EMIT: LateRecords
EMIT_STRATEGY_UNSPECIFIED: EmitStrategy
EMIT_STRATEGY_ON_WINDOW_CLOSE: EmitStrategy
EMIT_STRATEGY_ON_WINDOW_UPDATE: EmitStrategy
JOIN_TYPE_UNSPECIFIED: JoinType
JOIN_TYPE_INNER: JoinType
JOIN_TYPE_LEFT: JoinType

class SuppressSpec(_message.Message):
    __slots__ = ("key", "timestamp", "suppressed", "window", "grace_ms", "tombstone", "late", "idle_timeout_ms")
    KEY_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    SUPPRESSED_FIELD_NUMBER: _ClassVar[int]
    WINDOW_FIELD_NUMBER: _ClassVar[int]
    GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    TOMBSTONE_FIELD_NUMBER: _ClassVar[int]
    LATE_FIELD_NUMBER: _ClassVar[int]
    IDLE_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    key: _containers.RepeatedScalarFieldContainer[str]
    timestamp: str
    suppressed: Suppressed
    window: WindowColumns
    grace_ms: int
    tombstone: str
    late: LateRecords
    idle_timeout_ms: int
    def __init__(self, key: _Optional[_Iterable[str]] = ..., timestamp: _Optional[str] = ..., suppressed: _Optional[_Union[Suppressed, _Mapping]] = ..., window: _Optional[_Union[WindowColumns, _Mapping]] = ..., grace_ms: _Optional[int] = ..., tombstone: _Optional[str] = ..., late: _Optional[_Union[LateRecords, str]] = ..., idle_timeout_ms: _Optional[int] = ...) -> None: ...

class Suppressed(_message.Message):
    __slots__ = ("mode", "time_limit_ms", "buffer_time", "clock", "name", "buffer")
    MODE_FIELD_NUMBER: _ClassVar[int]
    TIME_LIMIT_MS_FIELD_NUMBER: _ClassVar[int]
    BUFFER_TIME_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    BUFFER_FIELD_NUMBER: _ClassVar[int]
    mode: SuppressionMode
    time_limit_ms: int
    buffer_time: BufferTime
    clock: Clock
    name: str
    buffer: BufferConfig
    def __init__(self, mode: _Optional[_Union[SuppressionMode, str]] = ..., time_limit_ms: _Optional[int] = ..., buffer_time: _Optional[_Union[BufferTime, str]] = ..., clock: _Optional[_Union[Clock, str]] = ..., name: _Optional[str] = ..., buffer: _Optional[_Union[BufferConfig, _Mapping]] = ...) -> None: ...

class BufferConfig(_message.Message):
    __slots__ = ("max_records", "max_bytes", "when_full", "size_model")
    MAX_RECORDS_FIELD_NUMBER: _ClassVar[int]
    MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
    WHEN_FULL_FIELD_NUMBER: _ClassVar[int]
    SIZE_MODEL_FIELD_NUMBER: _ClassVar[int]
    max_records: int
    max_bytes: int
    when_full: WhenFull
    size_model: SizeModel
    def __init__(self, max_records: _Optional[int] = ..., max_bytes: _Optional[int] = ..., when_full: _Optional[_Union[WhenFull, str]] = ..., size_model: _Optional[_Union[SizeModel, str]] = ...) -> None: ...

class WindowColumns(_message.Message):
    __slots__ = ("struct", "start_end")
    STRUCT_FIELD_NUMBER: _ClassVar[int]
    START_END_FIELD_NUMBER: _ClassVar[int]
    struct: str
    start_end: StartEnd
    def __init__(self, struct: _Optional[str] = ..., start_end: _Optional[_Union[StartEnd, _Mapping]] = ...) -> None: ...

class StartEnd(_message.Message):
    __slots__ = ("start", "end")
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    start: str
    end: str
    def __init__(self, start: _Optional[str] = ..., end: _Optional[str] = ...) -> None: ...

class AggregateWindowedSpec(_message.Message):
    __slots__ = ("key", "timestamp", "windows", "emit", "name", "late", "idle_timeout_ms")
    KEY_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    WINDOWS_FIELD_NUMBER: _ClassVar[int]
    EMIT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    LATE_FIELD_NUMBER: _ClassVar[int]
    IDLE_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    key: _containers.RepeatedScalarFieldContainer[str]
    timestamp: str
    windows: Windows
    emit: EmitStrategy
    name: str
    late: LateRecords
    idle_timeout_ms: int
    def __init__(self, key: _Optional[_Iterable[str]] = ..., timestamp: _Optional[str] = ..., windows: _Optional[_Union[Windows, _Mapping]] = ..., emit: _Optional[_Union[EmitStrategy, str]] = ..., name: _Optional[str] = ..., late: _Optional[_Union[LateRecords, str]] = ..., idle_timeout_ms: _Optional[int] = ...) -> None: ...

class Windows(_message.Message):
    __slots__ = ("time", "sliding", "session")
    TIME_FIELD_NUMBER: _ClassVar[int]
    SLIDING_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    time: TimeWindows
    sliding: SlidingWindows
    session: SessionWindows
    def __init__(self, time: _Optional[_Union[TimeWindows, _Mapping]] = ..., sliding: _Optional[_Union[SlidingWindows, _Mapping]] = ..., session: _Optional[_Union[SessionWindows, _Mapping]] = ...) -> None: ...

class TimeWindows(_message.Message):
    __slots__ = ("size_ms", "advance_ms", "grace_ms")
    SIZE_MS_FIELD_NUMBER: _ClassVar[int]
    ADVANCE_MS_FIELD_NUMBER: _ClassVar[int]
    GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    size_ms: int
    advance_ms: int
    grace_ms: int
    def __init__(self, size_ms: _Optional[int] = ..., advance_ms: _Optional[int] = ..., grace_ms: _Optional[int] = ...) -> None: ...

class SlidingWindows(_message.Message):
    __slots__ = ("time_difference_ms", "grace_ms")
    TIME_DIFFERENCE_MS_FIELD_NUMBER: _ClassVar[int]
    GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    time_difference_ms: int
    grace_ms: int
    def __init__(self, time_difference_ms: _Optional[int] = ..., grace_ms: _Optional[int] = ...) -> None: ...

class SessionWindows(_message.Message):
    __slots__ = ("inactivity_gap_ms", "grace_ms")
    INACTIVITY_GAP_MS_FIELD_NUMBER: _ClassVar[int]
    GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    inactivity_gap_ms: int
    grace_ms: int
    def __init__(self, inactivity_gap_ms: _Optional[int] = ..., grace_ms: _Optional[int] = ...) -> None: ...

class AggregateSpec(_message.Message):
    __slots__ = ("key", "timestamp", "name")
    KEY_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    key: _containers.RepeatedScalarFieldContainer[str]
    timestamp: str
    name: str
    def __init__(self, key: _Optional[_Iterable[str]] = ..., timestamp: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class JoinVersionedSpec(_message.Message):
    __slots__ = ("on", "stream_timestamp", "table_timestamp", "grace_ms", "history_retention_ms", "how", "tombstone", "name", "release_on_watermark", "idle_timeout_ms")
    ON_FIELD_NUMBER: _ClassVar[int]
    STREAM_TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    TABLE_TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    HISTORY_RETENTION_MS_FIELD_NUMBER: _ClassVar[int]
    HOW_FIELD_NUMBER: _ClassVar[int]
    TOMBSTONE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    RELEASE_ON_WATERMARK_FIELD_NUMBER: _ClassVar[int]
    IDLE_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    on: _containers.RepeatedScalarFieldContainer[str]
    stream_timestamp: str
    table_timestamp: str
    grace_ms: int
    history_retention_ms: int
    how: JoinType
    tombstone: str
    name: str
    release_on_watermark: bool
    idle_timeout_ms: int
    def __init__(self, on: _Optional[_Iterable[str]] = ..., stream_timestamp: _Optional[str] = ..., table_timestamp: _Optional[str] = ..., grace_ms: _Optional[int] = ..., history_retention_ms: _Optional[int] = ..., how: _Optional[_Union[JoinType, str]] = ..., tombstone: _Optional[str] = ..., name: _Optional[str] = ..., release_on_watermark: _Optional[bool] = ..., idle_timeout_ms: _Optional[int] = ...) -> None: ...
