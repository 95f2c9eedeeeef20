"""The label-issues command: out-of-fold probabilities (cached in the router folder), cleanlab's ranking, the files."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from ticketnet._runtime.atomic import write_atomic
from ticketnet._runtime.hashing import file_sha256
from ticketnet.labels.issues import EVIDENCE_ROWS, csv_text, rank_issues, summary, with_evidence
from ticketnet.labels.oof import (DEFAULT_FOLDS, ENCODER, LabelsError, OutOfFold, cache_path,
                                  encoder_recipe, encoder_refusal, out_of_fold, read_cache, write_cache)

RULE_SPLITS = ("valid", "handwritten_dev")      # the router recipe's epoch rule and calibration read these
NOISY = "noisy"                                 # the generator's `pattern` of a deliberately wrong label


def split_file(router_folder: Path, split: str) -> Path:
    """The CSV of `split` in the router's data (a name such as train or valid, or a path to a .csv)."""
    from ticketnet.paths import router_data

    path = Path(split) if split.endswith(".csv") else router_data(router_folder) / f"{split}.csv"
    if not path.is_file():
        raise LabelsError(f"--split {split}: no such split ({path} does not exist)")
    return path


def wrong_labels(rows: list[dict]) -> dict[str, bool] | None:
    """ticket id → deliberately wrong label, where the split says so (a generated split's `pattern` column)."""
    if not rows or "pattern" not in rows[0]:
        return None
    return {r["ticket_id"]: r.get("pattern") == NOISY for r in rows}


def router_card(router_folder: Path) -> tuple[tuple[str, ...], dict, str | None]:
    """The router's teams, router.json and kind ("encoder" for a fine-tuned encoder router or a team's classifier,
    None for the Tiny router), read without its weights; LabelsError for a folder that holds no router."""
    from ticketnet.catalog import is_encoder, weights_in
    from ticketnet.loading import load_any_card

    router_folder = Path(router_folder)
    if not router_folder.is_dir():
        raise LabelsError(f"--router {router_folder}: not a folder")
    weights = weights_in(router_folder)
    card = load_any_card(weights)
    return tuple(card.teams), dict(card.meta), ENCODER if is_encoder(weights) else None


def baseline_command(router_folder: Path, split: str = "train", folds: int = DEFAULT_FOLDS) -> str:
    """The command that computes the baseline's out-of-fold probabilities of this split instead."""
    return (f"python -m ticketnet label-issues --router {router_folder} --split {split} --folds {folds} "
            f"--source baseline --out label-issues-baseline.csv")


def size_refusal(router_folder: Path, split: str = "train", folds: int = DEFAULT_FOLDS,
                 epochs: int | None = None, tickets: int | None = None, instead: str | None = None) -> str | None:
    """For an encoder router, why `--source router` is not run on this split (over ENCODER_OOF_MAX tickets: the
    estimate and the baseline's command), as one line; None for the Tiny router or a split within the limit.
    `tickets`: the split's size where the caller has counted it; `instead`: the baseline's command as the caller
    writes it (default `baseline_command`'s)."""
    from ticketnet.data.tickets import load_split

    teams, meta, kind = router_card(router_folder)
    if kind != ENCODER:
        return None
    if tickets is None:
        tickets = len(load_split(split_file(Path(router_folder), split), teams))
    recipe = encoder_recipe(meta, epochs)
    return encoder_refusal(meta, tickets, folds, recipe["epochs"],
                           instead or baseline_command(router_folder, split, folds))


