"""Suspect labels from out-of-fold probabilities, by cleanlab: the ranked tickets, per-team quality, overlapping teams."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ticketnet.labels.oof import LabelsError, OutOfFold

RANK_METHODS = ("self_confidence", "normalized_margin")
EVIDENCE_ROWS = 200               # tickets, from the top of the ranking, that get token evidence (the rest: empty)
EVIDENCE_TOKENS = 3               # tokens per team in the evidence
SPREADSHEET_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
QUEUE_COLUMNS = ("ticket_id", "text", "given_team", "suggested_team", "score", "decision")


def _check(oof: OutOfFold, method: str) -> None:
    if method not in RANK_METHODS:
        raise LabelsError(f"--method must be one of {', '.join(RANK_METHODS)}, got {method!r}")
    present = np.unique(oof.given)
    if len(present) < 2:
        raise LabelsError("the split has tickets of one team only: there is nothing to doubt a label against")


def _present(oof: OutOfFold) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """cleanlab wants every class 0..K-1 to occur: the teams present, the labels renumbered onto them, and the
    probabilities restricted to them (renormalised; a team absent from the split is nobody's given label)."""
    present = np.unique(oof.given)
    remap = np.full(len(oof.teams), -1)
    remap[present] = np.arange(len(present))
    p = oof.probs[:, present]
    p = p / np.clip(p.sum(1, keepdims=True), 1e-12, None)
    return present, remap[oof.given], p


def rank_issues(oof: OutOfFold, texts: Mapping[str, str] | None = None, method: str = "self_confidence",
                truth: Mapping[str, bool] | None = None) -> pd.DataFrame:
    """Every ticket with its given team, the suggested team (the out-of-fold argmax), the label-quality score
    (cleanlab.rank.get_label_quality_scores, lower: more doubtful), and `flagged` (cleanlab.filter.find_label_issues
    at its default filter); sorted by score, flagged first. `truth`: ticket id → wrongly labelled, for measuring."""
    from cleanlab.filter import find_label_issues
    from cleanlab.rank import get_label_quality_scores

    _check(oof, method)
    present, labels, probs = _present(oof)
    score = get_label_quality_scores(labels, probs, method=method)
    # One process: by default cleanlab forks a multiprocessing pool per call and hands it the data through module
    # globals, which in the dashboard's threaded server hung the page (a fork under held locks) and would mix two
    # sessions' data; the result does not depend on n_jobs.
    flagged = find_label_issues(labels, probs, n_jobs=1)
    suggested = present[probs.argmax(1)]
    teams = np.array(oof.teams, dtype=object)
    frame = pd.DataFrame({
        "ticket_id": oof.ticket_ids,
        "given_team": teams[oof.given],
        "suggested_team": teams[suggested],
        "score": score,
        "flagged": flagged,
        "p_given": oof.probs[np.arange(len(oof.given)), oof.given],
        "p_suggested": oof.probs[np.arange(len(oof.given)), suggested],
        "fold": oof.fold,
    })
    if texts is not None:
        frame.insert(1, "text", [texts.get(t, "") for t in oof.ticket_ids])
    if truth is not None:
        frame["wrong_label"] = [bool(truth.get(t, False)) for t in oof.ticket_ids]
    frame = frame.sort_values(["flagged", "score", "ticket_id"], ascending=[False, True, True], kind="stable")
    frame.insert(0, "rank", np.arange(1, len(frame) + 1))
    return frame.reset_index(drop=True)


def team_quality(oof: OutOfFold) -> pd.DataFrame:
    """Per team: cleanlab.dataset.rank_classes_by_label_quality (issues, noise, quality score), by team name."""
    from cleanlab.dataset import rank_classes_by_label_quality

    present, labels, probs = _present(oof)
    out = rank_classes_by_label_quality(labels, probs)
    out.insert(0, "team", [oof.teams[present[i]] for i in out["Class Index"]])
    out = out.drop(columns=["Class Index"]).rename(columns={
        "Label Issues": "label_issues", "Inverse Label Issues": "inverse_label_issues", "Label Noise": "label_noise",
        "Inverse Label Noise": "inverse_label_noise", "Label Quality Score": "label_quality"})
    out["tickets"] = [int((oof.given == oof.teams.index(t)).sum()) for t in out["team"]]
    return out.reset_index(drop=True)


def overlapping_pairs(oof: OutOfFold) -> pd.DataFrame:
    """Pairs of teams often mistaken for one another (cleanlab.dataset.find_overlapping_classes): team_a, team_b,
    tickets (estimated overlapping examples) and joint (their share of all tickets), most overlapping first."""
    from cleanlab.dataset import find_overlapping_classes

    present, labels, probs = _present(oof)
    out = find_overlapping_classes(labels, probs)
    return pd.DataFrame({"team_a": [oof.teams[present[i]] for i in out["Class Index A"]],
                         "team_b": [oof.teams[present[i]] for i in out["Class Index B"]],
                         "tickets": out["Num Overlapping Examples"].astype(int).to_numpy(),
                         "joint": out["Joint Probability"].to_numpy(float)})


def measure(ranked: pd.DataFrame, tops: Sequence[int] = (100, 500)) -> dict:
    """Precision and recall of the flagged set against `wrong_label`, and the precision of the top of the ranking
    (`ranked`'s order: the flagged tickets by score, then the rest)."""
    truth = ranked["wrong_label"].to_numpy(bool)
    flagged = ranked["flagged"].to_numpy(bool)
    hits = int((truth & flagged).sum())
    out = {"tickets": len(ranked), "wrong_labels": int(truth.sum()), "flagged": int(flagged.sum()),
           "flagged_wrong": hits, "precision": round(hits / max(1, flagged.sum()), 4),
           "recall": round(hits / max(1, truth.sum()), 4)}
    by_score = ranked.sort_values("rank")["wrong_label"].to_numpy(bool)
    for k in tops:
        out[f"top_{k}_precision"] = round(float(by_score[:k].mean()), 4) if len(by_score) >= k else None
    return out


# -- evidence --------------------------------------------------------------------------------------------------
def token_evidence(router, texts: Sequence[str], given: Sequence[str], suggested: Sequence[str],
                   k: int = EVIDENCE_TOKENS) -> list[dict]:
    """For each ticket, the `k` tokens whose deletion lowers the router's support for the given team most, and the
    same for the suggested team (ticketnet.interpret's counterfactual deletion, in logit difference: support = log-odds
    of the team with the token − without it; probabilities of a confident router barely move), as "token +1.23"."""
    import torch

    from ticketnet.interpret.methods.removal import counterfactual_probs, removal_support

    out = []
    index = {t: i for i, t in enumerate(router.teams)}
    for text, g, s in zip(texts, given, suggested):
        enc = router.encode(text)
        ids = torch.tensor(enc.ids, dtype=torch.long)
        with torch.inference_mode():
            cf = counterfactual_probs(router.model, ids)
        row = {"router_p_given": round(float(cf.base[index[g]]), 4),
               "router_p_suggested": round(float(cf.base[index[s]]), 4)}
        for name, team in (("given", g), ("suggested", s)):
            support = removal_support(cf.base, cf.removed, index[team], "logit_diff")
            order = torch.argsort(support, descending=True, stable=True)[:k].tolist()
            row[f"evidence_{name}"] = "; ".join(f"{enc.tokens[i]} {float(support[i]):+.2f}" for i in order)
        out.append(row)
    return out


def with_evidence(ranked: pd.DataFrame, router, rows: int = EVIDENCE_ROWS) -> pd.DataFrame:
    """`ranked` with the router's evidence for the given and the suggested team on its first `rows` tickets."""
    out = ranked.copy()
    top = out.head(rows)
    found = token_evidence(router, top["text"].tolist(), top["given_team"].tolist(), top["suggested_team"].tolist())
    for col in ("router_p_given", "router_p_suggested", "evidence_given", "evidence_suggested"):
        values = [f[col] for f in found]
        out[col] = pd.Series(values + [None] * (len(out) - len(values)), index=out.index,
                             dtype="float64" if col.startswith("router_p") else "object")
    return out


# -- files -----------------------------------------------------------------------------------------------------
def spreadsheet_safe(value):
    """A text cell a spreadsheet will not run as a formula: one starting with = + - @ or a tab/CR gets a leading '."""
    if isinstance(value, str) and value.startswith(SPREADSHEET_TRIGGERS):
        return "'" + value
    return value


def csv_text(frame: pd.DataFrame) -> bytes:
    """The frame as UTF-8 CSV with every text cell spreadsheet-safe; floats with 6 significant digits."""
    buf = io.StringIO(newline="")
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([spreadsheet_safe(c) for c in frame.columns])
    for row in frame.itertuples(index=False):
        writer.writerow(["" if v is None or (isinstance(v, float) and np.isnan(v)) else
                         f"{v:.6g}" if isinstance(v, float) else spreadsheet_safe(v) for v in row])
    return buf.getvalue().encode("utf-8")


def relabel_queue(ranked: pd.DataFrame) -> pd.DataFrame:
    """The reviewer's queue: ticket id, text, given and suggested team, score, and an empty `decision` column."""
    out = ranked[["ticket_id", "text", "given_team", "suggested_team", "score"]].copy()
    out["decision"] = ""
    return out


def summary(oof: OutOfFold, ranked: pd.DataFrame, method: str, evidence_rows: int) -> dict:
    """The JSON beside the CSV: settings, counts, per-team quality and the overlapping pairs."""
    quality = team_quality(oof)
    pairs = overlapping_pairs(oof)
    flagged = ranked[ranked["flagged"]]
    out = {"settings": {**oof.settings, "method": method, "evidence_rows": evidence_rows},
           "teams": list(oof.teams), "tickets": len(ranked), "flagged": int(len(flagged)),
           "flagged_by_given_team": {str(k): int(v) for k, v in flagged["given_team"].value_counts().items()},
           "team_quality": json.loads(quality.to_json(orient="records")),
           "overlapping_pairs": json.loads(pairs.head(50).to_json(orient="records")),
           "folds": [{k: v for k, v in f.items() if k not in ("train_ids", "scored_ids")} for f in oof.folds]}
    if "wrong_label" in ranked:
        out["measured"] = measure(ranked)
    return out
