"""The failure scenarios of tools/eval_recovery.py: files, prompt, and checks written as code.

Each scenario sets up a fresh workspace, gives one prompt, and is judged from what the run
left: the committed events and the workspace. `failed`: the failure the scenario is about
happened (a model may avoid it); `recovered`: after that failure the run went on to a
successful call of a tool that can fix it, or to a correct end; `correct`: the workspace or the
answer checks out. No model's opinion is asked.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from workbench.model.demo import SAMPLE
from workbench.pb import workbench_pb2 as pb


@dataclass
class Outcome:
    """What one run left, for the checks: events, the final answer, the workspace."""

    events: list[pb.Event]
    answer: str
    workspace: Path
    status: pb.RunStatus = pb.RUN_STATUS_UNSPECIFIED

    def calls(self, agent: str = "main") -> list[tuple[pb.ToolCall, pb.ToolResult]]:
        """The agent's calls with their results, in the order they finished."""
        started = {e.tool_call_started.call.id: e.tool_call_started.call for e in self.of("tool_call_started", agent)}
        return [
            (started.get(r.call_id, pb.ToolCall(id=r.call_id, name=r.name)), r)
            for r in (e.tool_call_finished.result for e in self.of("tool_call_finished", agent))
        ]

    def of(self, kind: str, agent: str = "main") -> list[pb.Event]:
        return [e for e in self.events if e.WhichOneof("kind") == kind and (not agent or e.agent_id == agent)]


Check = Callable[[Outcome], bool]


@dataclass
class Scenario:
    name: str
    prompt: str
    files: dict[str, str]
    failed: Check  # the failure the scenario is about happened
    correct: Check
    fixes: tuple[str, ...] = ()  # a success of one of these tools after the failure counts as recovering
    executable: tuple[str, ...] = ()  # files to chmod +x
    fail_first_child: bool = False  # the root's first subagent cannot reach its model (a real connection refused)
    tools: list[str] | None = None  # None: every tool
    group: str = "recovery"  # recovery (the first eight), evidence (issue 28), multistep (issue 38), generalization

    def recovered(self, run: Outcome) -> bool:
        """After the root's first failure (a failed call, or a failed child in its Inbox): a
        successful call of a fixing tool, or a correct end. A scenario whose failure is no error
        result (a call read leniently, a page cut short) recovered when it failed and ended correct."""
        failures = [e.seq for e in run.of("tool_call_finished") if e.tool_call_finished.result.is_error]
        failures += [e.seq for e in run.of("inbox_item") if e.inbox_item.status != pb.AGENT_STATUS_COMPLETED]
        if not failures:  # the failure is not an error result (a repaired call, a page cut): a correct end
            return self.failed(run) and self.correct(run)
        started = {e.tool_call_started.call.id: e.tool_call_started.call.name for e in run.of("tool_call_started")}
        later_fix = any(
            e.seq > min(failures)
            and not e.tool_call_finished.result.is_error
            and started.get(e.tool_call_finished.result.call_id) in self.fixes
            for e in run.of("tool_call_finished")
        )
        return later_fix or self.correct(run)


def failed_with(tool: str, *words: str) -> Check:
    """A call of `tool` ('' any tool) failed with all of `words` in its error."""

    def check(run: Outcome) -> bool:
        return any(
            r.is_error and (not tool or c.name == tool) and all(w in r.error for w in words) for c, r in run.calls()
        )

    return check


def answer_has(pattern: str) -> Check:
    return lambda run: re.search(pattern, run.answer) is not None


def file_is(path: str, content: str) -> Check:
    def check(run: Outcome) -> bool:
        target = run.workspace / path
        return target.is_file() and target.read_text(errors="replace").rstrip("\n") == content.rstrip("\n")

    return check


def child_failed(run: Outcome) -> bool:
    """A subagent of the root ended without completing (its status reached the root)."""
    finished = [e.agent_finished for e in run.of("agent_finished", agent="") if e.agent_id != "main"]
    return any(f.status != pb.AGENT_STATUS_COMPLETED for f in finished)


