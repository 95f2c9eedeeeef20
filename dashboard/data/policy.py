"""The Routing policy page's numbers: thresholds and prediction sets fitted on valid, measured on the other splits."""

# Everything here reads the router's stored prediction tables (predictions/<split>.parquet: confidence, predicted,
# team, correct, p_<team>) through `splits.split_table`, so no model runs while a table is stored. Thresholds and
# conformal quantiles are fitted on valid and only ever reported on test and the hand-written set (the splits this
# router's data has): the numbers on the data they were fitted on would flatter them. Each result is cached per
# (choice, router files, split CSV): `model.weights_stamp()` changes with router.pt, vocab.json or router.json and
# `splits.data_stamp` with the split's CSV, so retrained weights or regenerated data never reuse an old result.
#
# The page's choices (target kind and value, α, method, the split shown) live in the session under plain keys and in
# the URL (?target=precision&precision=0.98&alpha=0.05&method=lac): `restore` seeds the widgets before they are drawn
# (from a new link, else from what the session last chose, which survives a visit to another page), `remember`
# writes them back.

from __future__ import annotations

import math
from dataclasses import dataclass
from urllib.parse import urlencode

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import state
from dashboard.charts import policy as policy_charts
from dashboard.data import model, splits
from ticketnet.policy import (ConformalSets, Policy, TeamThresholds, area_under_risk_coverage, auto_routed,
                              fit_conformal, fit_team_thresholds, load_policy, reference_areas, reference_curves,
                              risk_coverage, set_report, team_set_labels, threshold_report)

FIT_SPLIT = "valid"
EVAL_SPLITS = ("test", "handwritten")
RESAMPLES = 1000                 # bootstrap resamples of every interval (95 %)
PER_10000 = 10_000

# -- the page's choices ------------------------------------------------------------------------------------------
PRECISION, AUTOMATION = "precision", "automation"
TARGETS = {PRECISION: "precision", AUTOMATION: "automation rate"}
METHODS = {"lac": "LAC", "aps": "APS"}
# (low, high, step) of each slider; a URL value is snapped to the step and must lie in the range
PRECISION_RANGE = (0.80, 0.999, 0.001)
AUTOMATION_RANGE = (0.05, 1.0, 0.01)
ALPHA_RANGE = (0.01, 0.30, 0.01)
# How sure a precision target must be shown on valid before its tickets skip the queue: "no" is the point fit (the
# lowest thresholds that reach it on valid), the others the guaranteed fit at that δ (ticketnet.policy.thresholds).
GUARANTEES = {"no": None, "0.1": 0.10, "0.05": 0.05}
GUARANTEE_WORDS = {"no": "no", "0.1": "90 %", "0.05": "95 %"}
DEFAULTS = {"policy_target": PRECISION, "policy_precision": 0.98, "policy_automation": 0.80, "policy_alpha": 0.05,
            "policy_method": "lac", "policy_on": "test", "policy_vouch": "no"}
URL_NAMES = {"policy_target": "target", "policy_precision": "precision", "policy_automation": "automation",
             "policy_alpha": "alpha", "policy_method": "method", "policy_on": "on", "policy_vouch": "vouch"}
_KEPT = "_policy_choices"        # the choices of the page's last run (a plain key: survives other pages)

# A cell a spreadsheet would read as a formula (CSV injection): its text is prefixed with a quote when downloaded.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _snapped(low: float, high: float, step: float):
    decimals = max(0, -math.floor(math.log10(step)))

    def parse(raw: str) -> float | None:
        try:
            value = float(raw)
        except ValueError:
            return None
        if not math.isfinite(value) or not low - step / 2 <= value <= high + step / 2:
            return None
        return round(min(high, max(low, round(value / step) * step)), decimals)
    return parse


def _among(options) -> callable:
    def parse(raw: str) -> str | None:
        raw = raw.strip().lower()
        return raw if raw in options else None
    return parse


def restore(eval_splits: list[str]) -> None:
    """Before the page's widgets are drawn: adopt every choice a new link brings, and seed each widget Streamlit
    dropped (another page ran) with the session's last value, else the default."""
    ss = st.session_state
    kept = ss.setdefault(_KEPT, {})
    parsers = {"policy_target": _among(TARGETS), "policy_precision": _snapped(*PRECISION_RANGE),
               "policy_automation": _snapped(*AUTOMATION_RANGE), "policy_alpha": _snapped(*ALPHA_RANGE),
               "policy_method": _among(METHODS), "policy_on": _among(eval_splits), "policy_vouch": _among(GUARANTEES)}
    for key, name in URL_NAMES.items():
        value = state.url_choice(name, parsers[key])
        if value is not None:
            ss[key] = kept[key] = value
        elif key not in ss:
            ss[key] = kept.get(key, DEFAULTS[key])
    if ss["policy_on"] not in eval_splits:
        ss["policy_on"] = eval_splits[0]


