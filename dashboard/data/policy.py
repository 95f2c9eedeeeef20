"""The Routing policy page's numbers: thresholds and prediction sets fitted on valid, measured on the other splits."""

# Everything here reads the router's stored prediction tables (predictions/<split>.parquet: confidence, predicted,
# team, correct, p_<team>) through `splits.split_table`, so no model runs while a table is stored. Thresholds and
# conformal quantiles are fitted on valid and only ever reported on test and the hand-written set (the splits this
# router's data has): the numbers on the data they were fitted on would flatter them. Each result is cached per
# (choice, router files, split CSV): `model.weights_stamp()` changes with router.pt, vocab.json or router.json and
# `splits.data_stamp` with the split's CSV, so retrained weights or regenerated data never reuse an old result.

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

import numpy as np
import pandas as pd
import streamlit as st

from dashboard.data import model, splits
from ticketnet.policy import (ConformalSets, Policy, TeamThresholds, area_under_risk_coverage, auto_routed,
                              fit_conformal, fit_team_thresholds, load_policy, reference_areas, reference_curves,
                              risk_coverage, set_report, team_set_labels, threshold_report)

FIT_SPLIT = "valid"
EVAL_SPLITS = ("test", "handwritten")
RESAMPLES = 1000                 # bootstrap resamples of every interval (95 %)
PER_10000 = 10_000

# -- what the page offers ---------------------------------------------------------------------------------------
PRECISION, AUTOMATION = "precision", "automation"
TARGETS = {PRECISION: "precision", AUTOMATION: "automation rate"}
METHODS = {"lac": "LAC", "aps": "APS"}
# (low, high, step) of each slider
PRECISION_RANGE = (0.80, 0.999, 0.001)
AUTOMATION_RANGE = (0.05, 1.0, 0.01)
ALPHA_RANGE = (0.01, 0.30, 0.01)
# How sure a precision target must be shown on valid before its tickets skip the queue: "no" is the point fit (the
# lowest thresholds that reach it on valid), the others the guaranteed fit at that δ (ticketnet.policy.thresholds).
GUARANTEES = {"no": None, "0.1": 0.10, "0.05": 0.05}
GUARANTEE_WORDS = {"no": "no", "0.1": "90 %", "0.05": "95 %"}
DEFAULTS = {"policy_target": PRECISION, "policy_precision": 0.98, "policy_automation": 0.80, "policy_alpha": 0.05,
            "policy_method": "lac", "policy_on": "test", "policy_vouch": "no"}

# A cell a spreadsheet would read as a formula (CSV injection): its text is prefixed with a quote when downloaded.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def guarantee(kind: str, vouch: str) -> float | None:
    """The δ of the guaranteed fit for the page's choices (None: the point fit; an automation target has none)."""
    return GUARANTEES.get(vouch) if kind == PRECISION else None


# -- the scores of a split, from its stored table ------------------------------------------------------------------
@dataclass(frozen=True)
class Scores:
    """One split's tickets as the policy functions read them, in the table's order."""

    ticket_id: np.ndarray        # str
    ticket_query: np.ndarray     # "ticket=T-1": the id as a link's query names it (quoted)
    text: np.ndarray             # str
    team: np.ndarray             # the true team
    predicted: np.ndarray
    confidence: np.ndarray       # float, the predicted team's probability
    correct: np.ndarray          # bool
    probs: np.ndarray            # (n, k), columns in the card's team order
    y: np.ndarray                # int, the true team's column

    @property
    def n(self) -> int:
        return int(self.confidence.size)


def eval_splits() -> list[str]:
    """The splits results are shown on: test, and the hand-written set where this router's data has one."""
    return [s for s in EVAL_SPLITS if s in splits.available()]


def teams() -> tuple[str, ...]:
    return tuple(model.card().teams)


def _key(split: str) -> tuple:
    return model.weights_stamp(), splits.data_stamp(split)


@st.cache_data(show_spinner=False, max_entries=8)
def _scores(split: str, key: tuple, team_names: tuple[str, ...]) -> Scores:
    table = splits.split_table(split)
    index = {t: i for i, t in enumerate(team_names)}
    return Scores(ticket_id=table["ticket_id"].to_numpy(dtype=object),
                  ticket_query=np.array([urlencode({"ticket": t}) for t in table["ticket_id"]], dtype=object),
                  text=table["text"].to_numpy(dtype=object),
                  team=table["team"].to_numpy(dtype=object), predicted=table["predicted"].to_numpy(dtype=object),
                  confidence=table["confidence"].to_numpy(dtype=np.float64),
                  correct=table["correct"].to_numpy(dtype=bool),
                  probs=table[[f"p_{t}" for t in team_names]].to_numpy(dtype=np.float64),
                  y=np.array([index[t] for t in table["team"]], dtype=np.int64))


