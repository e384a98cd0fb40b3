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
    __slots__ = ("environ", "cwd", "flags", "resume", "answerable", "interactive", "mcp_servers")
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
    class McpServersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ENVIRON_FIELD_NUMBER: _ClassVar[int]
    CWD_FIELD_NUMBER: _ClassVar[int]
    FLAGS_FIELD_NUMBER: _ClassVar[int]
    RESUME_FIELD_NUMBER: _ClassVar[int]
    ANSWERABLE_FIELD_NUMBER: _ClassVar[int]
    INTERACTIVE_FIELD_NUMBER: _ClassVar[int]
    MCP_SERVERS_FIELD_NUMBER: _ClassVar[int]
    environ: _containers.ScalarMap[str, str]
    cwd: str
    flags: _containers.MessageMap[str, FlagValue]
    resume: str
    answerable: bool
    interactive: bool
    mcp_servers: _containers.ScalarMap[str, str]
    def __init__(self, environ: _Optional[_Mapping[str, str]] = ..., cwd: _Optional[str] = ..., flags: _Optional[_Mapping[str, FlagValue]] = ..., resume: _Optional[str] = ..., answerable: _Optional[bool] = ..., interactive: _Optional[bool] = ..., mcp_servers: _Optional[_Mapping[str, str]] = ...) -> None: ...

class LiveSession(_message.Message):
    __slots__ = ("id", "socket", "workspace", "model", "data_dir", "sandbox", "mcp_servers", "state", "pid", "clients", "approval", "busy")
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
    APPROVAL_FIELD_NUMBER: _ClassVar[int]
    BUSY_FIELD_NUMBER: _ClassVar[int]
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
    approval: str
    busy: bool
    def __init__(self, id: _Optional[str] = ..., socket: _Optional[str] = ..., workspace: _Optional[str] = ..., model: _Optional[str] = ..., data_dir: _Optional[str] = ..., sandbox: _Optional[str] = ..., mcp_servers: _Optional[str] = ..., state: _Optional[str] = ..., pid: _Optional[int] = ..., clients: _Optional[int] = ..., approval: _Optional[str] = ..., busy: _Optional[bool] = ...) -> None: ...

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

