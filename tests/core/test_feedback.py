"""The feedback boundary: every tool outcome becomes one ToolResult the model can read."""

from __future__ import annotations

import asyncio

import pytest

from workbench.core.feedback import Feedback, cause_text, model_text, to_result
from workbench.pb import workbench_pb2 as pb

CALL = pb.ToolCall(id="c1", name="deploy", arguments="{}")


def test_plain_string_is_the_output() -> None:
    result = to_result(CALL, "done", duration=0.5)
    assert (result.call_id, result.name, result.output, result.is_error) == ("c1", "deploy", "done", False)
    assert result.duration == 0.5
    assert model_text(result) == "done"


def test_streamed_output_is_the_output_when_the_tool_returns_nothing() -> None:
    assert to_result(CALL, "", streamed="line\n").output == "line\n"


def test_tool_result_is_kept_and_stamped() -> None:
    result = to_result(CALL, pb.ToolResult(output="x", terminate=True, call_id="wrong"), duration=1.0)
    assert (result.call_id, result.output, result.terminate, result.duration) == ("c1", "x", True, 1.0)


def test_ordinary_exception_is_fed_back() -> None:
    result = to_result(CALL, FileNotFoundError(2, "No such file", "a.txt"))
    assert result.is_error and "No such file" in result.error
    assert model_text(result) == f"Error: {result.error}"


def test_feedback_message_and_cause_kept_apart() -> None:
    try:
        try:
            raise TimeoutError("socket timed out")
        except TimeoutError as err:
            raise Feedback("the registry did not answer; try again later") from err
    except Feedback as fb:
        caught = fb
    assert isinstance(caught.__cause__, TimeoutError)  # the chain survives
    result = to_result(CALL, caught)
    assert result.error == "the registry did not answer; try again later"


def test_empty_feedback_falls_back_to_its_cause() -> None:
    err = Feedback()
    err.__cause__ = PermissionError("permission denied: /etc/shadow")
    assert cause_text(err, "deploy") == "permission denied: /etc/shadow"


def test_empty_feedback_without_cause_says_the_tool_failed() -> None:
    assert to_result(CALL, Feedback("")).error == "deploy failed"


def test_empty_ordinary_exception_names_its_type() -> None:
    assert to_result(CALL, RuntimeError()).error == "RuntimeError in deploy"


def test_partial_output_then_cause_each_once() -> None:
    result = to_result(CALL, Feedback("upload failed", output="step 2 done"), streamed="step 1 done\n")
    assert model_text(result) == "step 1 done\nstep 2 done\nError: upload failed"
    again = to_result(CALL, Feedback("boom", output="same"), streamed="same")
    assert model_text(again) == "same\nError: boom"


def test_notes_come_after_the_error() -> None:
    result = to_result(CALL, ValueError("bad"))
    result.notes.append("Reminder: stop")
    assert model_text(result) == "Error: bad\nReminder: stop"


def test_empty_success_says_so() -> None:
    assert model_text(to_result(CALL, "")) == "(no output)"


@pytest.mark.parametrize("exc", [asyncio.CancelledError(), KeyboardInterrupt(), SystemExit(1)])
def test_control_flow_is_never_feedback(exc: BaseException) -> None:
    with pytest.raises(type(exc)):
        to_result(CALL, exc)


def test_feedback_metadata_reaches_the_result() -> None:
    result = to_result(CALL, Feedback("no", metadata={"closest": "lines 3-9"}))
    assert result.metadata["closest"] == "lines 3-9"
