"""Corpus aggregates as partial sums: each partition sums its own tickets, the merge adds the partials up."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ticketnet.interpret.signals import ROLLOUT, TAU

CONFIDENCE_BINS = 20                 # [0, 1] in steps of 0.05
TAU_BINS = 40                        # [−1, 1] in steps of 0.05
EFFECT_STEP = 1e-3                   # a token's median effect is read off a histogram of this width (exact to ±0.0005)
TOKEN_SUMS = ("tickets", "effect_sum", "rollout_sum", "top_effect")
AOPC = "aopc"                        # the summary's mean AOPC: {metric: {signal: mean}}
FLAGS = "flags"                      # an encoder scan's flag counts: {"low_confidence": n, "unfamiliar": n or None}


def _hist(values: np.ndarray, bins: int, lo: float, hi: float) -> list[int]:
    values = values[~np.isnan(values)]
    idx = np.clip(((values - lo) / (hi - lo) * bins).astype(np.int64), 0, bins - 1)
    return np.bincount(idx, minlength=bins).tolist()


def ticket_partial(tickets: pd.DataFrame, teams: Sequence[str], tau_columns: Mapping[str, str],
                   aopc_columns: Mapping[tuple[str, str], str]) -> dict:
    """Partial sums of one partition's ticket rows: counts, histograms and sums that add up across partitions.
    `tau_columns` maps each signal to its τ column, `aopc_columns` each (signal, metric) to its AOPC column."""
    teams = list(teams)
    out = {"tickets": int(len(tickets)), "truncated": int(tickets["truncated"].sum()),
           "routing": [int((tickets["predicted"] == t).sum()) for t in teams],
           "confidence_hist": _hist(tickets["confidence"].to_numpy(float), CONFIDENCE_BINS, 0.0, 1.0)}
    has = tickets["label"].notna()
    out["labelled"] = int(has.sum())
    out["correct"] = int(tickets.loc[has, "correct"].astype(bool).sum())
    lab = tickets.loc[has, "label"].map(teams.index).to_numpy(int)
    pred = tickets.loc[has, "predicted"].map(teams.index).to_numpy(int)
    C = len(teams)
    out["confusion"] = np.bincount(lab * C + pred, minlength=C * C).reshape(C, C).tolist()
    out[TAU] = {}
    for signal, col in tau_columns.items():
        v = tickets[col].to_numpy(float)
        ok = ~np.isnan(v)
        out[TAU][signal] = {"hist": _hist(v, TAU_BINS, -1.0, 1.0), "sum": float(v[ok].sum()), "count": int(ok.sum())}
    out[AOPC] = {}
    for (signal, metric), col in aopc_columns.items():
        v = tickets[col].to_numpy(float)
        ok = ~np.isnan(v)
        out[AOPC].setdefault(metric, {})[signal] = {"sum": float(v[ok].sum()), "count": int(ok.sum())}
    return out


def _add(a, b):
    if isinstance(a, dict):
        return {k: _add(a[k], b[k]) if k in a else b[k] for k in {**a, **b}} if a else dict(b)
    if isinstance(a, list):
        return [_add(x, y) for x, y in zip(a, b)]
    return a + b


def merge_partials(partials: Sequence[dict], teams: Sequence[str], level: str) -> dict:
    """The corpus summary from partition partials (in partition order, so float sums come out the same every
    time): routing mix, confidence histogram, accuracy and confusion when labelled, τ distributions, mean AOPC."""
    total: dict = {}
    for p in partials:
        total = _add(total, p) if total else p
    if not total:
        raise ValueError("no partitions to merge")
    n = total["tickets"]
    summary = {
        "level": level, "teams": list(teams), "tickets": n, "truncated": total["truncated"],
        "routing": dict(zip(teams, total["routing"])),
        "confidence_hist": {"edges": np.linspace(0, 1, CONFIDENCE_BINS + 1).round(4).tolist(),
                            "counts": total["confidence_hist"]},
        "labelled": total["labelled"],
        "accuracy": total["correct"] / total["labelled"] if total["labelled"] else None,
        "confusion": total["confusion"] if total["labelled"] else None,
        TAU: {signal: {"edges": np.linspace(-1, 1, TAU_BINS + 1).round(4).tolist(), "counts": v["hist"],
                       "count": v["count"], "mean": v["sum"] / v["count"] if v["count"] else None}
              for signal, v in sorted(total[TAU].items())},
        AOPC: {metric: {signal: v["sum"] / v["count"] if v["count"] else None for signal, v in sorted(by.items())}
               for metric, by in sorted(total[AOPC].items())},
    }
    if FLAGS in total:                 # an encoder router's scan: its card's flags, counted
        summary[FLAGS] = total[FLAGS]
    return summary


def token_partial(occurrences: pd.DataFrame, blocks: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-token partial sums of one partition from its token occurrences (ticket, team, token, effect, rollout,
    attention b1.., is_top), one row per (predicted team, token) plus the effect histogram (team, token, bin, count).

    A ticket counts once per distinct token: its effect is the mean over that token's occurrences in the ticket,
    its rollout and attention shares the sums (each ticket's shares add up to 1)."""
    attn = [f"attention b{b + 1}" for b in range(blocks)]
    per = occurrences.groupby(["ticket", "team", "token"], sort=True).agg(
        effect=("effect", "mean"), rollout=(ROLLOUT.name, "sum"), **{a: (a, "sum") for a in attn},
        top=("is_top", "max")).reset_index()
    per["bin"] = np.rint(per["effect"].to_numpy(float) / EFFECT_STEP).astype(np.int32)
    sums = per.groupby(["team", "token"], sort=True).agg(
        tickets=("ticket", "size"), effect_sum=("effect", "sum"), rollout_sum=(ROLLOUT.name, "sum"),
        **{f"{a} sum": (a, "sum") for a in attn}, top_effect=("top", "sum")).reset_index()
    hist = per.groupby(["team", "token", "bin"], sort=True).size().rename("count").reset_index()
    return sums, hist


