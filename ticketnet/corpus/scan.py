"""One partition's work, pure and cluster-free: route and interpret its tickets, then write its files atomically."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ticketnet.corpus.aggregate import ticket_partial, token_partial
from ticketnet.corpus.result import TOP_K, PartitionResult, add_policy_columns, top_values  # noqa: F401  (TOP_K: API)
from ticketnet.corpus.source import Partition, read_partition
from ticketnet.interpret import signals
from ticketnet.interpret.split import SPLIT_ERASER_SIGNALS, SplitOptions, split_records

LEVELS = ("route", "effects", "full")      # how much is computed: prediction; + effects, τ, token sums; + ERASER


def score_column(signal: str, metric: str) -> str:
    """The tickets table's column for one (signal, metric) of `split_records`: "tau rollout", "comprehensiveness
    removal", and "disagreement" (rollout's, the one the queries sort by). Only ever written: the aggregates take
    the (signal, metric) pairs themselves, so no column name is read back."""
    return metric if metric == signals.DISAGREEMENT else f"{metric} {signal}"


def check_level(level: str) -> str:
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
    return level


def scan_rows(router, rows: Sequence[Mapping], row0: int, level: str, keep_occurrences: bool = False) -> PartitionResult:
    """Route and (from `effects`) interpret `rows` (ticket_id, text, team or None), the input's rows row0.. .

    From `effects` the numbers come from `split_records`, the function behind `interpret_split`, seeded by the
    rows' places in the whole input: a ticket gets the same τ and AOPC as in `interpret_split` over that input.
    An encoder router's rows go to `scan_encoder_rows` (by word, no level full).
    """
    check_level(level)
    if getattr(router, "kind", None) == "encoder":
        from ticketnet.corpus.encoder_scan import scan_encoder_rows

        return scan_encoder_rows(router, rows, row0, level, keep_occurrences)
    teams = list(router.teams)
    encoded = [router.encode(r["text"]) for r in rows]
    base = pd.DataFrame({
        "ticket_id": [r["ticket_id"] for r in rows],
        "row": np.arange(row0, row0 + len(rows), dtype=np.int64),
        "text": [r["text"] for r in rows],
        "tokens": [sorted(set(e.tokens)) for e in encoded],
        "truncated": [e.truncated for e in encoded],
        "set_aside_chars": np.array([e.set_aside_chars for e in encoded], dtype=np.int32),
    })
    label = [r.get("team") if r.get("team") in teams else None for r in rows]
    label_p = np.full(len(rows), np.nan)                  # the router's probability of the given team, if any
    token_sums = effect_hist = occurrences = None
    all_probs: list = [None] * len(rows)                  # for a stored policy's auto and team_set columns
    if level == "route":
        probs = router.predict_encoded(encoded)
        all_probs = list(probs.double().numpy())
        for i, lab in enumerate(label):
            if lab is not None:
                label_p[i] = float(probs[i, teams.index(lab)])
        conf, pred = probs.max(dim=1)
        frame = pd.DataFrame({"n": [len(e.ids) for e in encoded], "predicted": [teams[i] for i in pred.tolist()],
                              "label": label})
        confidence = conf.double().numpy()
        extra = pd.DataFrame(index=range(len(rows)))
        taus, aopc = {}, {}
    else:
        L = router.model.config.n_blocks
        extras: list[dict] = [{} for _ in rows]
        occ: list[tuple] = []

        def on_ticket(i: int, rec: dict, p: torch.Tensor, effect, sig: dict) -> None:
            toks = encoded[i].tokens
            all_probs[i] = p.double().numpy()
            extras[i] = {"confidence": float(p.max()), **top_values(sig[signals.ROLLOUT.name], toks, "top_rollout")}
            if label[i] is not None:
                label_p[i] = float(p[teams.index(label[i])])
            if effect is None:                                     # one token: nothing to delete
                extras[i].update(top_values(torch.empty(0), toks, "top_effect"))
                return
            extras[i].update(top_values(effect, toks, "top_effect"))
            n = len(toks)
            top = torch.zeros(n, dtype=torch.bool)
            top[int(torch.argsort(effect.double(), descending=True, stable=True)[0])] = True
            occ.append((np.full(n, i, np.int32), np.full(n, teams.index(rec["predicted"]), np.int8),
                        np.asarray(encoded[i].ids, np.int32), effect.double().numpy(),
                        sig[signals.ROLLOUT.name].double().numpy(),
                        *(sig[signals.mean_attention(b + 1).name].double().numpy() for b in range(L)), top.numpy()))

        options = SplitOptions(target="predicted", eraser_signals=SPLIT_ERASER_SIGNALS if level == "full" else ())
        records, scores = split_records(router, rows, [e.ids for e in encoded], options, on_ticket=on_ticket,
                                        seed_offset=row0)
        keys = options.row_keys(L, router.model.config.h)                # the order of every ticket's rows
        frame = pd.DataFrame({"n": [r["n"] for r in records], "predicted": [r["predicted"] for r in records],
                              "label": label,
                              **{score_column(sg, m): [row[j][2] for row in scores] for j, (sg, m) in enumerate(keys)}})
        taus = {sg: score_column(sg, m) for sg, m in keys if m == signals.TAU}
        aopc = {(sg, m): score_column(sg, m) for sg, m in keys if m in signals.ERASER_METRICS}
        confidence = np.array([e["confidence"] for e in extras])
        extra = pd.DataFrame([{k: v for k, v in e.items() if k != "confidence"} for e in extras])
        if occ:
            cols = ["ticket", "team", "token", "effect", signals.ROLLOUT.name,
                    *(f"attention b{b + 1}" for b in range(L)), "is_top"]
            occurrences = pd.DataFrame({c: np.concatenate([o[j] for o in occ]) for j, c in enumerate(cols)})
        else:
            occurrences = pd.DataFrame({"ticket": [], "team": [], "token": [], "effect": [], signals.ROLLOUT.name: [],
                                        **{f"attention b{b + 1}": [] for b in range(L)}, "is_top": []})
        token_sums, effect_hist = token_partial(occurrences, L)
    tickets = pd.concat([base, frame[["n", "predicted"]]], axis=1)
    tickets["confidence"] = confidence
    tickets["label"] = pd.array(label, dtype="string")
    tickets["correct"] = pd.array([None if lab is None else lab == p for lab, p in zip(label, frame["predicted"])],
                                  dtype="boolean")
    tickets["label_confidence"] = label_p                 # low: a label the router doubts (NaN: no label)
    rest = frame.drop(columns=["n", "predicted", "label"])
    tickets = pd.concat([tickets, rest, extra], axis=1)
    add_policy_columns(tickets, router.meta, teams, all_probs if rows else [])
    partial = ticket_partial(tickets, teams, taus, aopc)
    return PartitionResult(tickets, partial, token_sums, effect_hist, occurrences if keep_occurrences else None)


# -- files ----------------------------------------------------------------------------------------------------
def part_name(index: int) -> str:
    return f"part-{index:05d}"


def done_marker(out: Path, index: int) -> Path:
    """A partition is finished when this file exists: it is written last, after its other files are in place."""
    return out / "parts" / f"{part_name(index)}.json"


def _write_parquet(frame: pd.DataFrame, path: Path, level: str | None = None) -> None:
    """Write `frame` atomically; `level` goes into the file's metadata (`ticketnet.level`), so every output says
    which level made it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    table = pa.Table.from_pandas(frame, preserve_index=False)
    if level is not None:
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), b"ticketnet.level": level.encode()})
    try:
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _write_json(data: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(data, indent=1, allow_nan=False), encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def scan_partition(router, part: Partition, level: str, out: str | Path) -> dict:
    """Scan one partition and write its files under `out` (tickets/, parts/), each atomically, the done marker
    last: a partition killed half-way leaves no marker and is redone whole. Returns its tickets and seconds."""
    out = Path(out)
    t0 = time.perf_counter()
    result = scan_rows(router, read_partition(part), part.row0, level)
    name = part_name(part.index)
    _write_parquet(result.tickets, out / "tickets" / f"{name}.parquet", level)
    if result.token_sums is not None:
        _write_parquet(result.token_sums, out / "parts" / f"{name}.tokens.parquet")
        _write_parquet(result.effect_hist, out / "parts" / f"{name}.hist.parquet")
    seconds = time.perf_counter() - t0
    _write_json({"partition": part.index, "level": level, "tickets": len(result.tickets), "sums": result.partial},
                done_marker(out, part.index))
    return {"partition": part.index, "tickets": len(result.tickets), "seconds": seconds}