def remember() -> dict:
    """After the widgets: keep the choices for the session and write them to the URL (the target's value under its
    own name, the other target's name taken out; the split shown only when it is not the first). Returns them."""
    ss = st.session_state
    chosen = {key: ss.get(key, default) for key, default in DEFAULTS.items()}
    ss[_KEPT] = dict(chosen)
    kind = chosen["policy_target"]
    state.write_choice("target", kind)
    state.write_choice("precision", f"{chosen['policy_precision']:g}" if kind == PRECISION else None)
    state.write_choice("automation", f"{chosen['policy_automation']:g}" if kind == AUTOMATION else None)
    state.write_choice("alpha", f"{chosen['policy_alpha']:g}")
    state.write_choice("method", chosen["policy_method"])
    state.write_choice("on", None if chosen["policy_on"] == DEFAULTS["policy_on"] else chosen["policy_on"])
    vouch = chosen["policy_vouch"]
    state.write_choice("vouch", vouch if kind == PRECISION and vouch != DEFAULTS["policy_vouch"] else None)
    return chosen


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


@st.cache_data(show_spinner=False, max_entries=8)
def _curves_table(split: str, key: tuple, team_names: tuple[str, ...]) -> pd.DataFrame:
    curve, reference, _areas = _curves(split, key, team_names)
    return policy_charts.curves_frame(curve, reference)


def curves_table(split: str) -> pd.DataFrame:
    """The three curves of the split as the risk–coverage chart draws them (`charts.policy.curves_frame`)."""
    return _curves_table(split, _key(split), teams())


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


def adopt_stored(policy: Policy) -> None:
    """A button's callback: set the page's choices to those the stored policy was fitted with (values outside a
    slider's range are left as they are)."""
    ss = st.session_state
    target = dict(policy.thresholds.target)
    if "precision" in target:
        value = _snapped(*PRECISION_RANGE)(str(target["precision"]))
        if value is not None:
            ss["policy_target"], ss["policy_precision"] = PRECISION, value
    elif "coverage" in target:
        value = _snapped(*AUTOMATION_RANGE)(str(target["coverage"]))
        if value is not None:
            ss["policy_target"], ss["policy_automation"] = AUTOMATION, value
    alpha = _snapped(*ALPHA_RANGE)(str(policy.conformal.alpha))
    if alpha is not None:
        ss["policy_alpha"] = alpha
    if policy.conformal.method in METHODS:
        ss["policy_method"] = policy.conformal.method
    delta = target.get("guarantee")
    ss["policy_vouch"] = next((k for k, v in GUARANTEES.items() if v == delta), DEFAULTS["policy_vouch"])


# -- the numbers as the page words them ------------------------------------------------------------------------------
def percent(value: float | None, digits: int = 1) -> str:
    return "—" if value is None or not math.isfinite(value) else f"{100 * value:.{digits}f} %"


def count(value: float | None) -> str:
    return "—" if value is None or not math.isfinite(value) else f"{value:,.0f}"


def _value(stat: dict | None) -> float:
    v = None if not stat else stat.get("value")
    return math.nan if v is None else float(v)


def interval_text(stat: dict | None, percent: bool = False) -> str:
    """A bootstrap interval as text: "88.1–91.0 %" (`percent`) or "31–52"; "—" where there is none."""
    if not stat or stat.get("low") is None or stat.get("high") is None:
        return "—"
    lo, hi = float(stat["low"]), float(stat["high"])
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "—"
    if percent:
        return f"{100 * lo:.1f}–{100 * hi:.1f} %"
    return f"{lo:,.0f}–{hi:,.0f}"


def with_interval(stat: dict | None, percent: bool = False) -> str:
    """A value and its 95 % interval in one cell: "45.8 % (43.3–48.1)" (`percent`) or "160 (107–233)"; "—" for no
    value (a team nothing was auto-routed for has no precision)."""
    value = _value(stat)
    if math.isnan(value):
        return "—"
    shown = f"{100 * value:.1f} %" if percent else f"{value:,.0f}"
    around = interval_text(stat, percent)
    return shown if around == "—" else f"{shown} ({around.removesuffix(' %')})"


def results_table(results: dict[str, dict]) -> pd.DataFrame:
    """One row per split: tickets, auto-routed, misroutes, and the automation rate, precision and misroutes per
    10,000 tickets, each with its 95 % interval."""
    rows = []
    for split, r in results.items():
        o = r["overall"]
        rows.append({"split": split, "tickets": o["n"], "auto-routed": o["auto_routed"], "misroutes": o["misroutes"],
                     "automation rate": with_interval(o["coverage"], True),
                     "precision": with_interval(o["precision"], True),
                     "misroutes per 10,000": with_interval(o["misroutes_per_10000"])})
    return pd.DataFrame(rows)


def sets_table(set_results: dict[str, dict], alpha: float) -> pd.DataFrame:
    """One row per split: tickets, the sets' coverage (Wilson 95 % interval) beside the 1 − α asked, mean size, the
    share of sets naming one team only, and empty sets."""
    rows = []
    for split, r in set_results.items():
        n = max(1, int(r["n"]))
        rows.append({"split": split, "tickets": r["n"], "coverage": with_interval(r["coverage"], True),
                     "asked (1 − α)": percent(1 - alpha, 0), "mean set size": f"{float(r['mean_size']):.2f}",
                     "one team": percent(int(r["size_counts"].get(1, 0)) / n),
                     "empty sets": int(r["empty"])})
    return pd.DataFrame(rows)


