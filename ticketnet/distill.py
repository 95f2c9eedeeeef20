"""Soft labels for distillation: a teacher's probabilities on each training text, from the baseline or any router."""

# A student learns more from a teacher's probabilities than from the label alone: which other team a ticket could
# have gone to, and how sure. They are computed once, before the first epoch, for every text the student trains on
# (the labelled tickets and any unlabelled ones), stored in the router folder, and their hash goes on the card.

from __future__ import annotations

import io
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch

from ticketnet._runtime.hashing import file_sha256
from ticketnet.data.thread import split_thread
from ticketnet.data.tickets import DataError, team_list
from ticketnet.interface import TicketRouter

BASELINE = "baseline"             # `--teacher baseline`: the TF-IDF baseline, scored out of fold
SOFT_LABELS_FILE = "soft_labels.parquet"
TEAM_COLUMN = "p:{}"              # a team's probability column there: prefixed, so no team name meets ticket_id
TEACHER_C = 10.0                  # the baseline teacher's regularisation, fixed: no split is spent on choosing it
TEACHER_FOLDS = 5


@dataclass(frozen=True)
class SoftLabels:
    """A teacher's probabilities (texts, teams) in the student's team order: the labelled tickets, then the unlabelled
    texts, then `copies` (augmented copies of the tickets, made with the soft labels); and what the card keeps of
    how they were made."""
    probs: torch.Tensor
    ids: list[str]
    record: dict
    copies: Sequence[str] = ()

    def to_parquet(self, teams: Sequence[str]) -> bytes:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.table({"ticket_id": self.ids,
                          **{TEAM_COLUMN.format(t): self.probs[:, i].numpy() for i, t in enumerate(teams)}})
        buf = io.BytesIO()
        pq.write_table(table, buf)
        return buf.getvalue()