def scores(split: str) -> Scores:
    """The split's tickets, predictions and probabilities (from the stored table; routed once if none is stored)."""
    return _scores(split, _key(split), teams())


# -- risk–coverage ------------------------------------------------------------------------------------------------
@st.cache_data(show_spinner=False, max_entries=8)
def _curves(split: str, key: tuple, team_names: tuple[str, ...]) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    s = _scores(split, key, team_names)
    curve, reference = risk_coverage(s.confidence, s.correct), reference_curves(s.correct)
    return curve, reference, {"this router": area_under_risk_coverage(curve), **reference_areas(s.correct)}


def curves(split: str) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, float]]:
    """(the router's risk–coverage curve on the split, the oracle's and random ranking's, {ranking: area under})."""
    return _curves(split, _key(split), teams())


# -- per-team thresholds: fitted on valid, reported elsewhere ----------------------------------------------------------
def _target(kind: str, value: float) -> dict:
    return {"precision": float(value)} if kind == PRECISION else {"coverage": float(value)}


@st.cache_data(show_spinner=False, max_entries=64)
def _thresholds(kind: str, value: float, delta: float | None, key: tuple,
                team_names: tuple[str, ...]) -> TeamThresholds:
    s = _scores(FIT_SPLIT, key, team_names)
    return fit_team_thresholds(s.confidence, s.predicted, s.correct, team_names, **_target(kind, value),
                               guarantee=delta)


def thresholds(kind: str, value: float, delta: float | None = None) -> TeamThresholds:
    """One confidence threshold per predicted team for the target (`kind` "precision" or "automation"), on valid;
    with `delta`, a precision that holds with probability ≥ 1 − delta."""
    return _thresholds(kind, value, delta, _key(FIT_SPLIT), teams())


@st.cache_data(show_spinner=False, max_entries=128)
def _report(table: tuple[tuple[str, float], ...], split: str, key: tuple, team_names: tuple[str, ...]) -> dict:
    s = _scores(split, key, team_names)
    return threshold_report(dict(table), s.confidence, s.predicted, s.correct, team_names, resamples=RESAMPLES)


def report(kind: str, value: float, split: str, delta: float | None = None) -> dict:
    """`threshold_report` of the thresholds fitted on valid for the target, on `split` (never valid itself). Cached
    by the thresholds themselves: neighbouring targets often give every team the same threshold, and then the
    bootstrap (most of a slider move's time) is not run again."""
    if split == FIT_SPLIT:
        raise ValueError("the thresholds are fitted on valid: report them on another split")
    table = tuple(sorted(thresholds(kind, value, delta).thresholds.items()))
    return _report(table, split, _key(split), teams())


def operating_point(result: dict) -> dict[str, float] | None:
    """The policy on the risk–coverage plane: {coverage, risk} of what it auto-routes; None when it routes nothing."""
    overall = result["overall"]
    precision = overall["precision"]["value"]
    if not overall["auto_routed"] or precision is None:
        return None
    return {"coverage": float(overall["coverage"]["value"]), "risk": 1.0 - float(precision)}


# -- prediction sets: split-conformal, calibrated on valid ----------------------------------------------------------
@st.cache_data(show_spinner=False, max_entries=32)
def _conformal(alpha: float, method: str, key: tuple, team_names: tuple[str, ...]) -> dict:
    s = _scores(FIT_SPLIT, key, team_names)
    return fit_conformal(s.probs, s.y, alpha, method=method).to_json()


def conformal(alpha: float, method: str) -> ConformalSets:
    """The conformal predictor at level 1 − α (LAC or APS scores), calibrated on valid."""
    return ConformalSets.from_json(_conformal(alpha, method, _key(FIT_SPLIT), teams()))


@st.cache_data(show_spinner=False, max_entries=64)
def _sets(alpha: float, method: str, split: str, fit_key: tuple, key: tuple,
          team_names: tuple[str, ...]) -> tuple[dict, list[str], np.ndarray, np.ndarray]:
    predictor = ConformalSets.from_json(_conformal(alpha, method, fit_key, team_names))
    s = _scores(split, key, team_names)
    sets = predictor.sets(s.probs)
    return (set_report(sets, s.y), team_set_labels(sets, team_names, s.probs), sets.sum(axis=1),
            sets[np.arange(s.n), s.y])


