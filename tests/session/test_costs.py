"""Tokens and cost per agent and for the tree, through the real Session, tree, SQLite store and
litellm's pricing of the scripted server's usage: each agent's stored total and row equal the sum of
its usage events, the session's total (status line, `workbench sessions`) is every agent's, and a
budget counts the whole tree."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine.test_agents import after_inbox, create, route
from tests.scripted_server import ScriptedModel, reply
from tests.waiting import EventLog
from workbench.cli.main import main
from workbench.config.settings import Settings
from workbench.pb import workbench_pb2 as pb
from workbench.session.session import Session
from workbench.tui.agents_pane import row_label
from workbench.tui.view import SessionView

PRICED = "openai/gpt-4o-mini"  # litellm's local table prices it; the scripted server answers for it

pytestmark = pytest.mark.tmux


def summed(usages: list[pb.Usage]) -> tuple[int, int, int, float]:
    return (
        sum(u.calls for u in usages),
        sum(u.input_tokens for u in usages),
        sum(u.output_tokens for u in usages),
        sum(u.cost for u in usages),
    )


def totals(u: pb.Usage) -> tuple[int, int, int, float]:
    return u.calls, u.input_tokens, u.output_tokens, u.cost


async def test_each_agents_cost_and_the_trees_total_are_the_sums_of_the_usage_events(
    settings: Settings, scripted_model: ScriptedModel, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings.model = PRICED
    route(
        scripted_model,
        {
            "ROOT": [
                reply("", create("CHILD A: count", name="counter"), create("CHILD B: list", name="lister")),
                reply("Waiting.", usage=(300, 20)),
            ]
            + [after_inbox("Both done.")] * 4,
            "CHILD A": [reply("7", usage=(1000, 50))],
            "CHILD B": [reply("a, b", usage=(2000, 70))],
        },
    )
    log = EventLog()
    session = await Session.open(settings, answerable=False)
    session.subscribe(log)
    try:
        session.send("ROOT task")
        outcome = await session.wait()
        agents = {a.id: a for a in session.agents()}
    finally:
        await session.close()
    assert outcome.text == "Both done." and set(agents) == {"main", "a1", "a2"}
    updates = log.of("usage_update")
    view = SessionView()
    view.apply(log.events)
    for agent_id, info in agents.items():
        mine = [e.usage_update.call for e in updates if e.agent_id == agent_id]
        assert mine and totals(info.usage)[:3] == summed(mine)[:3]
        assert info.usage.cost == pytest.approx(summed(mine)[3]) and info.usage.cost > 0
        assert totals(view.agents[agent_id].usage) == totals(info.usage)  # the row shows the same
        assert f"${info.usage.cost:.4f}" in row_label(view.agents[agent_id], 0).plain
    everything = summed([e.usage_update.call for e in updates])
    stored = session.info.usage
    assert totals(stored)[:3] == everything[:3] == totals(view.usage)[:3]  # the status line's total
    assert stored.cost == pytest.approx(everything[3]) == pytest.approx(sum(a.usage.cost for a in agents.values()))
    assert agents["a2"].usage.input_tokens == 2000 and stored.input_tokens > 3000  # the children count
    # `workbench sessions ID`: each agent's tokens and cost, and the total; the export has them too
    data = ["--data-dir", str(settings.data_dir)]
    assert main(["sessions", session.id, *data]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["AGENT", "STATUS", "CALLS", "IN", "OUT", "COST"]
    lister = next(line for line in table if "lister (a2)" in line)
    assert lister.split()[-3:] == ["2,000", "70", f"${agents['a2'].usage.cost:.4f}"]
    assert table[-1].split()[0] == "total" and table[-1].split()[-1] == f"${stored.cost:.4f}"
    assert main(["export", session.id, *data]) == 0
    exported = capsys.readouterr().out
    assert f"| lister (a2) | completed | 1 | 2,000 | 70 | ${agents['a2'].usage.cost:.4f} |" in exported


async def test_an_unpriced_model_shows_a_dash_not_zero(settings: Settings, scripted_model: ScriptedModel) -> None:
    scripted_model.add(reply("hi", usage=(12, 3)))
    log = EventLog()
    session = await Session.open(settings, answerable=False)
    session.subscribe(log)
    try:
        session.send("say hi")
        await session.wait()
    finally:
        await session.close()
    view = SessionView()
    view.apply(log.events)
    assert view.agents["main"].usage.input_tokens == 12 and " — " in row_label(view.agents["main"], 0).plain


async def test_the_budget_counts_the_whole_tree(settings: Settings, scripted_model: ScriptedModel) -> None:
    """A child's tokens exhaust the session's budget: its parent stops before another model call."""
    settings.max_tokens = 500
    route(
        scripted_model,
        {
            "ROOT": [reply("", create("CHILD: read a lot", mode="sync"), usage=(10, 5)), reply("never sent")],
            "CHILD": [reply("read it", usage=(600, 10))],
        },
    )
    session = await Session.open(settings, answerable=False)
    try:
        session.send("ROOT task")
        outcome = await session.wait()
        agents = {a.id: a for a in session.agents()}
    finally:
        await session.close()
    assert outcome.status == pb.RUN_STATUS_BUDGET_EXHAUSTED
    assert "625 of 500 tokens" in outcome.reason
    assert len(scripted_model.requests) == 2  # the root's first call and the child's: none after
    assert agents["main"].usage.input_tokens == 10 and agents["a1"].usage.input_tokens == 600
