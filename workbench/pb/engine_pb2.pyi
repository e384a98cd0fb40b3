from workbench.pb import workbench_pb2 as _workbench_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class FlagValue(_message.Message):
    __slots__ = ("text", "integer", "number", "flag")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    INTEGER_FIELD_NUMBER: _ClassVar[int]
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    FLAG_FIELD_NUMBER: _ClassVar[int]
    text: str
    integer: int
    number: float
    flag: bool
    def __init__(self, text: _Optional[str] = ..., integer: _Optional[int] = ..., number: _Optional[float] = ..., flag: _Optional[bool] = ...) -> None: ...

class ClientHello(_message.Message):
    __slots__ = ("version",)
    VERSION_FIELD_NUMBER: _ClassVar[int]
    version: str
    def __init__(self, version: _Optional[str] = ...) -> None: ...

class EngineHello(_message.Message):
    __slots__ = ("version", "pid")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    version: str
    pid: int
    def __init__(self, version: _Optional[str] = ..., pid: _Optional[int] = ...) -> None: ...

class OpenSession(_message.Message):
    __slots__ = ("environ", "cwd", "flags", "resume", "answerable")
    class EnvironEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class FlagsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: FlagValue
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[FlagValue, _Mapping]] = ...) -> None: ...
    ENVIRON_FIELD_NUMBER: _ClassVar[int]
    CWD_FIELD_NUMBER: _ClassVar[int]
    FLAGS_FIELD_NUMBER: _ClassVar[int]
    RESUME_FIELD_NUMBER: _ClassVar[int]
    ANSWERABLE_FIELD_NUMBER: _ClassVar[int]
    environ: _containers.ScalarMap[str, str]
    cwd: str
    flags: _containers.MessageMap[str, FlagValue]
    resume: str
    answerable: bool
    def __init__(self, environ: _Optional[_Mapping[str, str]] = ..., cwd: _Optional[str] = ..., flags: _Optional[_Mapping[str, FlagValue]] = ..., resume: _Optional[str] = ..., answerable: _Optional[bool] = ...) -> None: ...

class LiveSession(_message.Message):
    __slots__ = ("id", "socket", "workspace", "model", "data_dir", "sandbox", "mcp_servers", "state", "pid", "clients")
    ID_FIELD_NUMBER: _ClassVar[int]
    SOCKET_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    DATA_DIR_FIELD_NUMBER: _ClassVar[int]
    SANDBOX_FIELD_NUMBER: _ClassVar[int]
    MCP_SERVERS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    CLIENTS_FIELD_NUMBER: _ClassVar[int]
    id: str
    socket: str
    workspace: str
    model: str
    data_dir: str
    sandbox: str
    mcp_servers: str
    state: str
    pid: int
    clients: int
    def __init__(self, id: _Optional[str] = ..., socket: _Optional[str] = ..., workspace: _Optional[str] = ..., model: _Optional[str] = ..., data_dir: _Optional[str] = ..., sandbox: _Optional[str] = ..., mcp_servers: _Optional[str] = ..., state: _Optional[str] = ..., pid: _Optional[int] = ..., clients: _Optional[int] = ...) -> None: ...

