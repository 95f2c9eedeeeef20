"""A router's routed table of a split or labelled CSV: its stored predictions when they match, else routed now."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ticketnet.catalog import weights_in
from ticketnet.loading import load_any_card
from ticketnet.data.tickets import load_split
from ticketnet.paths import router_data
from ticketnet.predictions import FOLDER, MANIFEST, key_hashes, read_predictions, routed_table

if TYPE_CHECKING:
    import pandas as pd



def router_weights(router_dir: Path) -> Path:
    """`router_dir`'s weights file (router.pt, or an encoder router's encoder.safetensors); ValueError, one line, when
    the folder or its files are missing."""
    router_dir = Path(router_dir)
    if not router_dir.is_dir():
        raise ValueError(f"{router_dir}: not a folder (a router folder holds router.pt, vocab.json, router.json)")
    weights = weights_in(router_dir)
    load_any_card(weights)                                  # WeightsError (a ValueError) names the missing file
    return weights


def router_teams(router_dir: Path) -> tuple[str, ...]:
    """The teams of the router in `router_dir`, read from its router.json (no weights loaded)."""
    return load_any_card(router_weights(router_dir)).teams


def split_csv(router_dir: Path, split_or_csv: str) -> Path:
    """The CSV a split name means for this router (its own data folder, `ticketnet.paths.router_data`), or the
    path itself when it names a .csv file; ValueError naming the splits there when the name is unknown."""
    text = str(split_or_csv)
    if text.lower().endswith(".csv") or Path(text).is_file():
        path = Path(text)
        if not path.is_file():
            raise ValueError(f"{path}: no such CSV file")
        return path
    folder = router_data(Path(router_dir))
    path = folder / f"{text}.csv"
    if not path.is_file():
        known = sorted(p.stem for p in folder.glob("*.csv"))
        raise ValueError(f"unknown split {text!r} for {router_dir} (its data folder {folder} has "
                         f"{', '.join(known) or 'no split'}; or give a labelled .csv)")
    return path


def _stored(weights: Path, csv: Path) -> pd.DataFrame | None:
    """The router's stored predictions on exactly this CSV (the manifest keys a split by its file's name and bytes,
    so a copy of test.csv elsewhere is found too), under whichever split they were written for."""
    try:
        manifest = json.loads((weights.parent / FOLDER / MANIFEST).read_text(encoding="utf-8"))
        entries = manifest["splits"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    hashes = key_hashes(weights, csv)
    if manifest.get("weights_sha256") != hashes[0]:
        return None
    for split, entry in entries.items():
        if isinstance(entry, dict) and entry.get("data_sha256") == hashes[1]:
            table = read_predictions(weights, split, csv, hashes)
            if table is not None:
                return table
    return None


def routed_split(router_dir: Path, split_or_csv: str, teams: Sequence[str] | None = None) -> pd.DataFrame:
    """The routed table (`ticketnet.predictions.routed_table`'s columns, and `style` where the CSV has one) of the
    router in `router_dir` on a split name of its data or a labelled CSV: the stored `predictions/` table when its
    manifest matches these weights and this CSV, else every row routed now. Every ticket's team must be one of
    `teams` (default: the router's own; a comparison passes both routers' teams). ValueError, one line, for a
    missing router, an unknown split, a CSV without labels or with a team outside `teams`."""
    weights = router_weights(router_dir)
    csv = split_csv(router_dir, split_or_csv)
    card_teams = load_any_card(weights).teams
    rows = load_split(csv, tuple(teams) if teams is not None else card_teams)
    table = _stored(weights, csv)
    if table is None:
        from ticketnet.loading import load_router

        table = routed_table(load_router(weights), rows)
    if any("style" in r for r in rows) and "style" not in table.columns:
        style = {r["ticket_id"]: r.get("style", "") or "" for r in rows}
        table["style"] = table["ticket_id"].map(style).fillna("")
    return table


def comparison_csv(router_a: Path, router_b: Path, split_or_csv: str) -> Path:
    """The one CSV both routers are read on: a labelled .csv, or a split name of router A's data, else of B's."""
    try:
        return split_csv(router_a, split_or_csv)
    except ValueError as first:
        try:
            return split_csv(router_b, split_or_csv)
        except ValueError:
            raise first from None


def compare_routers(router_a: Path, router_b: Path, split_or_csv: str, resamples: int = 2000,
                    seed: int = 0) -> dict:
    """`compare_tables` of two router folders on one split or labelled CSV (each router's stored predictions when
    they match, else routed now), with `inputs` added: both folders, the split as given and the CSV read."""
    from ticketnet.compare.summary import compare_tables, shared_teams

    teams_a, teams_b = router_teams(router_a), router_teams(router_b)
    shared_teams(teams_a, teams_b)                          # refuse disjoint teams before routing anything
    csv = comparison_csv(router_a, router_b, split_or_csv)
    either = tuple(dict.fromkeys([*teams_a, *teams_b]))
    a = routed_split(router_a, str(csv), either)
    b = routed_split(router_b, str(csv), either)
    result = compare_tables(a, b, teams_a, teams_b, resamples=resamples, seed=seed)
    result["inputs"] = {"a": str(router_a), "b": str(router_b), "split": str(split_or_csv), "csv": str(csv),
                        "tickets": len(a)}
    return result
