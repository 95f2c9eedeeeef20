"""The Label issues page's data: the out-of-fold results cached in the router folder, ranked by cleanlab once each."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard.data import model
from dashboard.data.store import stamp
from ticketnet.labels import issues as label_issues
from ticketnet.labels import oof as label_oof

SOURCES = label_oof.SOURCES
SOURCE_LABELS = {"router": "router (its recipe, k folds)", "baseline": "baseline (TF-IDF + logistic regression)"}
CHEAP_FOLDS = 3                                    # the page's button: the baseline's 3-fold run
CHEAP_EPOCHS = 2                                   # the Tiny router's folds in the command the page suggests
_NAME = re.compile(r"^oof-(?P<source>router|baseline)-(?P<split>.+?)-k(?P<folds>\d+)(?:-e(?P<epochs>\d+))?$")


@dataclass(frozen=True)
class Result:
    """One cached out-of-fold result: its file and what its name says."""

    path: str
    source: str
    split: str
    folds: int
    epochs: int | None

    @property
    def label(self) -> str:
        epochs = f", {self.epochs} epochs" if self.epochs else ""
        return f"{self.split} · {self.folds} folds{epochs}"


@dataclass
class Ranked:
    """A result read and ranked: every ticket with its score, the per-team quality and the overlapping pairs."""

    table: pd.DataFrame
    quality: pd.DataFrame
    pairs: pd.DataFrame
    teams: tuple[str, ...]
    settings: dict


def router_folder() -> Path:
    return model.weights_path().parent


def results(source: str) -> list[Result]:
    """The out-of-fold results of `source` cached in this session's router folder, newest first."""
    found = []
    for path in label_oof.cached_results(router_folder()):
        m = _NAME.match(path.stem)
        if m and m["source"] == source:
            found.append(Result(str(path), source, m["split"], int(m["folds"]),
                                int(m["epochs"]) if m["epochs"] else None))
    return found


def split_csv(split: str) -> Path:
    return model.data_folder() / f"{split}.csv"


def command(source: str, split: str = "train", folds: int = CHEAP_FOLDS, epochs: int | None = None) -> str:
    """The command that computes a result for this session's router. `epochs` None: the Tiny router's folds get
    CHEAP_EPOCHS; an encoder router's its card's recipe (a fine-tune needs only a few)."""
    folder = router_folder()
    if epochs is None and not model.is_encoder_router():
        epochs = CHEAP_EPOCHS
    epochs_part = f" --epochs {epochs}" if source == "router" and epochs else ""
    return (f".venv/bin/python -m ticketnet label-issues --router {folder} --split {split} --folds {folds}{epochs_part} "
            f"--source {source} --out label-issues-{source}.csv")


def router_refusal(split: str = "train", folds: int = CHEAP_FOLDS) -> str | None:
    """Why the command would not fine-tune this session's encoder router per fold on the split (over the size limit:
    the estimate and the baseline's command), None for the Tiny router, a split within the limit or no split."""
    if not model.is_encoder_router() or split_rows(split) is None:
        return None
    # The baseline's command as this page gives every command, with the README's .venv/bin/python (the command
    # line's own refusal says `python -m`, to a shell that has the environment active).
    return _refusal(str(router_folder()), split, folds, split_rows(split), stamp(router_folder() / "router.json"),
                    command("baseline", split, folds))


@st.cache_data(show_spinner=False, max_entries=16)
def _refusal(folder: str, split: str, folds: int, tickets: int, key: tuple, instead: str) -> str | None:
    from ticketnet.labels.run import size_refusal

    try:
        return size_refusal(Path(folder), split, folds, tickets=tickets, instead=instead)
    except ValueError as exc:                        # a card with no recipe: what the command would say
        return str(exc)