class ContextWindow(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ContextWindowIs(_message.Message):
    __slots__ = ("tokens",)
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    tokens: int
    def __init__(self, tokens: _Optional[int] = ...) -> None: ...

class CycleApproval(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ApprovalIs(_message.Message):
    __slots__ = ("mode",)
    MODE_FIELD_NUMBER: _ClassVar[int]
    mode: str
    def __init__(self, mode: _Optional[str] = ...) -> None: ...

class Compact(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RestoreFile(_message.Message):
    __slots__ = ("path",)
    PATH_FIELD_NUMBER: _ClassVar[int]
    path: str
    def __init__(self, path: _Optional[str] = ...) -> None: ...

class ListTurns(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class FileChange(_message.Message):
    __slots__ = ("path", "kind", "added", "removed", "diff")
    PATH_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    ADDED_FIELD_NUMBER: _ClassVar[int]
    REMOVED_FIELD_NUMBER: _ClassVar[int]
    DIFF_FIELD_NUMBER: _ClassVar[int]
    path: str
    kind: str
    added: int
    removed: int
    diff: str
    def __init__(self, path: _Optional[str] = ..., kind: _Optional[str] = ..., added: _Optional[int] = ..., removed: _Optional[int] = ..., diff: _Optional[str] = ...) -> None: ...

class CallSummary(_message.Message):
    __slots__ = ("agent_id", "tool", "call_id", "changed_by_it")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    CHANGED_BY_IT_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    tool: str
    call_id: str
    changed_by_it: int
    def __init__(self, agent_id: _Optional[str] = ..., tool: _Optional[str] = ..., call_id: _Optional[str] = ..., changed_by_it: _Optional[int] = ...) -> None: ...

class TurnSummary(_message.Message):
    __slots__ = ("number", "prompt", "commit", "calls", "files")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    COMMIT_FIELD_NUMBER: _ClassVar[int]
    CALLS_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    number: int
    prompt: str
    commit: str
    calls: _containers.RepeatedCompositeFieldContainer[CallSummary]
    files: _containers.RepeatedCompositeFieldContainer[FileChange]
    def __init__(self, number: _Optional[int] = ..., prompt: _Optional[str] = ..., commit: _Optional[str] = ..., calls: _Optional[_Iterable[_Union[CallSummary, _Mapping]]] = ..., files: _Optional[_Iterable[_Union[FileChange, _Mapping]]] = ...) -> None: ...

class Turns(_message.Message):
    __slots__ = ("turns",)
    TURNS_FIELD_NUMBER: _ClassVar[int]
    turns: _containers.RepeatedCompositeFieldContainer[TurnSummary]
    def __init__(self, turns: _Optional[_Iterable[_Union[TurnSummary, _Mapping]]] = ...) -> None: ...

class PlanRewind(_message.Message):
    __slots__ = ("to_turn", "code", "conversation")
    TO_TURN_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_FIELD_NUMBER: _ClassVar[int]
    to_turn: int
    code: bool
    conversation: bool
    def __init__(self, to_turn: _Optional[int] = ..., code: _Optional[bool] = ..., conversation: _Optional[bool] = ...) -> None: ...

class RewindPlanView(_message.Message):
    __slots__ = ("plan", "to_turn", "code", "conversation", "undo", "what", "files", "outside", "conversation_seq", "messages_dropped", "whole")
    PLAN_FIELD_NUMBER: _ClassVar[int]
    TO_TURN_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_FIELD_NUMBER: _ClassVar[int]
    UNDO_FIELD_NUMBER: _ClassVar[int]
    WHAT_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    OUTSIDE_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_SEQ_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_DROPPED_FIELD_NUMBER: _ClassVar[int]
    WHOLE_FIELD_NUMBER: _ClassVar[int]
    plan: int
    to_turn: int
    code: bool
    conversation: bool
    undo: bool
    what: str
    files: _containers.RepeatedCompositeFieldContainer[FileChange]
    outside: _containers.RepeatedScalarFieldContainer[str]
    conversation_seq: int
    messages_dropped: int
    whole: bool
    def __init__(self, plan: _Optional[int] = ..., to_turn: _Optional[int] = ..., code: _Optional[bool] = ..., conversation: _Optional[bool] = ..., undo: _Optional[bool] = ..., what: _Optional[str] = ..., files: _Optional[_Iterable[_Union[FileChange, _Mapping]]] = ..., outside: _Optional[_Iterable[str]] = ..., conversation_seq: _Optional[int] = ..., messages_dropped: _Optional[int] = ..., whole: _Optional[bool] = ...) -> None: ...

class ApplyRewind(_message.Message):
    __slots__ = ("plan", "overwrite_outside")
    PLAN_FIELD_NUMBER: _ClassVar[int]
    OVERWRITE_OUTSIDE_FIELD_NUMBER: _ClassVar[int]
    plan: int
    overwrite_outside: bool
    def __init__(self, plan: _Optional[int] = ..., overwrite_outside: _Optional[bool] = ...) -> None: ...

class CloseSession(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ClientMessage(_message.Message):
    __slots__ = ("id", "hello", "open", "attach", "list", "stop", "status", "subscribe", "send", "cancel", "decide", "pending", "wait", "detach", "close", "context_window", "cycle_approval", "compact", "restore_file", "turns", "plan_rewind", "rewind")
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
    CONTEXT_WINDOW_FIELD_NUMBER: _ClassVar[int]
    CYCLE_APPROVAL_FIELD_NUMBER: _ClassVar[int]
    COMPACT_FIELD_NUMBER: _ClassVar[int]
    RESTORE_FILE_FIELD_NUMBER: _ClassVar[int]
    TURNS_FIELD_NUMBER: _ClassVar[int]
    PLAN_REWIND_FIELD_NUMBER: _ClassVar[int]
    REWIND_FIELD_NUMBER: _ClassVar[int]
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
    context_window: ContextWindow
    cycle_approval: CycleApproval
    compact: Compact
    restore_file: RestoreFile
    turns: ListTurns
    plan_rewind: PlanRewind
    rewind: ApplyRewind
    def __init__(self, id: _Optional[int] = ..., hello: _Optional[_Union[ClientHello, _Mapping]] = ..., open: _Optional[_Union[OpenSession, _Mapping]] = ..., attach: _Optional[_Union[AttachSession, _Mapping]] = ..., list: _Optional[_Union[ListSessions, _Mapping]] = ..., stop: _Optional[_Union[StopEngine, _Mapping]] = ..., status: _Optional[_Union[EngineStatus, _Mapping]] = ..., subscribe: _Optional[_Union[Subscribe, _Mapping]] = ..., send: _Optional[_Union[SendPrompt, _Mapping]] = ..., cancel: _Optional[_Union[CancelRun, _Mapping]] = ..., decide: _Optional[_Union[DecideReview, _Mapping]] = ..., pending: _Optional[_Union[PendingReviews, _Mapping]] = ..., wait: _Optional[_Union[WaitRun, _Mapping]] = ..., detach: _Optional[_Union[Detach, _Mapping]] = ..., close: _Optional[_Union[CloseSession, _Mapping]] = ..., context_window: _Optional[_Union[ContextWindow, _Mapping]] = ..., cycle_approval: _Optional[_Union[CycleApproval, _Mapping]] = ..., compact: _Optional[_Union[Compact, _Mapping]] = ..., restore_file: _Optional[_Union[RestoreFile, _Mapping]] = ..., turns: _Optional[_Union[ListTurns, _Mapping]] = ..., plan_rewind: _Optional[_Union[PlanRewind, _Mapping]] = ..., rewind: _Optional[_Union[ApplyRewind, _Mapping]] = ...) -> None: ...

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
    __slots__ = ("id", "hello", "refused", "session", "sessions", "status", "event", "finished", "reviews", "done", "context_window", "approval", "rewound", "turns", "plan")
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
    CONTEXT_WINDOW_FIELD_NUMBER: _ClassVar[int]
    APPROVAL_FIELD_NUMBER: _ClassVar[int]
    REWOUND_FIELD_NUMBER: _ClassVar[int]
    TURNS_FIELD_NUMBER: _ClassVar[int]
    PLAN_FIELD_NUMBER: _ClassVar[int]
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
    context_window: ContextWindowIs
    approval: ApprovalIs
    rewound: _workbench_pb2.Rewind
    turns: Turns
    plan: RewindPlanView
    def __init__(self, id: _Optional[int] = ..., hello: _Optional[_Union[EngineHello, _Mapping]] = ..., refused: _Optional[_Union[Refusal, _Mapping]] = ..., session: _Optional[_Union[LiveSession, _Mapping]] = ..., sessions: _Optional[_Union[LiveSessions, _Mapping]] = ..., status: _Optional[_Union[EngineStatus, _Mapping]] = ..., event: _Optional[_Union[_workbench_pb2.Event, _Mapping]] = ..., finished: _Optional[_Union[_workbench_pb2.RunFinished, _Mapping]] = ..., reviews: _Optional[_Union[Reviews, _Mapping]] = ..., done: _Optional[_Union[Done, _Mapping]] = ..., context_window: _Optional[_Union[ContextWindowIs, _Mapping]] = ..., approval: _Optional[_Union[ApprovalIs, _Mapping]] = ..., rewound: _Optional[_Union[_workbench_pb2.Rewind, _Mapping]] = ..., turns: _Optional[_Union[Turns, _Mapping]] = ..., plan: _Optional[_Union[RewindPlanView, _Mapping]] = ...) -> None: ...
