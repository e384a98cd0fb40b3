"""The tmux tool's keys and window states go through the control client (one pipe write, no tmux
process per command): text reaches the program literally, whatever tmux's own syntax it holds."""

from __future__ import annotations

import pytest

from tests.tools.test_shell import Term, host, term  # noqa: F401 - the shell fixtures
from tests.waiting import until_true
from workbench.terminal.tmux_server import control_line

pytestmark = pytest.mark.tmux

# tmux's command syntax, quoting and formats, and the shell's: all must arrive as typed
LITERAL = 'a\'b "c" d;e; \\; #{pane_id} $HOME ~ {x} %if -n --x é |end'


async def test_send_types_tmux_syntax_literally(term: Term) -> None:  # noqa: F811
    await term.ok("tmux", action="new", window="cat", command="cat -v")
    await term.ok("tmux", action="send", window="cat", text=LITERAL + "\n")
    seen = await term.ok("tmux", action="wait", window="cat", pattern=r"M-CM-\) \|end$", timeout=10)
    # the terminal echoes the line, then `cat -v` prints it (é as its two bytes)
    assert f"{LITERAL}\n{LITERAL.replace('é', 'M-CM-)')}" in seen, seen


async def test_send_keys_and_a_trailing_semicolon(term: Term) -> None:  # noqa: F811
    await term.ok("tmux", action="new", window="sh")
    await term.ok("tmux", action="send", window="sh", text="echo one;", keys="Enter")
    assert "one" in await term.ok("tmux", action="wait", window="sh", pattern=r"^one$", timeout=10)
    await term.ok("tmux", action="send", window="sh", text="sleep 100", keys="Enter")

    async def sleeping() -> bool:
        return "running sleep" in await term.ok("tmux", action="list")

    # a C-c typed while bash is still between reading the line and handing the terminal to sleep
    # sits in the input queue as a character (1 run in 3 here): send it once sleep runs
    await until_true(sleeping, 10, "sleep to run in the window")
    await term.ok("tmux", action="send", window="sh", keys="C-c")
    # the terminal drops what was typed before it took the C-c: the next line goes after its echo
    await term.ok("tmux", action="wait", window="sh", pattern=r"\^C", timeout=10)
    await term.ok("tmux", action="send", window="sh", text="echo two\n")
    assert "two" in await term.ok("tmux", action="wait", window="sh", pattern=r"^two$", timeout=10)


async def test_a_nul_in_text_or_keys_is_feedback(term: Term) -> None:  # noqa: F811
    await term.ok("tmux", action="new", window="sh")
    for args in ({"text": "a\x00b"}, {"keys": "Enter\x00"}):
        result = await term.call("tmux", action="send", window="sh", **args)
        assert result.is_error and "NUL character" in result.error, result.error
        assert "defect" not in result.metadata
    result = await term.call("bash", command="echo a\x00b")
    assert result.is_error and result.error == "command contains a NUL character; remove it"


async def test_send_to_a_window_closed_from_outside_says_so(term: Term) -> None:  # noqa: F811
    await term.ok("tmux", action="new", window="w", command="sleep 100")
    w = term.host.agents["a1"].windows["w"]
    await term.host.tmux("kill-window", "-t", w.window_id)
    result = await term.call("tmux", action="send", window="w", text="x")
    assert result.is_error and "gone" in result.error, result.error
    assert "no windows" in await term.ok("tmux", action="list")


async def test_a_program_named_like_the_control_protocol_breaks_nothing(term: Term) -> None:  # noqa: F811
    """tmux shows a program by its argv[0], which the program chooses: a name holding a line that
    reads as the control protocol's must never reach the control client's reader (`list` asks
    through libtmux; what goes through the control client answers numbers only)."""
    name = "odd\\n%begin 1 2 3\\n%end 1 2 1"
    await term.ok("tmux", action="new", window="odd", command=f"exec -a $'{name}' sleep 100")
    await term.ok("tmux", action="new", window="sh")
    await term.ok("tmux", action="list")
    await term.ok("tmux", action="send", window="sh", text="echo fine\n")
    assert "fine" in await term.ok("tmux", action="wait", window="sh", pattern=r"^fine$", timeout=10)
    result = await term.call("tmux", action="wait", window="odd", timeout=0.5)
    assert result.is_error and "did not exit" in result.error, result.error
    assert await term.ok("bash", command="echo ok") == "ok\n"
    assert term.host.control is not None and not term.host.control.closed


def test_a_control_line_quotes_each_argument_and_refuses_a_line_break() -> None:
    assert control_line("send-keys", "-t", "@1", "-l", "--", "it's") == "send-keys '-t' '@1' '-l' '--' 'it'\\''s'"
    for bad in ("a\nb", "a\x00b"):
        with pytest.raises(ValueError):
            control_line("send-keys", "-l", bad)
