"""The label-issues command: out-of-fold probabilities (cached in the router folder), cleanlab's ranking, the files."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from ticketnet._runtime.atomic import write_atomic
from ticketnet._runtime.hashing import file_sha256
from ticketnet.labels.issues import EVIDENCE_ROWS, csv_text, rank_issues, summary, with_evidence
from ticketnet.labels.oof import (DEFAULT_FOLDS, LabelsError, OutOfFold, cache_path, out_of_fold, read_cache,
                                  write_cache)

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


def compute_oof(router_folder: Path, split: str = "train", folds: int = DEFAULT_FOLDS, epochs: int | None = None,
                source: str = "router", workers: int | None = None, scheduler: str | None = None,
                recompute: bool = False, log: Callable[[str], None] = lambda _m: None) -> OutOfFold:
    """The out-of-fold result for these settings: read from the router folder's cache when it holds one for this
    version of the split, else computed and cached."""
    from ticketnet.data.tickets import load_split
    from ticketnet.router import Router

    router_folder = Path(router_folder)
    if not router_folder.is_dir():
        raise LabelsError(f"--router {router_folder}: not a folder")
    router = Router.load(router_folder / "router.pt")
    path = split_file(router_folder, split)
    name = path.stem
    cache = cache_path(router_folder, source, name, folds, epochs if source == "router" else None)
    if not recompute:
        found = read_cache(cache, path)
        if found is not None and tuple(found.teams) == tuple(router.teams):
            log(f"reusing the out-of-fold probabilities in {cache}")
            return found
    rows = load_split(path, router.teams)
    rule_sets = {}
    if source == "router":
        for other in RULE_SPLITS:
            other_path = split_file(router_folder, "valid").parent / f"{other}.csv"
            if other_path.resolve() != path.resolve() and other_path.is_file():
                rule_sets[other] = load_split(other_path, router.teams)
    oof = out_of_fold(rows, router.teams, source, folds, router.meta, epochs, rule_sets, scheduler, workers, log=log,
                      settings={"split": name, "split_sha256": file_sha256(path), "router": str(router_folder)})
    if source == "router":
        oof.settings["epochs_requested"] = epochs
    write_cache(oof, cache)
    log(f"cached in {cache}")
    return oof


def label_issues(router_folder: Path, out: Path, split: str = "train", folds: int = DEFAULT_FOLDS,
                 epochs: int | None = None, source: str = "router", workers: int | None = None,
                 scheduler: str | None = None, method: str = "self_confidence", evidence_rows: int = EVIDENCE_ROWS,
                 recompute: bool = False, log: Callable[[str], None] = lambda _m: None) -> dict:
    """Rank the split's suspect labels into `out` (CSV) and `out`.json (the summary), both atomically."""
    from ticketnet.data.tickets import load_split
    from ticketnet.router import Router

    t0 = time.perf_counter()
    out = Path(out)
    if out.suffix.lower() != ".csv":
        raise LabelsError(f"--out {out}: name a .csv file (the summary goes beside it as .json)")
    if evidence_rows < 0:
        raise LabelsError(f"--evidence-rows must be 0 or more, got {evidence_rows}")
    if not out.parent.is_dir():
        raise LabelsError(f"--out {out}: the folder {out.parent} does not exist")
    oof = compute_oof(router_folder, split, folds, epochs, source, workers, scheduler, recompute, log)
    router = Router.load(Path(router_folder) / "router.pt")
    rows = load_split(split_file(Path(router_folder), split), router.teams)
    ranked = rank_issues(oof, {r["ticket_id"]: r["text"] for r in rows}, method, wrong_labels(rows))
    t_rank = time.perf_counter()
    ranked = with_evidence(ranked, router, evidence_rows)
    log(f"token evidence for the top {min(evidence_rows, len(ranked)):,} tickets in "
        f"{time.perf_counter() - t_rank:.1f} s")
    result = summary(oof, ranked, method, evidence_rows)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    result["written"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    result["csv"] = out.name
    write_atomic(out, csv_text(ranked))
    write_atomic(out.with_suffix(".json"), (json.dumps(result, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))
    return result
