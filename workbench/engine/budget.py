"""The token and cost limits every agent of a session shares (`Budget`): the tree makes one, each
agent's loop counts its model calls (and its model judge's) toward it and ends its run when it is
spent.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from workbench.pb import workbench_pb2 as pb


@dataclass
class Budget:
    """Token and cost limits shared by every agent of a session (0 means no limit)."""

    max_tokens: int = 0
    max_cost: float = 0.0
    used: pb.Usage = field(default_factory=pb.Usage)

    def exhausted(self) -> str:
        tokens = self.used.input_tokens + self.used.output_tokens
        if self.max_tokens and tokens >= self.max_tokens:
            return f"token budget exhausted: {tokens:,} of {self.max_tokens:,} tokens used"
        if self.max_cost and self.used.HasField("cost") and self.used.cost >= self.max_cost:
            return f"cost budget exhausted: ${self.used.cost:.4f} of ${self.max_cost:.4f} spent"
        return ""
