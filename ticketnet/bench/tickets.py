"""The tickets the benchmark times: real valid tickets cut to a length, and typed tickets no cache has seen."""

from __future__ import annotations

from ticketnet.data.text import tokenize


def ticket_of_length(rows: list[dict], n: int) -> str:
    """A real ticket cut to exactly n tokens (the longest valid ticket, tokens joined by spaces)."""
    longest = max(rows, key=lambda r: len(tokenize(r["text"])))
    toks = tokenize(longest["text"])
    if len(toks) < n:
        toks = (toks * (n // len(toks) + 1))
    text = " ".join(toks[:n])
    assert len(tokenize(text)) == n
    return text


def typed_tickets(n: int, count: int, start: int = 0) -> list[str]:
    """`count` different typed tickets of exactly n tokens: a real ticket cut to n tokens (`ticket_of_length`),
    its tokens rotated by start + 1, start + 2, ..., so each reads differently and no cache knows it."""
    from ticketnet.data.tickets import load_split
    from ticketnet.paths import data_dir

    toks = ticket_of_length(load_split(data_dir() / "valid.csv"), n).split(" ")
    return [" ".join(toks[k % n:] + toks[:k % n]) for k in range(start + 1, start + count + 1)]
