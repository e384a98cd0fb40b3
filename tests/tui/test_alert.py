"""The review alert's bytes (workbench/tui/alert.py): the bell, OSC 9 or OSC 777, and text from the
model that can never end the sequence early or reach the terminal as a control."""

from __future__ import annotations

from workbench.pb import workbench_pb2 as pb
from workbench.tui.alert import alert_sequence, alert_text


def test_each_mode_writes_the_bell_and_its_notification() -> None:
    assert alert_sequence("off", "a2 needs you") == ""
    assert alert_sequence("bell", "a2 needs you") == "\a"
    assert alert_sequence("osc9", "a2 needs you") == "\a\x1b]9;workbench: a2 needs you\x1b\\"
    assert alert_sequence("osc777", "a2 needs you") == "\a\x1b]777;notify;workbench;a2 needs you\x1b\\"


def test_text_from_the_model_cannot_break_out_of_the_sequence() -> None:
    hostile = "x\x07\x1b]0;owned\x1b\\;9;\x9b31m\nname"
    for mode in ("osc9", "osc777"):
        sequence = alert_sequence(mode, hostile)
        body = sequence.removeprefix("\a")
        assert body.count("\x1b") == 2 and body.endswith("\x1b\\")  # its own start and end only
        assert "\x07" not in body and "\x9b" not in body and "\n" not in body
    assert alert_sequence("osc777", "a;b").endswith(";a b\x1b\\")  # no extra field


def test_the_text_names_the_agent_and_what_it_waits_for() -> None:
    write = pb.GuardDecision(judge="rule", call=pb.ToolCall(name="write_file"))
    assert alert_text(write, "a4") == "a4 needs you: review write_file"
    assert alert_text(pb.GuardDecision(judge="repeats", call=pb.ToolCall(name="read_file")), "") == (
        "main needs you: is looping"
    )
