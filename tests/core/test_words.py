"""Every enum value has its word: a new member cannot be added without one."""

import pytest

from workbench.core import words
from workbench.pb import workbench_pb2 as pb


@pytest.mark.parametrize(
    ("enum", "table"),
    [
        (pb.RunStatus, words.RUN_STATUS),
        (pb.AgentStatus, words.AGENT_STATUS),
        (pb.SpawnMode, words.SPAWN_MODE),
        (pb.GuardVerdict, words.GUARD_VERDICT),
    ],
)
def test_every_enum_value_has_a_word(enum, table):
    assert set(enum.values()) == set(table)
    assert all(word and word == word.lower() for word in table.values())


def test_final_statuses_read_as_an_end():
    for status in words.FINAL_AGENT_STATUSES:
        assert words.agent_ended(status) != "finished"


@pytest.mark.parametrize(
    ("word", "reason", "said"),
    [
        ("stopped", "stopped: agent main repeated bash(ls) 3 times", "stopped: agent main repeated bash(ls) 3 times"),
        ("cancelled", "cancelled", "cancelled"),
        ("cancelled", "Cancelled", "cancelled"),
        ("cancelled", "cancelled by the person", "cancelled by the person"),
        ("was cancelled", "cancelled by main", "was cancelled by main"),
        ("failed", "model call failed: 500", "failed: model call failed: 500"),
        ("failed", "", "failed"),
        ("stopped", "stoppedness", "stopped: stoppedness"),  # a word inside another is no repeat
    ],
)
def test_a_status_and_its_reason_say_the_word_once(word: str, reason: str, said: str) -> None:
    assert words.with_reason(word, reason) == said