def median_from_hist(hist: pd.DataFrame) -> pd.Series:
    """Median effect per (team, token) from histogram rows (team, token, bin, count): the mean of the two middle
    values (one when the count is odd), each read as its bin's centre."""
    h = hist.sort_values(["team", "token", "bin"]).reset_index(drop=True)
    cum = h.groupby(["team", "token"], sort=False)["count"].cumsum()
    total = h.groupby(["team", "token"], sort=False)["count"].transform("sum")
    before = cum - h["count"]
    lo, hi = (total - 1) // 2, total // 2
    at_lo = h[(before <= lo) & (lo < cum)].set_index(["team", "token"])["bin"]
    at_hi = h[(before <= hi) & (hi < cum)].set_index(["team", "token"])["bin"]
    return ((at_lo + at_hi) / 2 * EFFECT_STEP).rename("median_effect")


def merge_tokens(sums: Sequence[pd.DataFrame], hists: Sequence[pd.DataFrame], itos: Sequence[str] | None,
                 teams: Sequence[str], blocks: int) -> pd.DataFrame:
    """tokens.parquet: one row per (predicted team, token) seen: tickets, mean and median deletion effect on the
    team, mean rollout share, mean attention received per block, top-effect count and share. `itos` names the
    Tiny router's token ids; None where the partials are keyed by the text itself (an encoder scan's words)."""
    attn = [f"attention b{b + 1}" for b in range(blocks)]
    s = pd.concat(sums, ignore_index=True).groupby(["team", "token"], sort=True).sum(numeric_only=True)
    h = pd.concat(hists, ignore_index=True).groupby(["team", "token", "bin"], sort=True)["count"].sum().reset_index()
    out = pd.DataFrame({"tickets": s["tickets"].astype("int64"),
                        "mean_effect": s["effect_sum"] / s["tickets"],
                        "median_effect": median_from_hist(h),
                        "mean_rollout": s["rollout_sum"] / s["tickets"],
                        **{f"mean_{a.replace(' ', '_')}": s[f"{a} sum"] / s["tickets"] for a in attn},
                        "top_effect": s["top_effect"].astype("int64")})
    out["top_effect_share"] = out["top_effect"] / out["tickets"]
    out = out.reset_index()
    out.insert(0, "team", [teams[i] for i in out.pop("team")])
    out.insert(1, "token", [itos[i] for i in out.pop("token")] if itos is not None else out.pop("token").astype(str))
    return out.sort_values(["team", "tickets", "token"], ascending=[True, False, True], kind="stable",
                           ignore_index=True)