def coverage_notes(set_results: dict[str, dict], alpha: float) -> list[str]:
    """A sentence for each split whose sets hold the true team less often than 1 − α, saying why that can be."""
    notes = []
    for split, r in set_results.items():
        cov, asked = _value(r["coverage"]), 1 - alpha
        if not cov < asked:
            continue
        where = "the hand-written set" if split == "handwritten" else split
        measured = (f"On {where} the sets hold the true team for {percent(cov)} of the {r['n']:,} tickets "
                    f"(95 % interval {interval_text(r['coverage'], True)}), short of the {percent(asked, 0)} they "
                    "are calibrated for")
        if split == "handwritten":
            notes.append(measured + ": the hand-written tickets were written apart from the generated splits, so "
                         "they are not exchangeable with valid, and the conformal guarantee (which holds for tickets "
                         "drawn like the calibration tickets) does not carry over to them.")
        elif r["coverage"].get("high") is not None and float(r["coverage"]["high"]) >= asked:
            notes.append(measured + ", within the sampling noise of this many tickets: the guarantee is on average "
                         "over calibration and test draws, not on every test set.")
        else:
            notes.append(measured + ", by more than sampling noise: the guarantee assumes test tickets are drawn "
                         "like valid's, and these do not seem to be.")
    return notes


def area_sentence(areas: dict[str, float]) -> str:
    names = {"this router": "this router", "oracle": "an oracle", "random ranking": "a random ranking"}
    parts = [f"{names.get(k, k)} {v:.4f}" for k, v in areas.items()]
    return "Area under the risk–coverage curve (lower is better): " + ", ".join(parts) + "."


def per_team_table(per_team: pd.DataFrame, stored: Policy | None = None) -> pd.DataFrame:
    """The per-team numbers as the page lists them: threshold, tickets predicted, auto-routed, misroutes, and the
    share auto-routed and the precision with their intervals; with `stored`, the stored policy's threshold beside."""
    def cell(row: pd.Series, field: str) -> str:
        return with_interval({"value": None if math.isnan(row[field]) else row[field],
                              "low": None if math.isnan(row[f"{field}_low"]) else row[f"{field}_low"],
                              "high": None if math.isnan(row[f"{field}_high"]) else row[f"{field}_high"]}, True)

    out = pd.DataFrame({"team": per_team["team"], "threshold": per_team["threshold_label"],
                        "predicted": per_team["predicted"], "auto-routed": per_team["auto_routed"],
                        "misroutes": per_team["misroutes"],
                        "share auto-routed": [cell(r, "coverage") for _, r in per_team.iterrows()],
                        "precision": [cell(r, "precision") for _, r in per_team.iterrows()]})
    if stored is not None:
        kept = stored.thresholds.thresholds
        out["stored threshold"] = [("never" if not math.isfinite(kept[t]) else f"{kept[t]:.3f}") if t in kept else "—"
                                   for t in per_team["team"]]
    return out


def _target_words(target: dict) -> str:
    if "precision" in target and "guarantee" in target:
        return (f"precision {float(target['precision']):g}, shown on valid with probability "
                f"{1 - float(target['guarantee']):g}")
    if "precision" in target:
        return f"precision {float(target['precision']):g}"
    if "coverage" in target:
        return f"automation rate {float(target['coverage']):g}"
    return ", ".join(f"{k} {v}" for k, v in target.items())


def stored_sentence(policy: Policy) -> str:
    t, c = policy.thresholds, policy.conformal
    reached = "" if t.reached else f" (not reached on valid; best reachable {t.best_reachable:.3f})"
    return (f"Stored in router.json: thresholds for {_target_words(dict(t.target))}{reached}, and "
            f"{METHODS.get(c.method, c.method)} sets at α = {c.alpha:g} (quantile {c.quantile:.4f}, calibrated on "
            f"{c.fitted_on}, {c.n_calibration:,} tickets).")


def comparison_table(policy: Policy, results: dict[str, dict], set_results: dict[str, dict],
                     on_splits: list[str]) -> pd.DataFrame:
    """The stored policy beside the sliders', per split: automation rate, precision, misroutes per 10,000, the sets'
    coverage and mean size."""
    rows = []
    for split in on_splits:
        stored_report, stored_sets = stored_results(split)
        for name, r, s in (("stored", stored_report, stored_sets),
                           ("these sliders", results[split], set_results.get(split))):
            o = r["overall"]
            rows.append({"policy": name, "split": split, "automation rate": with_interval(o["coverage"], True),
                         "precision": with_interval(o["precision"], True),
                         "misroutes per 10,000": with_interval(o["misroutes_per_10000"]),
                         "set coverage": with_interval(s["coverage"], True) if s else "—",
                         "mean set size": f"{float(s['mean_size']):.2f}" if s else "—"})
    return pd.DataFrame(rows)