def compute_oof(router_folder: Path, split: str = "train", folds: int = DEFAULT_FOLDS, epochs: int | None = None,
                source: str = "router", workers: int | None = None, scheduler: str | None = None,
                recompute: bool = False, log: Callable[[str], None] = lambda _m: None,
                ignore_size_limit: bool = False) -> OutOfFold:
    """The out-of-fold result for these settings: read from the router folder's cache when it holds one for this
    version of the split, else computed and cached. An encoder router's `--source router` fine-tunes its base per
    fold, on splits of up to ENCODER_OOF_MAX tickets unless `ignore_size_limit`."""
    from ticketnet.data.tickets import load_split

    router_folder = Path(router_folder)
    teams, meta, kind = router_card(router_folder)
    path = split_file(router_folder, split)
    name = path.stem
    cache_epochs = None
    if source == "router":
        # An encoder router's result is named by the epochs its folds ran (the card's where none are asked for), as
        # the page reads a result's epochs from its name.
        cache_epochs = encoder_recipe(meta, epochs)["epochs"] if kind == ENCODER else epochs
    cache = cache_path(router_folder, source, name, folds, cache_epochs)
    if not recompute:
        found = read_cache(cache, path)
        if found is not None and tuple(found.teams) == teams:
            log(f"reusing the out-of-fold probabilities in {cache}")
            return found
    rows = load_split(path, teams)
    rule_sets = {}
    if source == "router":
        for other in RULE_SPLITS:
            other_path = split_file(router_folder, "valid").parent / f"{other}.csv"
            if other_path.resolve() != path.resolve() and other_path.is_file():
                rule_sets[other] = load_split(other_path, teams)
    oof = out_of_fold(rows, teams, source, folds, meta, epochs, rule_sets, scheduler, workers, log=log,
                      settings={"split": name, "split_sha256": file_sha256(path), "router": str(router_folder)},
                      kind=kind, size_limit=not ignore_size_limit,
                      instead=baseline_command(router_folder, split, folds))
    if source == "router":
        oof.settings["epochs_requested"] = epochs
    write_cache(oof, cache)
    log(f"cached in {cache}")
    return oof


def label_issues(router_folder: Path, out: Path, split: str = "train", folds: int = DEFAULT_FOLDS,
                 epochs: int | None = None, source: str = "router", workers: int | None = None,
                 scheduler: str | None = None, method: str = "self_confidence", evidence_rows: int = EVIDENCE_ROWS,
                 recompute: bool = False, log: Callable[[str], None] = lambda _m: None,
                 ignore_size_limit: bool = False) -> dict:
    """Rank the split's suspect labels into `out` (CSV) and `out`.json (the summary), both atomically. The token
    evidence is the Tiny router's deletion effects; an encoder router's tickets get none (its deletion effects are
    on the Interpretation page)."""
    from ticketnet.data.tickets import load_split

    t0 = time.perf_counter()
    out = Path(out)
    if out.suffix.lower() != ".csv":
        raise LabelsError(f"--out {out}: name a .csv file (the summary goes beside it as .json)")
    if evidence_rows < 0:
        raise LabelsError(f"--evidence-rows must be 0 or more, got {evidence_rows}")
    if not out.parent.is_dir():
        raise LabelsError(f"--out {out}: the folder {out.parent} does not exist")
    oof = compute_oof(router_folder, split, folds, epochs, source, workers, scheduler, recompute, log,
                      ignore_size_limit)
    teams, _, kind = router_card(router_folder)
    rows = load_split(split_file(Path(router_folder), split), teams)
    ranked = rank_issues(oof, {r["ticket_id"]: r["text"] for r in rows}, method, wrong_labels(rows))
    if kind == ENCODER:
        evidence_rows = 0
        log("no token evidence: it is the Tiny router's deletion effects (an encoder router's are on the "
            "Interpretation page)")
    else:
        from ticketnet.router import Router

        t_rank = time.perf_counter()
        ranked = with_evidence(ranked, Router.load(Path(router_folder) / "router.pt"), evidence_rows)
        log(f"token evidence for the top {min(evidence_rows, len(ranked)):,} tickets in "
            f"{time.perf_counter() - t_rank:.1f} s")
    result = summary(oof, ranked, method, evidence_rows)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    result["written"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    result["csv"] = out.name
    write_atomic(out, csv_text(ranked))
    write_atomic(out.with_suffix(".json"), (json.dumps(result, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))
    return result