def ran_pytest(run: Outcome) -> bool:
    return any(c.name == "bash" and "pytest" in c.arguments and not r.is_error for c, r in run.calls())


def read_ok(path: str) -> Check:
    """The agent read `path` with a call that succeeded (read_file, or a bash/grep call naming it)."""

    def check(run: Outcome) -> bool:
        return any(
            not r.is_error and c.name in ("read_file", "bash", "grep") and path in c.arguments for c, r in run.calls()
        )

    return check


def result_has(tool: str, *words: str) -> Check:
    """A call of `tool` ('' any tool) returned a result (failed or not) holding all of `words`."""

    def check(run: Outcome) -> bool:
        return any((not tool or c.name == tool) and all(w in r.output + r.error for w in words) for c, r in run.calls())

    return check


def repaired_or_rejected(run: Outcome) -> bool:
    """A call written as text was read leniently (its event says `repaired`) or rejected as not JSON."""
    return any(getattr(c, "repaired", False) for c, _ in run.calls()) or failed_with("", "not valid JSON")(run)


def tests_pass_at_the_end(test_file: str, content: str) -> Check:
    """The last pytest the agent ran passed (nothing failed), after its last change, and the test file
    is as it was (the fix is in the code, not in the test)."""

    def check(run: Outcome) -> bool:
        calls = run.calls()
        changes = [i for i, (c, r) in enumerate(calls) if c.name in ("edit_file", "write_file") and not r.is_error]
        runs = [i for i, (c, r) in enumerate(calls) if c.name == "bash" and "pytest" in c.arguments]
        if not runs or (changes and runs[-1] < changes[-1]):
            return False
        _, last = calls[runs[-1]]
        text = last.output + last.error
        return " passed" in text and "failed" not in text and file_is(test_file, content)(run)

    return check


TESTS = "def test_add():\n    assert 1 + 1 == 2\n\n\ndef test_sub():\n    assert 3 - 1 == 2\n\n\n" + (
    "def test_mul():\n    assert 2 * 3 == 6\n"
)
PATHS = 'root = C:\\projects\\demo\nname = "demo"\n'

SCENARIOS = [
    Scenario(
        "edit_trap",
        "In auth.go, CheckLogin lets an empty password in. A reviewer pasted the block like this:\n\n"
        '    // reject empty passwords\n    if password == "" {\n        return true\n    }\n\n'
        "Make it return false for an empty password. Change nothing else in the file "
        "(keep its indentation and comments as they are) and do not add the reviewer's comment.",
        {"auth.go": SAMPLE},
        failed=failed_with("edit_file"),
        correct=file_is("auth.go", SAMPLE.replace("return true", "return false")),
        fixes=("edit_file", "write_file"),
    ),
    Scenario(
        "misspelled_path",
        "What port does conf/setings.json set? Answer with the number.",
        {"conf/settings.json": '{\n  "host": "0.0.0.0",\n  "port": 8443\n}\n'},
        failed=failed_with("", "does not exist"),
        correct=answer_has(r"\b8443\b"),
        fixes=("read_file", "bash", "grep"),
    ),
    Scenario(
        "misspelled_command",
        "Run `pytset -q` in the workspace and tell me how many tests passed.",
        {"test_math.py": TESTS},
        failed=failed_with("bash", "127"),
        correct=lambda run: ran_pytest(run) and answer_has(r"\b(3|three)\b")(run),
        fixes=("bash",),
    ),
    Scenario(
        "bash_timeout",
        "Run `./build.sh` with the bash tool and a timeout of 5 seconds, and tell me the build id it prints.",
        {"build.sh": '#!/bin/sh\necho "build id: 7f3a9c2e"\nsleep 300\necho done\n'},
        failed=failed_with("bash", "timed out"),
        correct=answer_has(r"7f3a9c2e"),
        executable=("build.sh",),
    ),
    Scenario(
        "unknown_tool",
        "Use the `cat` tool to show notes.txt, then tell me the secret word in it.",
        {"notes.txt": "shopping list\nthe secret word is: marmalade\n"},
        failed=lambda run: failed_with("", "not one of the offered tools")(run) or failed_with("", "unknown tool")(run),
        correct=answer_has(r"(?i)marmalade"),
        fixes=("read_file", "bash", "grep"),
    ),
    Scenario(
        "invalid_json",
        "Create the file paths.txt whose content is exactly these two lines (backslashes and quotes "
        f"included):\n\n{PATHS}",
        {},
        failed=failed_with("", "not valid JSON"),
        correct=file_is("paths.txt", PATHS),
        fixes=("write_file", "bash", "edit_file"),
    ),
    Scenario(
        "failed_sync_child",
        "Use a sync subagent (the subagent tool, mode sync) to read VERSION.txt, then tell me the version.",
        {"VERSION.txt": "4.2.1\n"},
        failed=lambda run: child_failed(run) and failed_with("subagent")(run),
        correct=answer_has(r"4\.2\.1"),
        fixes=("read_file", "bash", "subagent", "grep"),
        fail_first_child=True,
    ),
    Scenario(
        "failed_async_child",
        "Start an async subagent (the subagent tool, mode async) to read VERSION.txt, wait for its result, "
        "then tell me the version.",
        {"VERSION.txt": "4.2.1\n"},
        failed=lambda run: bool(run.of("inbox_item", agent="")) and child_failed(run),
        correct=answer_has(r"4\.2\.1"),
        fixes=("read_file", "bash", "subagent", "grep"),
        fail_first_child=True,
    ),
]

