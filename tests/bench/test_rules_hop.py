"""The rules hop's comparison server (bench/rules_hop.py) answers exactly what
the rules service answers, so the two differ only in the work per call."""

from __future__ import annotations

import asyncio

from bench import rules_hop
from bench.match_e2e import _start_rules, start_module
from services.common.servers import free_port
from services.rules.client import Played, RulesClient

WIN = [f'{{"type":"place_mark","cell":{c}}}' for c in (0, 3, 1, 4, 2)]
"""Another game than the draw: seat 0 wins on the top row."""


async def _answers(address: str) -> list[Played]:
    client = RulesClient(address, streams=2)
    out: list[Played] = []
    try:
        for moves in (rules_hop._moves(), WIN, rules_hop._moves()):
            played = await client.new_game(rules_hop.GAME, 2, entropy=rules_hop.SETUP_ENTROPY)
            out.append(played)
            for i, move in enumerate(moves):
                played = await client.apply_move(
                    "", played.state, i % 2, move, entropy=rules_hop.MOVE_ENTROPY
                )
                out.append(played)
    finally:
        await client.close()
    return out


def test_the_cached_server_answers_as_the_rules_service_does() -> None:
    port = free_port()
    cached = start_module(["bench.rules_hop", "cached"], port, "cached rules")
    rules, address = _start_rules(1)
    try:
        from_cache = asyncio.run(_answers(f"127.0.0.1:{port}"))
        from_rules = asyncio.run(_answers(address))
    finally:
        for proc in (cached, rules):
            proc.terminate()
            proc.wait(15)
    assert len(from_cache) == 3 + 9 + 5 + 9
    assert from_cache == from_rules
    assert from_cache[-1].status.outcome is not None  # the draw played to its end
    assert from_cache[1 + 9 + 1 + 4].status.outcome is not None  # and the other game won
    assert from_cache[1 + 9 + 1 + 3].status.outcome is None
