"""``Seeking``: one seek or challenge pending at a time, only while a seat is free."""

from __future__ import annotations

from bots.client.config import ClientConfig
from bots.client.seeking import Seeking
from protocol.messages import CancelSeek, Challenge, ClientMessage, Seek


def seeking(
    config: ClientConfig, busy: list[int], finished: list[int]
) -> tuple[Seeking, list[ClientMessage]]:
    sent: list[ClientMessage] = []
    return Seeking(config, sent.append, lambda: busy[0], lambda: finished[0]), sent


def test_one_seek_at_a_time_and_none_without_a_free_seat() -> None:
    busy, finished = [0], [0]
    seek, sent = seeking(
        ClientConfig(
            url="ws://127.0.0.1:1", name="b", token="t", game="connect4", max_matches=2, games=3
        ),
        busy,
        finished,
    )
    seek.look()
    seek.look()  # already pending
    assert [type(m) for m in sent] == [Seek]
    assert seek.withdraw() and not seek.withdraw()
    assert [type(m) for m in sent] == [Seek, CancelSeek]
    busy[0], finished[0] = 1, 2  # one match live, two done: the third game is that one
    assert seek.games_left() == 1 and seek.free_seats() == 0
    seek.look()
    assert len(sent) == 2


def test_a_challenger_challenges_instead_of_seeking() -> None:
    config = ClientConfig(
        url="ws://127.0.0.1:1", name="b", token="t", game="connect4", challenge="carol"
    )
    seek, sent = seeking(config, [0], [0])
    seek.look()
    seek.look()
    assert len(sent) == 1 and isinstance(sent[0], Challenge) and sent[0].opponent == "carol"
    seek.forget()
    seek.look()
    assert [m.id for m in sent if isinstance(m, Challenge)] == ["challenge-1", "challenge-2"]