# --- issue 28: answers on evidence (files and tasks other than the issue's) --------------------

LOGGING_INI = "[logging]\nformat = %(asctime)s %(message)s\nlevel = WARNING\nrotate = daily\n"
RUBY_CLIENT = "module Net\n  class Client\n    MAX_RETRIES = 7\n\n    def fetch(url)\n    end\n  end\nend\n"
RUBY_SERVER = "module Net\n  class Server\n    def serve\n    end\n  end\nend\n"
DATES = "import datetime\n\n\ndef parse_date(text):\n    return datetime.date.fromisoformat(text)\n"
BILLING = (
    "TAX = 0.2\n\n\ndef calc_total(line_items, tax_rate=TAX):\n"
    "    subtotal = sum(item.price * item.qty for item in line_items)\n"
    "    return round(subtotal * (1 + tax_rate), 2)\n\n\n"
    'def invoice(order):\n    return {"id": order.id, "total": calc_total(order.items)}\n'
)
REPORT_SH = (
    "#!/bin/sh\n"
    'if [ "$1" != "--month" ] || [ -z "$2" ]; then\n'
    '  echo "error: --month is required, e.g. ./report.sh --month 2026-11" >&2\n  exit 2\nfi\n'
    'echo "report for $2: total 4817 EUR"\n'
)
DISCOUNT = "def apply(price, percent):\n    return price - percent\n"
DISCOUNT_TESTS = (
    "from discount import apply\n\n\ndef test_ten_percent():\n    assert apply(100, 10) == 90\n\n\n"
    "def test_quarter_off():\n    assert apply(80, 25) == 60, 'apply(80, 25): a quarter off 80 is 60'\n"
)
BIG_CFG = (
    "".join(f"option_{i:04} = {i * 7 % 1000}\n" for i in range(1, 2901))
    + "retention_days = 93\n"
    + "".join(f"option_{i:04} = {i}\n" for i in range(2901, 3001))
)

