"""Prompt-cache growth over a multi-turn chat against the scripted server's prefix cache.

    python benchmarks/chat_cache.py [--turns 5] [--mode react] [--tools 20]

Each turn is `Chat.send(...)` (the conversation so far as history): one tool call and an answer per
turn. The server counts as cached the longest token prefix it has seen before, as a provider's prompt
cache does. Printed per turn (its two requests summed): prompt tokens, cached tokens and the cached share; a cold (fresh) run of
the last turn's question is printed for comparison.
"""

from __future__ import annotations

import argparse

from toolmode import Agent, Tool
from toolmode.testing import ScriptedModelServer, call, reply


def make_tools(n: int) -> list[Tool]:
    """n small tools with a docstring each."""
    tools = []
    for i in range(n):

        def fn(city: str, _i: int = i) -> dict:
            return {"tool": _i, "city": city, "temperature": 20 + _i % 7}

        fn.__doc__ = f"Weather source {i}: current weather for a city.\n\nArgs:\n    city: The city."
        tools.append(Tool.from_function(fn, name=f"weather_{i:02d}"))
    return tools


def main() -> None:
    """Run the chat and print the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--tools", type=int, default=20)
    args = parser.parse_args()
    script = []
    for t in range(args.turns):
        script += [call(f"weather_{t % args.tools:02d}", city=f"city {t}"),
                   reply(f"In city {t} it is {20 + t % 7} degrees.")]
    script.append(reply("cold answer"))
    with ScriptedModelServer(script) as server, \
            Agent(make_tools(args.tools), model="m", base_url=server.base_url) as agent, agent.chat() as chat:
        print(f"{'turn':>4} {'prompt':>8} {'cached':>8} {'cached %':>9}")
        for t in range(args.turns):
            u = chat.send(f"What is the weather in city {t}?").usage
            print(f"{t + 1:>4} {u.prompt_tokens:>8,} {u.cached_tokens:>8,} {u.cached_tokens / u.prompt_tokens:>8.1%}")
        total = chat.usage
        print(f" all {total.prompt_tokens:>8,} {total.cached_tokens:>8,} "
              f"{total.cached_tokens / total.prompt_tokens:>8.1%}  ({total.requests} requests)")
        cold = agent.run(f"What is the weather in city {args.turns - 1}?", max_steps=1).usage
        print(f"a fresh one-request run for comparison: prompt {cold.prompt_tokens:,}, cached {cold.cached_tokens:,}")


if __name__ == "__main__":
    main()