def sets(alpha: float, method: str, split: str) -> tuple[dict, list[str], np.ndarray, np.ndarray]:
    """(set_report on `split`, each ticket's set as words (most probable team first), each set's size, whether it
    holds the true team). Raises ValueError when valid cannot calibrate sets at this α (too few tickets) or method
    (APS with fewer than 3 teams)."""
    if split == FIT_SPLIT:
        raise ValueError("the conformal quantile is calibrated on valid: report the sets on another split")
    return _sets(alpha, method, split, _key(FIT_SPLIT), _key(split), teams())


# -- the human queue ----------------------------------------------------------------------------------------------
QUEUE_COLUMNS = ["ticket_id", "team_set", "set_size", "predicted", "confidence", "team", "true_in_set", "text"]


def _links(ticket_query: pd.Series, page: str) -> pd.Series:
    """Relative links to `page` with each ticket picked (`ticket_query`: "ticket=T-1", quoted once per split), on
    this session's router (the default one is not named)."""
    router = model.router_name()
    extra = "" if router == model.DEFAULT_ROUTER else "&" + urlencode({model.ROUTER_PARAM: router})
    return f"{page}?" + ticket_query + extra


def queue(kind: str, value: float, alpha: float, method: str, split: str, with_sets: bool = True,
          delta: float | None = None) -> pd.DataFrame:
    """The tickets of `split` the policy leaves to a person, least confident first: ticket_id, team_set ("delivery
    or returns"), set_size, predicted, confidence, team (true), true_in_set, text, heads and interpretation (links).
    Without `with_sets` (valid cannot calibrate them), the set columns are left empty."""
    s = scores(split)
    auto = auto_routed(thresholds(kind, value, delta), s.confidence, s.predicted)
    person = np.flatnonzero(~auto)
    if with_sets:
        _report_, labels, sizes, holds = sets(alpha, method, split)
        team_set, size, hold = np.asarray(labels, dtype=object)[person], sizes[person].astype(int), \
            holds[person].astype(bool)
    else:
        team_set, size, hold = [""] * person.size, [pd.NA] * person.size, [pd.NA] * person.size
    df = pd.DataFrame({"ticket_id": s.ticket_id[person], "team_set": team_set, "set_size": size,
                       "predicted": s.predicted[person], "confidence": s.confidence[person], "team": s.team[person],
                       "true_in_set": hold, "text": s.text[person], "_query": s.ticket_query[person]})
    df = df.sort_values("confidence", kind="stable").reset_index(drop=True)
    df["heads"] = _links(df["_query"], "heads")
    df["interpretation"] = _links(df["_query"], "interpretation")
    return df.drop(columns="_query")


def spreadsheet_safe(df: pd.DataFrame) -> pd.DataFrame:
    """`df` for a CSV a spreadsheet will open: every text cell that starts like a formula (= + - @, tab, carriage
    return) gets a leading apostrophe, so "=HYPERLINK(…)" in a ticket stays text; numbers are left alone."""
    out = df.copy()
    for column in out.columns:
        if pd.api.types.is_object_dtype(out[column]) or pd.api.types.is_string_dtype(out[column]):
            text = out[column].astype("string")
            risky = text.str.startswith(FORMULA_START).fillna(False).astype(bool)
            if risky.any():
                out[column] = out[column].where(~risky, "'" + text)
    return out


# -- the router's stored policy -----------------------------------------------------------------------------------
@st.cache_data(show_spinner=False, max_entries=4)
def _stored(key: tuple) -> dict | None | str:
    try:
        found = load_policy(model.card().meta)
    except (ValueError, KeyError, TypeError) as exc:
        return f"router.json holds a policy that cannot be read ({exc})"
    return None if found is None else found.to_json()


def stored_policy() -> Policy | str | None:
    """The policy stored in router.json (`python -m ticketnet policy`), None when there is none, or why it cannot be
    read."""
    found = _stored(model.weights_stamp())
    return Policy.from_json(found) if isinstance(found, dict) else found


@st.cache_data(show_spinner=False, max_entries=8)
def _stored_results(split: str, key: tuple, team_names: tuple[str, ...]) -> tuple[dict, dict]:
    policy = Policy.from_json(_stored(key[0]))
    s = _scores(split, key, team_names)
    return (threshold_report(policy.thresholds, s.confidence, s.predicted, s.correct, team_names,
                             resamples=RESAMPLES),
            set_report(policy.conformal.sets(s.probs), s.y))


def stored_results(split: str) -> tuple[dict, dict]:
    """(threshold_report, set_report) of the stored policy on `split`; call only when `stored_policy()` is one."""
    return _stored_results(split, _key(split), teams())
