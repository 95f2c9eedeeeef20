"""Larkfield's five teams, in the order its router keeps them (data/teams.txt says the same)."""

TEAMS: tuple[str, ...] = ("payments", "delivery", "returns", "product", "account")