def read_soft_labels(path, teams: Sequence[str]) -> tuple[list[str], torch.Tensor]:
    """The ticket ids and probabilities (texts, teams) a router folder's soft_labels.parquet holds."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    missing = [t for t in teams if TEAM_COLUMN.format(t) not in table.column_names]
    if missing:
        raise DataError(f"{path}: no column for team {', '.join(map(repr, missing))}")
    probs = np.stack([table.column(TEAM_COLUMN.format(t)).to_numpy() for t in teams], axis=1)
    return [str(x) for x in table.column("ticket_id").to_pylist()], torch.from_numpy(probs.astype(np.float32))


def text_copies(texts: Sequence[str], copies: int, rng: random.Random) -> list[tuple[int, str]]:
    """`copies` augmented copies of each text, as (its index, the copy): in turn its words with a quarter of them
    dropped, a contiguous crop of half to four fifths of its words, and its first half joined to the second half of
    another text of `texts` (which team that reads as is the teacher's to say). Words are split on whitespace."""
    words = [t.split() for t in texts]
    out = []
    for j in range(copies):
        for i, w in enumerate(words):
            kind = j % 3
            if kind == 0 or len(w) < 4:
                kept = [rng.random() >= 0.25 for _ in w]
                if all(kept) and len(w) > 1:                  # a copy always differs from its ticket
                    kept[rng.randrange(len(w))] = False
                copy = [x for x, keep in zip(w, kept) if keep] or w[:1]
            elif kind == 1:
                n = max(1, round(len(w) * rng.uniform(0.5, 0.8)))
                start = rng.randrange(len(w) - n + 1)
                copy = w[start : start + n]
            else:
                other = rng.randrange(len(words) - 1) if len(words) > 1 else 0
                other = words[other + (other >= i) if len(words) > 1 else i]        # any text but its own
                copy = w[: len(w) // 2] + other[len(other) // 2 :]
            out.append((i, " ".join(copy)))
    return out


def _ids(rows: Sequence[Mapping[str, str]], n_unlabelled: int) -> list[str]:
    """The stored ids: each ticket's own, then U-000001... for the unlabelled texts in file order."""
    return [r.get("ticket_id", f"row-{i + 1}") for i, r in enumerate(rows)] + [f"U-{i + 1:06d}"
                                                                             for i in range(n_unlabelled)]


def _copy_ids(rows: Sequence[Mapping[str, str]], made: Sequence[tuple[int, str]]) -> list[str]:
    """A copy's stored id: its ticket's, then ~ and the copy's number among all copies."""
    return [f"{rows[i].get('ticket_id', f'row-{i + 1}')}~{n + 1}" for n, (i, _) in enumerate(made)]


def _record(source: str, probs: torch.Tensor, labels: Sequence[int], n_unlabelled: int, seconds: float,
            **extra) -> dict:
    n = len(labels)
    right = probs[:n].argmax(1).eq(torch.tensor(list(labels), dtype=torch.long)).double().mean().item() if n else None
    return {"teacher": source, **extra, "labelled_texts": n, "unlabelled_texts": n_unlabelled,
            "teacher_train_accuracy": None if right is None else round(right, 4),
            "mean_max_probability": round(probs.max(1).values.mean().item(), 4), "seconds": round(seconds, 1)}


def baseline_soft_labels(rows: Sequence[Mapping[str, str]], teams: Sequence[str], unlabelled: Sequence[str] = (),
                         folds: int = TEACHER_FOLDS, seed: int = 0, copies: int = 0) -> SoftLabels:
    """The baseline's probabilities, out of fold: each training ticket scored by a logistic regression fitted on the
    other folds, so its soft label is not the baseline's memory of that very ticket; an unlabelled text gets the
    mean of the fold models' probabilities. `copies` augmented copies of each ticket (`text_copies`, joined only
    with tickets of its own fold) are scored by its fold's model too.

    The TF-IDF features are fitted once, on every training text: they read no label, and a word or n-gram that only
    a fold's own tickets have gets no weight in a model that never saw them."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    from ticketnet.baseline import make_features, texts_read

    start = time.perf_counter()
    index = {t: i for i, t in enumerate(teams)}
    texts = texts_read(rows)
    y = np.array([index[r["team"]] for r in rows])
    extra = [split_thread(t).new for t in unlabelled]
    counts = np.bincount(y, minlength=len(teams))
    k = int(min(folds, counts[counts > 0].min()))
    if k < 2:
        raise DataError(f"--teacher {BASELINE}: a team has a single training ticket, too few to score it out of fold")
    out = np.zeros((len(texts), len(teams)))
    spare = np.zeros((len(extra), len(teams)))
    rng, made, made_probs = random.Random(seed), [], []
    features = make_features()
    x = features.fit_transform(texts)
    x_extra = features.transform(extra) if extra else None
    for fit_idx, score_idx in StratifiedKFold(n_splits=k, shuffle=True, random_state=seed).split(texts, y):
        model = LogisticRegression(C=TEACHER_C, max_iter=2000, random_state=seed).fit(x[fit_idx], y[fit_idx])
        cols = model.classes_
        out[np.ix_(score_idx, cols)] = model.predict_proba(x[score_idx])
        if extra:
            spare[:, cols] += model.predict_proba(x_extra) / k
        if copies:
            fold_copies = [(int(score_idx[i]), c) for i, c in text_copies([texts[i] for i in score_idx], copies, rng)]
            scored = np.zeros((len(fold_copies), len(teams)))
            scored[:, cols] = model.predict_proba(features.transform([c for _, c in fold_copies]))
            made += fold_copies
            made_probs.append(scored)
    probs = torch.from_numpy(np.concatenate([out, spare, *made_probs]).astype(np.float32))
    ids = _ids(rows, len(extra)) + _copy_ids(rows, made)
    record = _record(BASELINE, probs, y.tolist(), len(extra), time.perf_counter() - start, folds=k, C=TEACHER_C,
                     method="TF-IDF word 1-2-grams + char_wb 2-5-grams, logistic regression, out of fold",
                     **({"copies_per_ticket": copies, "copies": len(made)} if copies else {}))
    return SoftLabels(probs, ids, record, [c for _, c in made])


def router_soft_labels(router: TicketRouter, weights, rows: Sequence[Mapping[str, str]], teams: Sequence[str],
                       unlabelled: Sequence[str] = (), copies: int = 0, seed: int = 0) -> SoftLabels:
    """A router's calibrated probabilities on every text, its teams put in the student's order, with `copies`
    augmented copies of each ticket's new message (`text_copies`). The router must route to exactly the student's
    teams; a text it reads no token of gets equal odds."""
    own = tuple(router.teams)
    if sorted(own) != sorted(teams):
        raise DataError(f"--teacher {weights}: it routes to {team_list(own)}, not to the teams trained here "
                        f"({team_list(teams)})")
    start = time.perf_counter()
    index = {t: i for i, t in enumerate(teams)}
    made = text_copies([split_thread(r["text"]).new for r in rows], copies, random.Random(seed)) if copies else []
    texts = [r["text"] for r in rows] + list(unlabelled) + [c for _, c in made]
    encoded, where = [], []
    for i, text in enumerate(texts):
        try:
            encoded.append(router.encode(text))
            where.append(i)
        except ValueError:          # no token the router reads: nothing to learn from it but the label
            pass
    probs = torch.full((len(texts), len(teams)), 1.0 / len(teams))
    if encoded:
        scored = router.predict_encoded(encoded).float()                     # (scored, own teams)
        order = torch.tensor([own.index(t) for t in teams])
        probs[torch.tensor(where)] = scored[:, order]
    labels = [index[r["team"]] for r in rows]
    ids = _ids(rows, len(unlabelled)) + _copy_ids(rows, made)
    record = _record(str(weights), probs, labels, len(unlabelled), time.perf_counter() - start,
                     kind=router.kind, sha256=file_sha256(weights), unscored_texts=len(texts) - len(encoded),
                     **({"copies_per_ticket": copies, "copies": len(made)} if copies else {}))
    return SoftLabels(probs, ids, record, [c for _, c in made])


class WordVectors(Protocol):
    """Starting embeddings for a router's words (`ticketnet.encoder.word_vectors.EncoderWordVectors`): called with the
    words, the width and the scale; `record` and `seconds` go on the card."""
    record: dict
    seconds: float

    def __call__(self, words: Sequence[str], d: int, scale: float) -> torch.Tensor: ...


@dataclass(frozen=True)
class Unlabelled:
    """Tickets without teams (`train --unlabelled FILE`): pretraining reads them, a teacher scores them, and the
    router learns them from its probabilities alone; `record` is what the card keeps of the file."""
    texts: list[str]
    record: dict


class Distillation:
    """A teacher's soft labels for `train --teacher`, made once per training set however many seeds train on it.

    `score(rows, teams, unlabelled, copies)` makes them: `baseline_soft_labels`, or `router_soft_labels` of a loaded
    router (loading a router needs the loaders above this layer, so the caller binds it)."""

    def __init__(self, score) -> None:
        self._score = score
        self._made: tuple[tuple, SoftLabels] | None = None

    @classmethod
    def of_baseline(cls, seed: int = 0, folds: int = TEACHER_FOLDS) -> "Distillation":
        return cls(lambda rows, teams, extra, copies: baseline_soft_labels(rows, teams, extra, folds=folds, seed=seed,
                                                                           copies=copies))

    @classmethod
    def of_router(cls, router: TicketRouter, weights, seed: int = 0) -> "Distillation":
        return cls(lambda rows, teams, extra, copies: router_soft_labels(router, weights, rows, teams, extra, copies,
                                                                         seed))

    def soft_labels(self, rows: Sequence[Mapping[str, str]], teams: Sequence[str], unlabelled: Sequence[str] = (),
                    copies: int = 0) -> SoftLabels:
        key = (tuple(teams), tuple((r.get("ticket_id"), r["text"], r["team"]) for r in rows), tuple(unlabelled),
               copies)
        if self._made is None or self._made[0] != key:
            self._made = (key, self._score(rows, teams, list(unlabelled), copies))
        return self._made[1]