def detail(settings: dict) -> str:
    """How a router result's folds were trained, in a few words."""
    if settings.get("kind") == label_oof.ENCODER:
        blocks, epochs = settings.get("train_blocks"), settings.get("epochs")
        return (f"{epochs} epoch{'' if epochs == 1 else 's'} per fold, {settings.get('base')} fine-tuned "
                f"({f'the top {blocks} blocks' if blocks else 'every block'})")
    return f"{settings.get('epochs')} epochs per fold, {settings.get('recipe')} recipe"


@st.cache_data(show_spinner="Ranking the labels with cleanlab…", max_entries=8)
def _ranked(path: str, key: tuple, split: str, method: str) -> Ranked | None:
    from ticketnet.data.tickets import load_split

    csv = split_csv(split)
    oof = label_oof.read_cache(Path(path), csv if csv.is_file() else None)
    if oof is None:
        return None
    rows = load_split(csv) if csv.is_file() else []
    texts = {r["ticket_id"]: r["text"] for r in rows}
    table = label_issues.rank_issues(oof, texts, method)
    return Ranked(table, label_issues.team_quality(oof), label_issues.overlapping_pairs(oof), oof.teams,
                  oof.settings)


def ranked(result: Result, method: str = "self_confidence") -> Ranked | None:
    """The result ranked by cleanlab (once per file version and method); None when the split changed since."""
    return _ranked(result.path, (stamp(Path(result.path)), stamp(split_csv(result.split))), result.split, method)


def filtered(table: pd.DataFrame, given: str | None, suggested: str | None, score: tuple[float, float],
             flagged_only: bool) -> pd.DataFrame:
    """The ranked rows that match the filters, in rank order."""
    keep = table["score"].between(score[0], score[1])
    if given:
        keep &= table["given_team"] == given
    if suggested:
        keep &= table["suggested_team"] == suggested
    if flagged_only:
        keep &= table["flagged"]
    return table[keep]


def relabel_queue(table: pd.DataFrame) -> pd.DataFrame:
    """The relabel queue (ticket id, text, given and suggested team, score, an empty decision), every text cell
    spreadsheet-safe (a ticket starting with = + - @ gets a leading ')."""
    queue = label_issues.relabel_queue(table)
    for col in ("ticket_id", "text", "given_team", "suggested_team"):
        queue[col] = queue[col].map(label_issues.spreadsheet_safe)
    return queue


def evidence(text: str, given: str, suggested: str) -> dict | None:
    """The router's top tokens for the given and for the suggested team (deletion effect, logit difference); None
    for an encoder router, whose deletion effects the Interpretation page shows."""
    if model.is_encoder_router():
        return None
    return _evidence(text, given, suggested)


@model.cached_on_weights(show_spinner="Deleting each word to see what it does for both teams…", max_entries=64)
def _evidence(text: str, given: str, suggested: str) -> dict:
    return label_issues.token_evidence(model.router(), [text], [given], [suggested])[0]


def run_baseline(split: str = "train", folds: int = CHEAP_FOLDS) -> None:
    """The baseline's out-of-fold probabilities for this router's split, computed in this process and cached."""
    from ticketnet.labels.run import compute_oof

    compute_oof(router_folder(), split, folds, None, "baseline", scheduler=label_oof.SYNCHRONOUS)


def split_size(split: str) -> int | None:
    """Tickets in the split (lines of its CSV less the header, a quick upper bound), None without the file."""
    path = split_csv(split)
    if not path.is_file():
        return None
    with path.open("rb") as f:
        return max(0, sum(1 for _ in f) - 1)


def split_rows(split: str) -> int | None:
    """Tickets in the split (its CSV's records, a quoted text's line breaks counted once), None without the file."""
    path = split_csv(split)
    return _rows(str(path), stamp(path)) if path.is_file() else None


@st.cache_data(show_spinner=False, max_entries=16)
def _rows(path: str, key: tuple) -> int:
    import csv

    with open(path, newline="", encoding="utf-8") as f:
        return max(0, sum(1 for _ in csv.reader(f)) - 1)