class AttachSession(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class ListSessions(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class StopEngine(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class EngineStatus(_message.Message):
    __slots__ = ("version", "pid", "uptime", "rss", "sessions", "log")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    UPTIME_FIELD_NUMBER: _ClassVar[int]
    RSS_FIELD_NUMBER: _ClassVar[int]
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    LOG_FIELD_NUMBER: _ClassVar[int]
    version: str
    pid: int
    uptime: float
    rss: int
    sessions: _containers.RepeatedCompositeFieldContainer[LiveSession]
    log: str
    def __init__(self, version: _Optional[str] = ..., pid: _Optional[int] = ..., uptime: _Optional[float] = ..., rss: _Optional[int] = ..., sessions: _Optional[_Iterable[_Union[LiveSession, _Mapping]]] = ..., log: _Optional[str] = ...) -> None: ...

class LiveSessions(_message.Message):
    __slots__ = ("sessions",)
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    sessions: _containers.RepeatedCompositeFieldContainer[LiveSession]
    def __init__(self, sessions: _Optional[_Iterable[_Union[LiveSession, _Mapping]]] = ...) -> None: ...

class Subscribe(_message.Message):
    __slots__ = ("after",)
    AFTER_FIELD_NUMBER: _ClassVar[int]
    after: int
    def __init__(self, after: _Optional[int] = ...) -> None: ...

class SendPrompt(_message.Message):
    __slots__ = ("prompt", "agent_id")
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    prompt: str
    agent_id: str
    def __init__(self, prompt: _Optional[str] = ..., agent_id: _Optional[str] = ...) -> None: ...

class CancelRun(_message.Message):
    __slots__ = ("agent_id",)
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    def __init__(self, agent_id: _Optional[str] = ...) -> None: ...

class DecideReview(_message.Message):
    __slots__ = ("call_id", "approve", "reason", "remember")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    APPROVE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    REMEMBER_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    approve: bool
    reason: str
    remember: bool
    def __init__(self, call_id: _Optional[str] = ..., approve: _Optional[bool] = ..., reason: _Optional[str] = ..., remember: _Optional[bool] = ...) -> None: ...

class PendingReviews(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class WaitRun(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Detach(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CloseSession(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ClientMessage(_message.Message):
    __slots__ = ("id", "hello", "open", "attach", "list", "stop", "status", "subscribe", "send", "cancel", "decide", "pending", "wait", "detach", "close")
    ID_FIELD_NUMBER: _ClassVar[int]
    HELLO_FIELD_NUMBER: _ClassVar[int]
    OPEN_FIELD_NUMBER: _ClassVar[int]
    ATTACH_FIELD_NUMBER: _ClassVar[int]
    LIST_FIELD_NUMBER: _ClassVar[int]
    STOP_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SUBSCRIBE_FIELD_NUMBER: _ClassVar[int]
    SEND_FIELD_NUMBER: _ClassVar[int]
    CANCEL_FIELD_NUMBER: _ClassVar[int]
    DECIDE_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    DETACH_FIELD_NUMBER: _ClassVar[int]
    CLOSE_FIELD_NUMBER: _ClassVar[int]
    id: int
    hello: ClientHello
    open: OpenSession
    attach: AttachSession
    list: ListSessions
    stop: StopEngine
    status: EngineStatus
    subscribe: Subscribe
    send: SendPrompt
    cancel: CancelRun
    decide: DecideReview
    pending: PendingReviews
    wait: WaitRun
    detach: Detach
    close: CloseSession
    def __init__(self, id: _Optional[int] = ..., hello: _Optional[_Union[ClientHello, _Mapping]] = ..., open: _Optional[_Union[OpenSession, _Mapping]] = ..., attach: _Optional[_Union[AttachSession, _Mapping]] = ..., list: _Optional[_Union[ListSessions, _Mapping]] = ..., stop: _Optional[_Union[StopEngine, _Mapping]] = ..., status: _Optional[_Union[EngineStatus, _Mapping]] = ..., subscribe: _Optional[_Union[Subscribe, _Mapping]] = ..., send: _Optional[_Union[SendPrompt, _Mapping]] = ..., cancel: _Optional[_Union[CancelRun, _Mapping]] = ..., decide: _Optional[_Union[DecideReview, _Mapping]] = ..., pending: _Optional[_Union[PendingReviews, _Mapping]] = ..., wait: _Optional[_Union[WaitRun, _Mapping]] = ..., detach: _Optional[_Union[Detach, _Mapping]] = ..., close: _Optional[_Union[CloseSession, _Mapping]] = ...) -> None: ...

class Refusal(_message.Message):
    __slots__ = ("message", "kind")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    message: str
    kind: str
    def __init__(self, message: _Optional[str] = ..., kind: _Optional[str] = ...) -> None: ...

class Reviews(_message.Message):
    __slots__ = ("reviews",)
    REVIEWS_FIELD_NUMBER: _ClassVar[int]
    reviews: _containers.RepeatedCompositeFieldContainer[_workbench_pb2.GuardDecision]
    def __init__(self, reviews: _Optional[_Iterable[_Union[_workbench_pb2.GuardDecision, _Mapping]]] = ...) -> None: ...

class Done(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class EngineMessage(_message.Message):
    __slots__ = ("id", "hello", "refused", "session", "sessions", "status", "event", "finished", "reviews", "done")
    ID_FIELD_NUMBER: _ClassVar[int]
    HELLO_FIELD_NUMBER: _ClassVar[int]
    REFUSED_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    REVIEWS_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    id: int
    hello: EngineHello
    refused: Refusal
    session: LiveSession
    sessions: LiveSessions
    status: EngineStatus
    event: _workbench_pb2.Event
    finished: _workbench_pb2.RunFinished
    reviews: Reviews
    done: Done
    def __init__(self, id: _Optional[int] = ..., hello: _Optional[_Union[EngineHello, _Mapping]] = ..., refused: _Optional[_Union[Refusal, _Mapping]] = ..., session: _Optional[_Union[LiveSession, _Mapping]] = ..., sessions: _Optional[_Union[LiveSessions, _Mapping]] = ..., status: _Optional[_Union[EngineStatus, _Mapping]] = ..., event: _Optional[_Union[_workbench_pb2.Event, _Mapping]] = ..., finished: _Optional[_Union[_workbench_pb2.RunFinished, _Mapping]] = ..., reviews: _Optional[_Union[Reviews, _Mapping]] = ..., done: _Optional[_Union[Done, _Mapping]] = ...) -> None: ...
