"""Repeated calls (workbench/engine/repeats.py): the key, the reminder, the note, the stop, without a model."""

from __future__ import annotations

from pathlib import Path

from workbench.engine.repeats import REMIND_AFTER, STOP_AFTER, Repeats, call_key, loose_key
from workbench.pb import workbench_pb2 as pb


def failed(call: pb.ToolCall) -> pb.ToolResult:
    return pb.ToolResult(call_id=call.id, name=call.name, is_error=True, error="no such file")


def test_the_key_is_the_parsed_arguments_in_canonical_form() -> None:
    pretty = pb.ToolCall(name="read_file", arguments='{\n  "path": "a",\n  "limit": 5\n}')
    compact = pb.ToolCall(name="read_file", arguments='{"limit":5,"path":"a"}')
    assert call_key(pretty) == call_key(compact) == ("read_file", '{"limit":5,"path":"a"}')
    assert call_key(pb.ToolCall(name="ls", arguments="")) == ("ls", "{}")
    assert call_key(pb.ToolCall(name="ls", arguments=' {"path": ')) == ("ls", '{"path":')  # not JSON: raw, stripped
    assert call_key(pb.ToolCall(name="ls", arguments='{"p": "é"}')) != call_key(
        pb.ToolCall(name="ls", arguments='{"p": "e"}')
    )


def test_what_cannot_change_the_outcome_is_one_spelling(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "link.txt").symlink_to("a.txt")

    def key(name: str, arguments: str) -> tuple[str, str]:
        return call_key(pb.ToolCall(name=name, arguments=arguments), ws)

    a = key("read_file", '{"path": "a.txt"}')
    for same in ("./a.txt", " a.txt ", f"{ws}/a.txt", "sub/../a.txt", ".//a.txt", "link.txt"):
        assert key("read_file", f'{{"path": "{same}"}}') == a, same
    assert key("read_file", '{"path": "b.txt"}') != a
    assert key("ls", "{}") == key("ls", '{"path": "./"}') == key("ls", f'{{"path": "{ws}"}}')
    assert key("read_file", r'{"path": "a\u0000"}')[1] == r'{"path":"a\u0000"}'  # no file: as spelled
    assert key("mcp__x", '{"path": "./a.txt"}') != key("mcp__x", '{"path": "a.txt"}')  # not a file tool's path
    bash = key("bash", '{"command": "ls -l", "timeout": 120}')
    assert key("bash", r'{"command": " ls -l \n", "timeout": 120.0}') == bash
    assert key("bash", '{"command": "ls -l", "timeout": 1.2e2}') == bash
    assert key("bash", '{"command": "ls  -l", "timeout": 120}') != bash  # inside the command it may matter
    assert key("bash", '{"command": "ls -l", "timeout": 121}') != bash
    assert key("tmux", '{"text": "y "}') != key("tmux", '{"text": "y"}')  # typed text: every space counts


def test_the_loose_key_drops_numbers_and_collapses_whitespace() -> None:
    def loose(name: str, arguments: str) -> tuple[str, str]:
        return loose_key(pb.ToolCall(name=name, arguments=arguments))

    bash = loose("bash", '{"command": "cat  a.txt", "timeout": 121}')
    assert bash == loose("bash", '{"command": "cat a.txt"}') == ("bash", '{"command":"cat a.txt"}')
    assert loose("x", '{"n": [1, "a  b", true]}') == ("x", '{"n":["a b",true]}')  # booleans are kept
    assert loose("bash", '{"command": "cat b.txt"}') != bash
    assert loose("x", '{"a": ') == ("x", '{"a":')  # not JSON: its text


def test_failures_remind_then_stop_and_a_change_starts_over() -> None:
    repeats = Repeats(changing=["write_file"])
    call = pb.ToolCall(id="c", name="read_file", arguments='{"path": "a"}')
    for n in range(1, STOP_AFTER + 1):
        assert repeats.refuse(call) is None
        result = failed(call)
        repeats.record(call, result, turn=n)
        assert bool(result.notes) == (n >= REMIND_AFTER)
    refused = repeats.refuse(call)
    assert refused is not None and refused.is_error and f"failed {STOP_AFTER} times" in refused.error
    other = pb.ToolCall(id="r", name="read_file", arguments='{"path": "b"}')
    repeats.record(other, pb.ToolResult(output="ok"), turn=9)  # a read changes nothing
    assert repeats.refuse(call) is not None
    write = pb.ToolCall(id="w", name="write_file", arguments='{"path": "a", "content": ""}')
    repeats.record(write, pb.ToolResult(output="wrote"), turn=10)
    assert repeats.refuse(call) is None
    repeats.reset()
    assert repeats.refuse(call) is None


def test_the_same_result_again_is_noted_with_its_turn_and_a_new_result_is_not() -> None:
    repeats = Repeats(changing=[])
    call = pb.ToolCall(id="c", name="read_file", arguments='{"path": "a"}')
    repeats.record(call, pb.ToolResult(output="alpha"), turn=2)
    same_turn = pb.ToolResult(output="alpha")
    repeats.record(call, same_turn, turn=2)
    assert "turn 2 (earlier in this same turn)" in same_turn.notes[0]
    changed = pb.ToolResult(output="beta")
    repeats.record(call, changed, turn=3)
    assert not changed.notes
    again = pb.ToolResult(output="beta")
    repeats.record(call, again, turn=4)
    assert "turn 3 (1 turn ago)" in again.notes[0]


def test_a_call_made_k_times_with_one_outcome_and_nothing_changed_is_looping() -> None:
    repeats = Repeats(changing=["write_file"])
    call = pb.ToolCall(id="c", name="read_file", arguments='{"path": "a"}')
    for n in range(1, 4):
        assert repeats.looping(call, 3) == 0
        refused = repeats.refuse(call)  # the third is refused (same result twice): it still counts
        repeats.record(call, refused or pb.ToolResult(output="alpha"), turn=n)
    assert repeats.looping(call, 3) == 3 and repeats.looping(call, 0) == 0 and repeats.looping(call, 4) == 0
    repeats.go_on(call)  # the person let it go on: it counts from zero
    assert repeats.looping(call, 3) == 0
    # failures: the same failure three times loops; another failure in between starts over
    bad = pb.ToolCall(id="b", name="read_file", arguments='{"path": "b"}')
    for error in ("no such file", "no such file", "permission denied", "permission denied"):
        repeats.record(bad, pb.ToolResult(is_error=True, error=error), turn=5)
    assert repeats.looping(bad, 3) == 0
    repeats.record(bad, pb.ToolResult(is_error=True, error="permission denied"), turn=6)
    assert repeats.looping(bad, 3) == 3
    # a successful change with a new result: nothing else is looping any more
    write = pb.ToolCall(id="w", name="write_file", arguments='{"path": "b", "content": ""}')
    repeats.record(write, pb.ToolResult(output="wrote b"), turn=7)
    assert repeats.looping(bad, 3) == 0
