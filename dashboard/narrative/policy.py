"""The Routing policy page's numbers in words: percentages with their intervals, the tables as shown, the notes."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dashboard.data.policy import METHODS
from ticketnet.policy import Policy

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


def comparison_table(results: dict[str, dict], set_results: dict[str, dict],
                     stored: dict[str, tuple[dict, dict]]) -> pd.DataFrame:
    """The stored policy beside the sliders', per split: automation rate, precision, misroutes per 10,000, the sets'
    coverage and mean size; `stored` holds the stored policy's (threshold report, set report) of each split."""
    rows = []
    for split, (stored_report, stored_sets) in stored.items():
        for name, r, s in (("stored", stored_report, stored_sets),
                           ("these sliders", results[split], set_results.get(split))):
            o = r["overall"]
            rows.append({"policy": name, "split": split, "automation rate": with_interval(o["coverage"], True),
                         "precision": with_interval(o["precision"], True),
                         "misroutes per 10,000": with_interval(o["misroutes_per_10000"]),
                         "set coverage": with_interval(s["coverage"], True) if s else "—",
                         "mean set size": f"{float(s['mean_size']):.2f}" if s else "—"})
    return pd.DataFrame(rows)


# -- when the policy misses what it was asked for -----------------------------------------------------------------
VOUCH_WORDS = ("“Vouch for it” asks how sure valid must be of the target before a team's tickets skip the queue. "
               "No: each team gets the lowest threshold at which valid reaches the target, a best guess that new "
               "tickets miss about half the time. 90 % or 95 %: only thresholds at which valid shows the target "
               "with that probability; the teams valid cannot vouch for send every ticket to a person.")
ALPHA_WORDS = ("α is how often a ticket's prediction set may miss its true team: at α = 0.05 the set, the shortlist "
               "a person picks from, holds the true team for 95 of 100 tickets like valid's.")


def _where(split: str) -> str:
    return "the hand-written set" if split == "handwritten" else split


def target_warnings(kind: str, value: float, results: dict[str, dict], curves: dict[str, pd.DataFrame],
                    vouched: bool) -> list[str]:
    """A sentence for each way the policy misses its target on the splits it is measured on: the precision of what
    it auto-routes (with its interval), each team whose precision falls short, and where one global threshold would
    do better at the same automation rate (`curves`: each split's single-threshold risk–coverage curve)."""
    out: list[str] = []
    for split, result in results.items():
        o = result["overall"]
        precision = _value(o["precision"])
        if kind == "precision" and precision < value:
            beyond = (stat_high := o["precision"].get("high")) is not None and float(stat_high) < value
            out.append(
                f"On {_where(split)} the auto-routed tickets reach precision {with_interval(o['precision'], True)}, "
                f"under the {percent(value)} asked"
                + (", by more than the sampling noise of this many tickets." if beyond else
                   ", though within the sampling noise of this many tickets.")
                + (" The thresholds reach the target on valid, where they were fitted; new tickets fall short of a "
                   "best guess about half the time. Set “Vouch for it” to 90 % or 95 % to ask valid for proof."
                   if not vouched else ""))
        short = []
        for team, t in result["per_team"].items():
            team_precision, high = _value(t["precision"]), t["precision"].get("high")
            if kind == "precision" and t["auto_routed"] and team_precision < value and high is not None \
                    and float(high) < value:
                short.append(f"{team} {with_interval(t['precision'], True)}"
                             + (", every one of its tickets auto-routed" if t["auto_routed"] == t["predicted"] else ""))
        if short:
            out.append(f"On {_where(split)} these teams' auto-routed tickets fall short of {percent(value)} beyond "
                       f"doubt (their whole interval lies under it): {'; '.join(short)}.")
        curve = curves.get(split)
        if curve is not None and len(curve) and o["auto_routed"] and not math.isnan(precision):
            coverage = _value(o["coverage"])
            ordered = curve.sort_values("coverage", kind="stable")
            single = float(np.interp(coverage, ordered["coverage"], ordered["risk"]))
            if single < 1.0 - precision - 0.002:
                high = o["precision"].get("high")
                beyond = high is not None and single < 1.0 - float(high)     # under the interval's best misroute rate
                out.append(f"On {_where(split)} one confidence threshold for every team, auto-routing the same "
                           f"{percent(coverage)} of tickets, would misroute {percent(single)} of them, against "
                           f"{percent(1.0 - precision)} with these per-team thresholds"
                           + (": on this router the per-team fit costs precision at this point." if beyond else
                              ", a difference within the sampling noise of this many tickets."))
    return out
