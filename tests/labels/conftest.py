"""A small labelled split with planted wrong labels: every team has its own words, and a few tickets the wrong team."""

from __future__ import annotations

import random

import pytest

TEAMS = ("billing desk", "Ops/Infra", "hr-people")
WORDS = {"billing desk": ["invoice", "refund", "charge", "payment", "receipt", "card"],
         "Ops/Infra": ["server", "outage", "deploy", "disk", "latency", "network"],
         "hr-people": ["holiday", "payroll", "contract", "leave", "onboarding", "pension"]}
FILLER = ["please", "help", "today", "the", "my", "with", "thanks", "urgent", "team", "hello"]
PLANTED = ("S-0007", "S-0042", "S-0077", "S-0101", "S-0133")


def planted_rows(per_team: int = 50, seed: int = 3) -> list[dict]:
    """`per_team` tickets of each team made of its words and filler; the tickets PLANTED carry the next team's
    label. Deterministic for a seed."""
    rng = random.Random(seed)
    rows = []
    for i in range(per_team * len(TEAMS)):
        team = TEAMS[i % len(TEAMS)]
        words = rng.sample(WORDS[team], 3) + rng.sample(FILLER, 3)
        rng.shuffle(words)
        tid = f"S-{i:04d}"
        label = TEAMS[(TEAMS.index(team) + 1) % len(TEAMS)] if tid in PLANTED else team
        rows.append({"ticket_id": tid, "text": " ".join(words), "team": label})
    return rows


# A router recipe small enough to train a fold in about a second: one block of width 16, the small recipe's
# regularisation, a dozen epochs.
TINY_META = {"train": {"recipe": "small", "epochs": 12, "seed": 4, "batch_size": 16, "lr": 1e-2, "average_last": 3},
             "config": {"d": 16, "h": 2, "n_blocks": 1, "d_ff": 32, "max_len": 32, "dropout": 0.1}}


@pytest.fixture(scope="session")
def planted() -> list[dict]:
    return planted_rows()
