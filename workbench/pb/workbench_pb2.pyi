import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Role(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ROLE_UNSPECIFIED: _ClassVar[Role]
    ROLE_SYSTEM: _ClassVar[Role]
    ROLE_USER: _ClassVar[Role]
    ROLE_ASSISTANT: _ClassVar[Role]
    ROLE_TOOL: _ClassVar[Role]

class RunStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RUN_STATUS_UNSPECIFIED: _ClassVar[RunStatus]
    RUN_STATUS_FINISHED: _ClassVar[RunStatus]
    RUN_STATUS_TERMINATED: _ClassVar[RunStatus]
    RUN_STATUS_FAILED: _ClassVar[RunStatus]
    RUN_STATUS_BUDGET_EXHAUSTED: _ClassVar[RunStatus]
    RUN_STATUS_CANCELLED: _ClassVar[RunStatus]
    RUN_STATUS_WAIT_TIMEOUT: _ClassVar[RunStatus]
    RUN_STATUS_INTERRUPTED: _ClassVar[RunStatus]
    RUN_STATUS_STOPPED: _ClassVar[RunStatus]

class AgentStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    AGENT_STATUS_UNSPECIFIED: _ClassVar[AgentStatus]
    AGENT_STATUS_QUEUED: _ClassVar[AgentStatus]
    AGENT_STATUS_RUNNING: _ClassVar[AgentStatus]
    AGENT_STATUS_WAITING: _ClassVar[AgentStatus]
    AGENT_STATUS_COMPLETED: _ClassVar[AgentStatus]
    AGENT_STATUS_FAILED: _ClassVar[AgentStatus]
    AGENT_STATUS_TIMED_OUT: _ClassVar[AgentStatus]
    AGENT_STATUS_CANCELLED: _ClassVar[AgentStatus]
    AGENT_STATUS_INTERRUPTED: _ClassVar[AgentStatus]
    AGENT_STATUS_AWAITING_APPROVAL: _ClassVar[AgentStatus]

class SpawnMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SPAWN_MODE_UNSPECIFIED: _ClassVar[SpawnMode]
    SPAWN_MODE_ROOT: _ClassVar[SpawnMode]
    SPAWN_MODE_SYNC: _ClassVar[SpawnMode]
    SPAWN_MODE_ASYNC: _ClassVar[SpawnMode]
    SPAWN_MODE_FORK: _ClassVar[SpawnMode]

class GuardVerdict(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GUARD_VERDICT_UNSPECIFIED: _ClassVar[GuardVerdict]
    GUARD_VERDICT_RECORD: _ClassVar[GuardVerdict]
    GUARD_VERDICT_REVIEW: _ClassVar[GuardVerdict]
    GUARD_VERDICT_BLOCK: _ClassVar[GuardVerdict]

class Author(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    AUTHOR_UNSPECIFIED: _ClassVar[Author]
    AUTHOR_PERSON: _ClassVar[Author]
    AUTHOR_PARENT: _ClassVar[Author]
    AUTHOR_INBOX: _ClassVar[Author]
    AUTHOR_WORKBENCH: _ClassVar[Author]

class InboxKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    INBOX_KIND_UNSPECIFIED: _ClassVar[InboxKind]
    INBOX_KIND_COMPLETION: _ClassVar[InboxKind]
    INBOX_KIND_MESSAGE: _ClassVar[InboxKind]

class CheckpointReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHECKPOINT_REASON_UNSPECIFIED: _ClassVar[CheckpointReason]
    CHECKPOINT_REASON_TOOL_CALL: _ClassVar[CheckpointReason]
    CHECKPOINT_REASON_TURN: _ClassVar[CheckpointReason]
    CHECKPOINT_REASON_REWIND: _ClassVar[CheckpointReason]
    CHECKPOINT_REASON_RUN_END: _ClassVar[CheckpointReason]
ROLE_UNSPECIFIED: Role
ROLE_SYSTEM: Role
ROLE_USER: Role
ROLE_ASSISTANT: Role
ROLE_TOOL: Role
RUN_STATUS_UNSPECIFIED: RunStatus
RUN_STATUS_FINISHED: RunStatus
RUN_STATUS_TERMINATED: RunStatus
RUN_STATUS_FAILED: RunStatus
RUN_STATUS_BUDGET_EXHAUSTED: RunStatus
RUN_STATUS_CANCELLED: RunStatus
RUN_STATUS_WAIT_TIMEOUT: RunStatus
RUN_STATUS_INTERRUPTED: RunStatus
RUN_STATUS_STOPPED: RunStatus
AGENT_STATUS_UNSPECIFIED: AgentStatus
AGENT_STATUS_QUEUED: AgentStatus
AGENT_STATUS_RUNNING: AgentStatus
AGENT_STATUS_WAITING: AgentStatus
AGENT_STATUS_COMPLETED: AgentStatus
AGENT_STATUS_FAILED: AgentStatus
AGENT_STATUS_TIMED_OUT: AgentStatus
AGENT_STATUS_CANCELLED: AgentStatus
AGENT_STATUS_INTERRUPTED: AgentStatus
AGENT_STATUS_AWAITING_APPROVAL: AgentStatus
SPAWN_MODE_UNSPECIFIED: SpawnMode
SPAWN_MODE_ROOT: SpawnMode
SPAWN_MODE_SYNC: SpawnMode
SPAWN_MODE_ASYNC: SpawnMode
SPAWN_MODE_FORK: SpawnMode
GUARD_VERDICT_UNSPECIFIED: GuardVerdict
GUARD_VERDICT_RECORD: GuardVerdict
GUARD_VERDICT_REVIEW: GuardVerdict
GUARD_VERDICT_BLOCK: GuardVerdict
AUTHOR_UNSPECIFIED: Author
AUTHOR_PERSON: Author
AUTHOR_PARENT: Author
AUTHOR_INBOX: Author
AUTHOR_WORKBENCH: Author
INBOX_KIND_UNSPECIFIED: InboxKind
INBOX_KIND_COMPLETION: InboxKind
INBOX_KIND_MESSAGE: InboxKind
CHECKPOINT_REASON_UNSPECIFIED: CheckpointReason
CHECKPOINT_REASON_TOOL_CALL: CheckpointReason
CHECKPOINT_REASON_TURN: CheckpointReason
CHECKPOINT_REASON_REWIND: CheckpointReason
CHECKPOINT_REASON_RUN_END: CheckpointReason

class ToolCall(_message.Message):
    __slots__ = ("id", "name", "arguments", "provider_id", "from_text", "repaired")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_TEXT_FIELD_NUMBER: _ClassVar[int]
    REPAIRED_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    arguments: str
    provider_id: str
    from_text: bool
    repaired: bool
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., arguments: _Optional[str] = ..., provider_id: _Optional[str] = ..., from_text: _Optional[bool] = ..., repaired: _Optional[bool] = ...) -> None: ...

class Media(_message.Message):
    __slots__ = ("mime_type", "data", "path")
    MIME_TYPE_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    mime_type: str
    data: bytes
    path: str
    def __init__(self, mime_type: _Optional[str] = ..., data: _Optional[bytes] = ..., path: _Optional[str] = ...) -> None: ...

class ToolResult(_message.Message):
    __slots__ = ("call_id", "name", "output", "error", "is_error", "terminate", "duration", "media", "metadata", "notes")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    IS_ERROR_FIELD_NUMBER: _ClassVar[int]
    TERMINATE_FIELD_NUMBER: _ClassVar[int]
    DURATION_FIELD_NUMBER: _ClassVar[int]
    MEDIA_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    name: str
    output: str
    error: str
    is_error: bool
    terminate: bool
    duration: float
    media: _containers.RepeatedCompositeFieldContainer[Media]
    metadata: _struct_pb2.Struct
    notes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, call_id: _Optional[str] = ..., name: _Optional[str] = ..., output: _Optional[str] = ..., error: _Optional[str] = ..., is_error: _Optional[bool] = ..., terminate: _Optional[bool] = ..., duration: _Optional[float] = ..., media: _Optional[_Iterable[_Union[Media, _Mapping]]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., notes: _Optional[_Iterable[str]] = ...) -> None: ...

class ToolDefinition(_message.Message):
    __slots__ = ("name", "description", "parameters")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    parameters: _struct_pb2.Struct
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., parameters: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class Usage(_message.Message):
    __slots__ = ("input_tokens", "output_tokens", "cost", "cache_read_tokens", "calls")
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COST_FIELD_NUMBER: _ClassVar[int]
    CACHE_READ_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CALLS_FIELD_NUMBER: _ClassVar[int]
    input_tokens: int
    output_tokens: int
    cost: float
    cache_read_tokens: int
    calls: int
    def __init__(self, input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., cost: _Optional[float] = ..., cache_read_tokens: _Optional[int] = ..., calls: _Optional[int] = ...) -> None: ...

class Message(_message.Message):
    __slots__ = ("role", "text", "tool_calls", "tool_result", "usage", "model", "author")
    ROLE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULT_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    role: Role
    text: str
    tool_calls: _containers.RepeatedCompositeFieldContainer[ToolCall]
    tool_result: ToolResult
    usage: Usage
    model: str
    author: Author
    def __init__(self, role: _Optional[_Union[Role, str]] = ..., text: _Optional[str] = ..., tool_calls: _Optional[_Iterable[_Union[ToolCall, _Mapping]]] = ..., tool_result: _Optional[_Union[ToolResult, _Mapping]] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ..., model: _Optional[str] = ..., author: _Optional[_Union[Author, str]] = ...) -> None: ...

class AgentInfo(_message.Message):
    __slots__ = ("id", "parent_id", "name", "mode", "status", "model", "prompt", "depth", "tools", "created", "timeout", "usage")
    ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    id: str
    parent_id: str
    name: str
    mode: SpawnMode
    status: AgentStatus
    model: str
    prompt: str
    depth: int
    tools: _containers.RepeatedScalarFieldContainer[str]
    created: _timestamp_pb2.Timestamp
    timeout: float
    usage: Usage
    def __init__(self, id: _Optional[str] = ..., parent_id: _Optional[str] = ..., name: _Optional[str] = ..., mode: _Optional[_Union[SpawnMode, str]] = ..., status: _Optional[_Union[AgentStatus, str]] = ..., model: _Optional[str] = ..., prompt: _Optional[str] = ..., depth: _Optional[int] = ..., tools: _Optional[_Iterable[str]] = ..., created: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., timeout: _Optional[float] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ...) -> None: ...

class InboxItem(_message.Message):
    __slots__ = ("kind", "child_id", "child_name", "status", "result", "cause", "text", "recipient_id")
    KIND_FIELD_NUMBER: _ClassVar[int]
    CHILD_ID_FIELD_NUMBER: _ClassVar[int]
    CHILD_NAME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    CAUSE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    RECIPIENT_ID_FIELD_NUMBER: _ClassVar[int]
    kind: InboxKind
    child_id: str
    child_name: str
    status: AgentStatus
    result: str
    cause: str
    text: str
    recipient_id: str
    def __init__(self, kind: _Optional[_Union[InboxKind, str]] = ..., child_id: _Optional[str] = ..., child_name: _Optional[str] = ..., status: _Optional[_Union[AgentStatus, str]] = ..., result: _Optional[str] = ..., cause: _Optional[str] = ..., text: _Optional[str] = ..., recipient_id: _Optional[str] = ...) -> None: ...

class RunStarted(_message.Message):
    __slots__ = ("prompt", "model", "workspace", "tools", "system_prompt")
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_PROMPT_FIELD_NUMBER: _ClassVar[int]
    prompt: str
    model: str
    workspace: str
    tools: _containers.RepeatedScalarFieldContainer[str]
    system_prompt: str
    def __init__(self, prompt: _Optional[str] = ..., model: _Optional[str] = ..., workspace: _Optional[str] = ..., tools: _Optional[_Iterable[str]] = ..., system_prompt: _Optional[str] = ...) -> None: ...

class RunFinished(_message.Message):
    __slots__ = ("status", "text", "reason", "usage")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    status: RunStatus
    text: str
    reason: str
    usage: Usage
    def __init__(self, status: _Optional[_Union[RunStatus, str]] = ..., text: _Optional[str] = ..., reason: _Optional[str] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ...) -> None: ...

class TextDelta(_message.Message):
    __slots__ = ("text",)
    TEXT_FIELD_NUMBER: _ClassVar[int]
    text: str
    def __init__(self, text: _Optional[str] = ...) -> None: ...

class ToolCallStarted(_message.Message):
    __slots__ = ("call",)
    CALL_FIELD_NUMBER: _ClassVar[int]
    call: ToolCall
    def __init__(self, call: _Optional[_Union[ToolCall, _Mapping]] = ...) -> None: ...

class ToolOutputChunk(_message.Message):
    __slots__ = ("call_id", "text")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    text: str
    def __init__(self, call_id: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class ToolCallFinished(_message.Message):
    __slots__ = ("result",)
    RESULT_FIELD_NUMBER: _ClassVar[int]
    result: ToolResult
    def __init__(self, result: _Optional[_Union[ToolResult, _Mapping]] = ...) -> None: ...

class Defect(_message.Message):
    __slots__ = ("where", "call_id", "error_type", "message", "traceback")
    WHERE_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_TYPE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    TRACEBACK_FIELD_NUMBER: _ClassVar[int]
    where: str
    call_id: str
    error_type: str
    message: str
    traceback: str
    def __init__(self, where: _Optional[str] = ..., call_id: _Optional[str] = ..., error_type: _Optional[str] = ..., message: _Optional[str] = ..., traceback: _Optional[str] = ...) -> None: ...

class RetryWait(_message.Message):
    __slots__ = ("attempt", "max_attempts", "reason", "seconds", "status_code")
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    MAX_ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    SECONDS_FIELD_NUMBER: _ClassVar[int]
    STATUS_CODE_FIELD_NUMBER: _ClassVar[int]
    attempt: int
    max_attempts: int
    reason: str
    seconds: float
    status_code: int
    def __init__(self, attempt: _Optional[int] = ..., max_attempts: _Optional[int] = ..., reason: _Optional[str] = ..., seconds: _Optional[float] = ..., status_code: _Optional[int] = ...) -> None: ...

class StreamDiscarded(_message.Message):
    __slots__ = ("attempt", "discarded_chars", "reason")
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    DISCARDED_CHARS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    attempt: int
    discarded_chars: int
    reason: str
    def __init__(self, attempt: _Optional[int] = ..., discarded_chars: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class Compaction(_message.Message):
    __slots__ = ("messages_before", "messages_after", "reason", "tokens_before")
    MESSAGES_BEFORE_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_AFTER_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    TOKENS_BEFORE_FIELD_NUMBER: _ClassVar[int]
    messages_before: int
    messages_after: int
    reason: str
    tokens_before: int
    def __init__(self, messages_before: _Optional[int] = ..., messages_after: _Optional[int] = ..., reason: _Optional[str] = ..., tokens_before: _Optional[int] = ...) -> None: ...

class AgentSpawned(_message.Message):
    __slots__ = ("agent",)
    AGENT_FIELD_NUMBER: _ClassVar[int]
    agent: AgentInfo
    def __init__(self, agent: _Optional[_Union[AgentInfo, _Mapping]] = ...) -> None: ...

class AgentStatusChanged(_message.Message):
    __slots__ = ("agent_id", "status")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    status: AgentStatus
    def __init__(self, agent_id: _Optional[str] = ..., status: _Optional[_Union[AgentStatus, str]] = ...) -> None: ...

class AgentFinished(_message.Message):
    __slots__ = ("agent_id", "status", "result", "cause", "usage")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    CAUSE_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    status: AgentStatus
    result: str
    cause: str
    usage: Usage
    def __init__(self, agent_id: _Optional[str] = ..., status: _Optional[_Union[AgentStatus, str]] = ..., result: _Optional[str] = ..., cause: _Optional[str] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ...) -> None: ...

class GuardDecision(_message.Message):
    __slots__ = ("call_id", "verdict", "reason", "judge", "call", "shown")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    JUDGE_FIELD_NUMBER: _ClassVar[int]
    CALL_FIELD_NUMBER: _ClassVar[int]
    SHOWN_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    verdict: GuardVerdict
    reason: str
    judge: str
    call: ToolCall
    shown: str
    def __init__(self, call_id: _Optional[str] = ..., verdict: _Optional[_Union[GuardVerdict, str]] = ..., reason: _Optional[str] = ..., judge: _Optional[str] = ..., call: _Optional[_Union[ToolCall, _Mapping]] = ..., shown: _Optional[str] = ...) -> None: ...

class ReviewDecided(_message.Message):
    __slots__ = ("call_id", "approved", "reason", "remember")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    APPROVED_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    REMEMBER_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    approved: bool
    reason: str
    remember: bool
    def __init__(self, call_id: _Optional[str] = ..., approved: _Optional[bool] = ..., reason: _Optional[str] = ..., remember: _Optional[bool] = ...) -> None: ...

class PromptQueued(_message.Message):
    __slots__ = ("text",)
    TEXT_FIELD_NUMBER: _ClassVar[int]
    text: str
    def __init__(self, text: _Optional[str] = ...) -> None: ...

class Notice(_message.Message):
    __slots__ = ("level", "text")
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    level: str
    text: str
    def __init__(self, level: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class ToolCallDelta(_message.Message):
    __slots__ = ("index", "name", "chars")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    CHARS_FIELD_NUMBER: _ClassVar[int]
    index: int
    name: str
    chars: int
    def __init__(self, index: _Optional[int] = ..., name: _Optional[str] = ..., chars: _Optional[int] = ...) -> None: ...

class SessionInfo(_message.Message):
    __slots__ = ("id", "title", "workspace", "model", "created", "updated", "status", "usage", "live")
    ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    UPDATED_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    LIVE_FIELD_NUMBER: _ClassVar[int]
    id: str
    title: str
    workspace: str
    model: str
    created: _timestamp_pb2.Timestamp
    updated: _timestamp_pb2.Timestamp
    status: RunStatus
    usage: Usage
    live: bool
    def __init__(self, id: _Optional[str] = ..., title: _Optional[str] = ..., workspace: _Optional[str] = ..., model: _Optional[str] = ..., created: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., status: _Optional[_Union[RunStatus, str]] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ..., live: _Optional[bool] = ...) -> None: ...

class TerminalReady(_message.Message):
    __slots__ = ("socket_name", "attach_command")
    SOCKET_NAME_FIELD_NUMBER: _ClassVar[int]
    ATTACH_COMMAND_FIELD_NUMBER: _ClassVar[int]
    socket_name: str
    attach_command: str
    def __init__(self, socket_name: _Optional[str] = ..., attach_command: _Optional[str] = ...) -> None: ...

class UsageUpdate(_message.Message):
    __slots__ = ("call", "agent_total", "session_total")
    CALL_FIELD_NUMBER: _ClassVar[int]
    AGENT_TOTAL_FIELD_NUMBER: _ClassVar[int]
    SESSION_TOTAL_FIELD_NUMBER: _ClassVar[int]
    call: Usage
    agent_total: Usage
    session_total: Usage
    def __init__(self, call: _Optional[_Union[Usage, _Mapping]] = ..., agent_total: _Optional[_Union[Usage, _Mapping]] = ..., session_total: _Optional[_Union[Usage, _Mapping]] = ...) -> None: ...

class Checkpoint(_message.Message):
    __slots__ = ("commit", "reason", "turn", "call_id", "tool", "files_changed", "skipped", "error", "unchanged")
    COMMIT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    FILES_CHANGED_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    UNCHANGED_FIELD_NUMBER: _ClassVar[int]
    commit: str
    reason: CheckpointReason
    turn: int
    call_id: str
    tool: str
    files_changed: int
    skipped: _containers.RepeatedScalarFieldContainer[str]
    error: str
    unchanged: bool
    def __init__(self, commit: _Optional[str] = ..., reason: _Optional[_Union[CheckpointReason, str]] = ..., turn: _Optional[int] = ..., call_id: _Optional[str] = ..., tool: _Optional[str] = ..., files_changed: _Optional[int] = ..., skipped: _Optional[_Iterable[str]] = ..., error: _Optional[str] = ..., unchanged: _Optional[bool] = ...) -> None: ...

class Rewind(_message.Message):
    __slots__ = ("to_turn", "code", "conversation", "restored_commit", "before_commit", "files", "conversation_seq", "undo")
    TO_TURN_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_FIELD_NUMBER: _ClassVar[int]
    RESTORED_COMMIT_FIELD_NUMBER: _ClassVar[int]
    BEFORE_COMMIT_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_SEQ_FIELD_NUMBER: _ClassVar[int]
    UNDO_FIELD_NUMBER: _ClassVar[int]
    to_turn: int
    code: bool
    conversation: bool
    restored_commit: str
    before_commit: str
    files: _containers.RepeatedScalarFieldContainer[str]
    conversation_seq: int
    undo: bool
    def __init__(self, to_turn: _Optional[int] = ..., code: _Optional[bool] = ..., conversation: _Optional[bool] = ..., restored_commit: _Optional[str] = ..., before_commit: _Optional[str] = ..., files: _Optional[_Iterable[str]] = ..., conversation_seq: _Optional[int] = ..., undo: _Optional[bool] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("session_id", "agent_id", "seq", "time", "run_started", "run_finished", "text_delta", "message", "tool_call_started", "tool_output", "tool_call_finished", "defect", "retry_wait", "inbox_item", "agent_spawned", "agent_status", "agent_finished", "guard_decision", "stream_discarded", "compaction", "terminal_ready", "usage_update", "review_decided", "prompt_queued", "notice", "tool_call_delta", "checkpoint", "rewind")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    RUN_STARTED_FIELD_NUMBER: _ClassVar[int]
    RUN_FINISHED_FIELD_NUMBER: _ClassVar[int]
    TEXT_DELTA_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_STARTED_FIELD_NUMBER: _ClassVar[int]
    TOOL_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_FINISHED_FIELD_NUMBER: _ClassVar[int]
    DEFECT_FIELD_NUMBER: _ClassVar[int]
    RETRY_WAIT_FIELD_NUMBER: _ClassVar[int]
    INBOX_ITEM_FIELD_NUMBER: _ClassVar[int]
    AGENT_SPAWNED_FIELD_NUMBER: _ClassVar[int]
    AGENT_STATUS_FIELD_NUMBER: _ClassVar[int]
    AGENT_FINISHED_FIELD_NUMBER: _ClassVar[int]
    GUARD_DECISION_FIELD_NUMBER: _ClassVar[int]
    STREAM_DISCARDED_FIELD_NUMBER: _ClassVar[int]
    COMPACTION_FIELD_NUMBER: _ClassVar[int]
    TERMINAL_READY_FIELD_NUMBER: _ClassVar[int]
    USAGE_UPDATE_FIELD_NUMBER: _ClassVar[int]
    REVIEW_DECIDED_FIELD_NUMBER: _ClassVar[int]
    PROMPT_QUEUED_FIELD_NUMBER: _ClassVar[int]
    NOTICE_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_DELTA_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    REWIND_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    agent_id: str
    seq: int
    time: _timestamp_pb2.Timestamp
    run_started: RunStarted
    run_finished: RunFinished
    text_delta: TextDelta
    message: Message
    tool_call_started: ToolCallStarted
    tool_output: ToolOutputChunk
    tool_call_finished: ToolCallFinished
    defect: Defect
    retry_wait: RetryWait
    inbox_item: InboxItem
    agent_spawned: AgentSpawned
    agent_status: AgentStatusChanged
    agent_finished: AgentFinished
    guard_decision: GuardDecision
    stream_discarded: StreamDiscarded
    compaction: Compaction
    terminal_ready: TerminalReady
    usage_update: UsageUpdate
    review_decided: ReviewDecided
    prompt_queued: PromptQueued
    notice: Notice
    tool_call_delta: ToolCallDelta
    checkpoint: Checkpoint
    rewind: Rewind
    def __init__(self, session_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., seq: _Optional[int] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., run_started: _Optional[_Union[RunStarted, _Mapping]] = ..., run_finished: _Optional[_Union[RunFinished, _Mapping]] = ..., text_delta: _Optional[_Union[TextDelta, _Mapping]] = ..., message: _Optional[_Union[Message, _Mapping]] = ..., tool_call_started: _Optional[_Union[ToolCallStarted, _Mapping]] = ..., tool_output: _Optional[_Union[ToolOutputChunk, _Mapping]] = ..., tool_call_finished: _Optional[_Union[ToolCallFinished, _Mapping]] = ..., defect: _Optional[_Union[Defect, _Mapping]] = ..., retry_wait: _Optional[_Union[RetryWait, _Mapping]] = ..., inbox_item: _Optional[_Union[InboxItem, _Mapping]] = ..., agent_spawned: _Optional[_Union[AgentSpawned, _Mapping]] = ..., agent_status: _Optional[_Union[AgentStatusChanged, _Mapping]] = ..., agent_finished: _Optional[_Union[AgentFinished, _Mapping]] = ..., guard_decision: _Optional[_Union[GuardDecision, _Mapping]] = ..., stream_discarded: _Optional[_Union[StreamDiscarded, _Mapping]] = ..., compaction: _Optional[_Union[Compaction, _Mapping]] = ..., terminal_ready: _Optional[_Union[TerminalReady, _Mapping]] = ..., usage_update: _Optional[_Union[UsageUpdate, _Mapping]] = ..., review_decided: _Optional[_Union[ReviewDecided, _Mapping]] = ..., prompt_queued: _Optional[_Union[PromptQueued, _Mapping]] = ..., notice: _Optional[_Union[Notice, _Mapping]] = ..., tool_call_delta: _Optional[_Union[ToolCallDelta, _Mapping]] = ..., checkpoint: _Optional[_Union[Checkpoint, _Mapping]] = ..., rewind: _Optional[_Union[Rewind, _Mapping]] = ...) -> None: ...
