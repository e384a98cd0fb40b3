"""A tool call's argument check (read the JSON, check it with the pydantic model of the tool's
declaration, word the problems) against the loop's own overhead per tool call, and the building
of the built-in tools' schemas and models against reading their signatures alone; same run.

    .venv/bin/python -m tools.benchmarks.arguments      # or: .venv/bin/python tools/bench.py arguments
"""

from __future__ import annotations

import inspect
import json
import os
import statistics
import sys
import time
import typing
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from workbench.pb import workbench_pb2 as pb  # noqa: E402

CHECKS = 10_000
EDIT = {"path": "src/app.py", "old_text": "def f(x):\n    return x\n", "new_text": "def f(x):\n    return x + 1\n"}
BAD_EDIT = {"path": 3, "old_text": "a", "replace_all": "yes", "extra": 1}  # four problems, one missing


def _median_ms(fn: Callable[[], object], n: int, runs: int = 5) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - start) * 1000 / n)
    return statistics.median(samples)


def main() -> None:
    from tools.bench import line, loop_overhead
    from workbench.tools.registry import Toolbox, ToolContext, builtin_tools
    from workbench.tools.tool_schema import declare

    via_loop, direct = loop_overhead()
    overhead = via_loop - direct
    box = Toolbox(None)
    good = pb.ToolCall(id="c", name="edit_file", arguments=json.dumps(EDIT))
    bad = pb.ToolCall(id="c", name="edit_file", arguments=json.dumps(BAD_EDIT))
    checked, refused = box._prepare(good), box._prepare(bad)
    assert not isinstance(checked, pb.ToolResult) and isinstance(refused, pb.ToolResult), (checked, refused)
    print(f"arguments: the check of one edit_file call ({CHECKS:,} in a row, median of 5 runs)")
    line("check, good arguments", _median_ms(lambda: box._prepare(good), CHECKS), "loop overhead per call", overhead)
    line("check, four problems", _median_ms(lambda: box._prepare(bad), CHECKS), "loop overhead per call", overhead)
    parse = _median_ms(lambda: json.loads(good.arguments), CHECKS)
    line("check, good arguments", _median_ms(lambda: box._prepare(good), CHECKS), "json.loads of them alone", parse)
    fns = [t.fn for t in builtin_tools().values()]
    names = {"ToolContext": ToolContext}

    def signatures() -> None:
        for fn in fns:
            typing.get_type_hints(fn, localns=names)
            inspect.signature(fn)

    line(
        f"declare the {len(fns)} built-in tools",
        _median_ms(lambda: [declare(fn, names) for fn in fns], 5),
        "their signatures and hints read",
        _median_ms(signatures, 5),
    )


if __name__ == "__main__":
    main()