SCENARIOS += [
    Scenario(
        "read_after_find",  # a question about a file at another path: answered only after reading it
        "What log level does logging.ini set? Answer with the level's name.",
        {"etc/app/logging.ini": LOGGING_INI, "README.md": "# app\nSettings live in etc/.\n"},
        failed=failed_with("", "does not exist"),
        correct=lambda run: answer_has(r"\bWARNING\b")(run) and read_ok("etc/app/logging.ini")(run),
        fixes=("read_file", "bash", "grep"),
        group="evidence",
    ),
    Scenario(
        "filter_matched_nothing",  # a search whose filter matched nothing
        "The Ruby sources are under lib/. Use grep to find where MAX_RETRIES is defined and tell me its value.",
        {"client.rb": RUBY_CLIENT, "server.rb": RUBY_SERVER},
        failed=lambda run: (
            result_has("grep", "matched no file")(run)
            or result_has("grep", "; 0 files searched")(run)
            or failed_with("", "does not exist")(run)
        ),
        correct=answer_has(r"\b7\b"),
        fixes=("grep", "read_file", "bash"),
        group="evidence",
    ),
    Scenario(
        "comment_in_call",  # a text call with a comment in it
        "Find where parse_date is defined with grep. Write your tool call as a JSON block and put a // comment "
        "after each argument saying why you chose it. Then tell me the file and line.",
        {"dates.py": DATES, "main.py": "from dates import parse_date\n"},
        failed=repaired_or_rejected,
        correct=answer_has(r"dates\.py\D{0,20}\b4\b"),
        fixes=("grep", "read_file", "bash"),
        group="evidence",
    ),
    Scenario(
        "edit_unread",  # an edit of a file the agent has not read
        "In billing.py the function calc_total(items, tax) should be called compute_total. Rename it where it "
        "is defined and where it is called; change nothing else.",
        {"billing.py": BILLING},
        failed=failed_with("edit_file", "old_text not found"),
        correct=file_is("billing.py", BILLING.replace("calc_total", "compute_total")),
        fixes=("edit_file", "write_file"),
        group="evidence",
    ),
    Scenario(
        "missing_argument",  # a command that needs an argument it lacks
        "Run ./report.sh for November 2026 and tell me the total it prints.",
        {"report.sh": REPORT_SH},
        failed=result_has("bash", "--month is required"),
        correct=answer_has(r"4,?817"),
        fixes=("bash",),
        executable=("report.sh",),
        group="generalization",
    ),
    Scenario(
        "test_failure_reason",  # a test that fails for a reason printed in its output
        "Run `python -m pytest -q` and fix the code so the tests pass. Do not change the tests.",
        {"discount.py": DISCOUNT, "test_discount.py": DISCOUNT_TESTS},
        failed=result_has("bash", "a quarter off 80 is 60"),
        correct=tests_pass_at_the_end("test_discount.py", DISCOUNT_TESTS),
        fixes=("edit_file", "write_file"),
        group="generalization",
    ),
    Scenario(
        "paged_read",  # the answer is past read_file's first page
        "How many days does big.cfg set for retention_days? Answer with the number.",
        {"big.cfg": BIG_CFG},
        failed=result_has("read_file", "read on with read_file"),
        correct=answer_has(r"\b93\b"),
        fixes=("read_file", "grep", "bash"),
        group="generalization",
    ),
]

# --- issue 38: tasks of several steps (a small model described the work instead of doing it) ----

SLUG = (
    'def slug(title):\n    """A title as a URL slug: lower case, words joined by hyphens."""\n'
    "    return title.lower()\n"
)
CHECK_SLUG = (
    "from slug import slug\n\n"
    'assert slug("Hello World") == "hello-world", slug("Hello World")\n'
    'assert slug("Fast Cars Go") == "fast-cars-go", slug("Fast Cars Go")\n'
    'print("ok")\n'
)
SHAPES = "import math\n\n\ndef area_of(r):\n    return math.pi * r * r\n"
SHAPES_MAIN = "from shapes import area_of\n\nprint(area_of(2))\n"
SHAPES_REPORT = "from shapes import area_of\n\n\ndef report(radii):\n    return [area_of(r) for r in radii]\n"
NET_TOML = '[net]\nhost = "example.org"\ntimeout = 5\nretries = 3\n'
DEPLOY = (
    "import os\nimport sys\n\n"
    'if "DEPLOY_REGION" not in os.environ:\n'
    '    sys.exit("error: set DEPLOY_REGION (one of eu-west, us-east) before deploying")\n'
    'print("deployed to", os.environ["DEPLOY_REGION"])\n'
)
GREET = "MESSAGE = 'Hello, %s!'  # shown at login\n\n\ndef greet(name):\n    return MESSAGE % name\n"


