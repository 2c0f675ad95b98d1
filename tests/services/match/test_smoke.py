from __future__ import annotations

import json

from tabletop.match.v1 import match_pb2


async def test_a_game_of_tic_tac_toe(service) -> None:
    a, b = service.player("guest:a"), service.player("guest:b")
    match_id = await a.create("tic_tac_toe", ["guest:a", "guest:b"])
    r = await a.submit(match_id, json.dumps({"type": "place_mark", "cell": 0}))
    assert r.version == 1 and r.seat == 0
    r = await b.submit(match_id, json.dumps({"type": "place_mark", "cell": 3}))
    assert r.version == 2 and r.seat == 1
    g = await a.get(match_id)
    assert g.version == 2 and g.your_seat == 0
    for cell, p in ((1, a), (4, b), (2, a)):
        r = await p.submit(match_id, json.dumps({"type": "place_mark", "cell": cell}))
    assert r.status == match_pb2.MATCH_STATUS_FINISHED
    assert list(r.outcome.ranks) == [1, 2]
