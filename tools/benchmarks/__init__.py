"""Benchmark sections of tools/bench.py, one module per area, and what they share."""

from __future__ import annotations


async def bare_streamed_call(url: str, content: str = "hi") -> None:
    """One streamed litellm completion to a scripted server and nothing around it: the floor."""
    from workbench.model import litellm

    response = await litellm().acompletion(
        model="openai/scripted",
        api_base=url,
        api_key="sk-bench",
        messages=[{"role": "user", "content": content}],
        stream=True,
        num_retries=0,
        max_retries=0,
    )
    async for _ in response:
        pass