def described(run: Outcome) -> bool:
    """The root answered with a how-to (a code block or numbered steps) and no call at least once."""
    return any(
        e.message.role == pb.ROLE_ASSISTANT
        and not e.message.tool_calls
        and ("```" in e.message.text or len(re.findall(r"(?m)^\s*\d+[.)]", e.message.text)) >= 2)
        for e in run.of("message")
    )


def runs_ok(*argv: str) -> Check:
    """The command exits 0 in the workspace at the end (the eval's own check, not the agent's)."""

    def check(run: Outcome) -> bool:
        done = subprocess.run(argv, cwd=run.workspace, capture_output=True, timeout=30, check=False)
        return done.returncode == 0

    return check


def renamed(run: Outcome) -> bool:
    texts = {p: (run.workspace / p).read_text() for p in ("shapes.py", "main.py", "report.py")}
    return (
        all("area_of" not in t for t in texts.values())
        and "def circle_area(r):" in texts["shapes.py"]
        and all("circle_area(" in t for t in texts.values())
    )


def copied(run: Outcome) -> bool:
    target = run.workspace / "build" / "app.ini"
    return target.is_file() and target.read_text() == "[app]\nname = demo\n" and (run.workspace / "app.ini").is_file()


SCENARIOS += [
    Scenario(
        "fix_from_check",  # a fix from a failing check script
        "Running `python3 check_slug.py` fails. Fix slug.py so the check passes. Do not change check_slug.py.",
        {"slug.py": SLUG, "check_slug.py": CHECK_SLUG},
        failed=described,
        correct=lambda run: runs_ok(sys.executable, "check_slug.py")(run) and file_is("check_slug.py", CHECK_SLUG)(run),
        fixes=("edit_file", "write_file"),
        group="multistep",
    ),
    Scenario(
        "rename_across_files",  # a rename across files
        "Rename the function area_of to circle_area everywhere in this project: where it is defined and "
        "every place that imports or calls it.",
        {"shapes.py": SHAPES, "main.py": SHAPES_MAIN, "report.py": SHAPES_REPORT},
        failed=described,
        correct=renamed,
        fixes=("edit_file", "write_file", "bash"),
        group="multistep",
    ),
    Scenario(
        "one_command",  # a task a shell command does in one call
        "Make a folder named build and copy app.ini into it.",
        {"app.ini": "[app]\nname = demo\n"},
        failed=described,
        correct=copied,
        fixes=("bash", "write_file"),
        group="multistep",
    ),
    Scenario(
        "set_a_value",  # a one-line change in a config file
        "Set the timeout in net.toml to 30.",
        {"net.toml": NET_TOML},
        failed=described,
        correct=file_is("net.toml", NET_TOML.replace("timeout = 5", "timeout = 30")),
        fixes=("edit_file", "write_file", "bash"),
        group="multistep",
    ),
    Scenario(
        "claimed_change",  # an edit whose old_text a model writes from memory fails; the answer may claim it
        "In greet.py, change the greeting word Hello to Howdy and keep everything else as it is.",
        {"greet.py": GREET},
        failed=lambda run: failed_with("edit_file")(run) or described(run),
        correct=file_is("greet.py", GREET.replace("Hello", "Howdy")),
        fixes=("edit_file", "write_file", "bash"),
        group="multistep",
    ),
    Scenario(
        "answer_in_error",  # the answer is in a command's error output
        "Run `python3 deploy.py` and tell me which environment variable it needs and which values it takes.",
        {"deploy.py": DEPLOY},
        failed=result_has("bash", "set DEPLOY_REGION"),
        correct=answer_has(r"DEPLOY_REGION"),
        fixes=("bash",),
        group="multistep",
    ),
]
