"""A routing policy (team thresholds and a conformal rule) kept in the router's router.json, and applied to tickets."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ticketnet._runtime.atomic import write_atomic
from ticketnet.card import DECIMALS, POLICY_KEY, RouterCard, card_json_bytes
from ticketnet.policy.conformal import ConformalSets, team_set_labels
from ticketnet.policy.thresholds import TeamThresholds, auto_routed

# DECIMALS (the card's, which flags by the same rule): the probabilities' decimals in the stored tables and predict's
# CSV. Decisions are taken on the numbers a reader sees, so a written confidence of 0.9876 and a threshold of 0.9876 agree.


@dataclass(frozen=True)
class Policy:
    """Which tickets skip the person (`thresholds`) and each ticket's shortlist of teams (`conformal`), with what
    they were fitted on: split, n, data_sha256, date, source (stored predictions or routed)."""

    thresholds: TeamThresholds
    conformal: ConformalSets
    fitted: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"thresholds": self.thresholds.to_json(), "conformal": self.conformal.to_json(),
                "fitted": dict(self.fitted)}

    @classmethod
    def from_json(cls, d: Mapping) -> Policy:
        if not isinstance(d, Mapping) or "thresholds" not in d or "conformal" not in d:
            raise ValueError("not a stored policy (it needs thresholds and conformal)")
        return cls(TeamThresholds.from_json(d["thresholds"]), ConformalSets.from_json(d["conformal"]),
                   dict(d.get("fitted", {})))

    def apply(self, probs, teams: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(auto, sets) for probabilities (n, teams) in the router's team order: whether each ticket is auto-routed
        and its conformal set as booleans (n, teams), decided on the probabilities rounded to 4 decimals."""
        p = np.round(np.asarray(probs, dtype=np.float64), DECIMALS)
        if p.ndim != 2 or p.shape[1] != len(teams):
            raise ValueError(f"probabilities must have one column per team ({len(teams)}), got shape {p.shape}")
        if p.shape[0] == 0:
            return np.zeros(0, dtype=bool), np.zeros((0, len(teams)), dtype=bool)
        names = np.asarray(list(teams), dtype=object)
        k = p.argmax(axis=1)
        auto = auto_routed(self.thresholds, p[np.arange(p.shape[0]), k], names[k])
        return auto, self.conformal.sets(p)

    def columns(self, probs, teams: Sequence[str]) -> tuple[np.ndarray, list[str]]:
        """(auto, team_set) as predict and scan write them: booleans and sets in words, most probable team first."""
        auto, sets = self.apply(probs, teams)
        return auto, team_set_labels(sets, teams, np.round(np.asarray(probs, dtype=np.float64), DECIMALS))


def store_policy(router_dir: str | Path, policy: Policy) -> Path:
    """Write `policy` into the router folder's router.json under "policy", atomically (the rest of the card as it
    was). The weights' identity for stored predictions leaves the policy out (`ticketnet.predictions.router_hash`),
    so they stay fresh. Returns router.json's path; raises ValueError when the folder holds no router card."""
    path = _card_path(router_dir)
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot be read as a router card ({exc})") from None
    if not isinstance(meta, dict) or "teams" not in meta:
        raise ValueError(f"{path}: not a router card (no teams)")
    unknown = sorted(set(policy.thresholds.thresholds) - set(meta["teams"]))
    if unknown:
        raise ValueError(f"the policy names team(s) {', '.join(unknown[:3])} that {path} does not have")
    meta[POLICY_KEY] = policy.to_json()
    write_atomic(path, card_json_bytes(meta))
    return path


def load_policy(router: str | Path | Mapping | RouterCard) -> Policy | None:
    """The policy stored in a router folder's router.json (or in a card's metadata dict, or a card of either router
    kind), or None when it has none; raises ValueError for a stored policy that cannot be read."""
    if isinstance(router, RouterCard) or isinstance(getattr(router, "meta", None), Mapping):
        meta: Mapping = router.meta
    elif isinstance(router, Mapping):
        meta = router
    else:
        path = _card_path(router)
        try:
            meta = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path}: cannot be read as a router card ({exc})") from None
    stored = meta.get(POLICY_KEY) if isinstance(meta, Mapping) else None
    if stored is None:
        return None
    try:
        return Policy.from_json(stored)
    except ValueError as exc:
        raise ValueError(f"router.json: the stored policy cannot be read ({exc}); run `python -m ticketnet policy` "
                         f"again") from None


def _card_path(router: str | Path) -> Path:
    path = Path(router)
    if path.is_dir():
        return path / "router.json"
    return path if path.name == "router.json" else path.parent / "router.json"
