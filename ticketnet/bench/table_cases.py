"""Benchmark cases on whole tables: streaming predict, the Routing policy redraw, the ticket map, two routed tables."""

from __future__ import annotations

import csv
import io
import resource
import time

from ticketnet._runtime.timing import side_by_side
from ticketnet.router import Router


def predict_throughput(router: Router, rows: list[dict], n_rows: int) -> dict:
    """Tickets/s of the streaming predict on n_rows tickets, and the process's peak memory growth."""
    from ticketnet.predict import predict_stream

    src = io.StringIO()
    w = csv.writer(src)
    w.writerow(["ticket_id", "text"])
    for i in range(n_rows):
        w.writerow([f"X-{i}", rows[i % len(rows)]["text"]])
    src.seek(0)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    stats = predict_stream(router, src, io.StringIO(), "<bench>")
    seconds = time.perf_counter() - t0
    grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    return {"tickets": stats["tickets"], "seconds": seconds, "tickets_per_second": stats["tickets"] / seconds,
            "peak_rss_growth_mb": grew / 1024}


POLICY_TARGET_S = 0.3           # a Routing policy slider move redraws in at most 300 ms server side


def policy_redraw(weights, data, repeats: int, resamples: int = 1000) -> dict:
    """The library part of a Routing policy slider move on the router's stored valid and test predictions: fit the
    team thresholds (precision 0.98) and the conformal rule (LAC and APS at alpha 0.05) on valid, then score them
    on test (bootstrap report, set report) with its risk–coverage curve and references. Median seconds per part
    and in all, against the 300 ms target."""
    from ticketnet.card import load_card
    from ticketnet.policy import (
        fit_conformal,
        fit_team_thresholds,
        reference_curves,
        risk_coverage,
        set_report,
        split_scores,
        threshold_report,
    )

    teams = load_card(weights).teams
    t0 = time.perf_counter()
    valid, test = split_scores(weights, "valid", data), split_scores(weights, "test", data)
    load_s = time.perf_counter() - t0

    def thresholds() -> dict:
        fit = fit_team_thresholds(valid.confidence, valid.predicted, valid.correct, teams, precision=0.98)
        return threshold_report(fit, test.confidence, test.predicted, test.correct, teams, resamples=resamples)

    def conformal(method: str) -> dict:
        rule = fit_conformal(valid.probs, valid.y, 0.05, method)
        return set_report(rule.sets(test.probs), test.y)

    def curves() -> tuple:
        return risk_coverage(test.confidence, test.correct), reference_curves(test.correct)

    parts = {"thresholds": thresholds, "conformal_lac": lambda: conformal("lac"),
             "conformal_aps": lambda: conformal("aps"), "curves": curves}
    each = list(parts.values())
    parts["all"] = lambda: [fn() for fn in each]
    seconds = side_by_side(parts, repeats=repeats)
    return {"valid": int(valid.y.size), "test": int(test.y.size), "source": valid.source, "resamples": resamples,
            "load_s": load_s, "seconds": seconds, "target_s": POLICY_TARGET_S,
            "ratio_to_target": seconds["all"] / POLICY_TARGET_S}


def ticket_map(router: Router, valid: list[dict], train: list[dict], sizes: tuple[int, ...],
               lookups: int = 20) -> dict:
    """The ticket map's compute time (pooled vectors, PCA, seeded UMAP) at each size (valid's first tickets, or a
    seeded sample of train for more), UMAP's first call in the process (numba compiling) apart, and the exact
    neighbour lookup of single tickets over every training ticket."""
    import os
    import statistics

    import numpy as np

    from ticketnet.ticketmap import nearest, pooled_of_texts, project, seeded_sample

    workers = os.cpu_count() or 1
    warm = np.random.default_rng(0).normal(size=(200, router.model.config.d)).astype(np.float32)
    project(warm, "PCA")                                    # scikit-learn imported before the clock starts
    t0 = time.perf_counter()
    project(warm, "UMAP")
    out: dict = {"umap_first_call_200_s": time.perf_counter() - t0, "workers": workers}
    for n in sizes:
        rows = valid[:n] if n <= len(valid) else [train[i] for i in seeded_sample(len(train), n)]
        t0 = time.perf_counter()
        vectors, _ = pooled_of_texts(router, [r["text"] for r in rows], workers=workers)
        t1 = time.perf_counter()
        project(vectors, "PCA")
        t2 = time.perf_counter()
        project(vectors, "UMAP")
        t3 = time.perf_counter()
        out[str(len(rows))] = {"pooled_s": t1 - t0, "pca_s": t2 - t1, "umap_s": t3 - t2, "total_s": t3 - t0}
    t0 = time.perf_counter()
    train_vectors, _ = pooled_of_texts(router, [r["text"] for r in train], workers=workers)
    pooled_train = time.perf_counter() - t0
    queries, _ = pooled_of_texts(router, [r["text"] for r in valid[:lookups]])
    times = []
    for q in queries:
        t0 = time.perf_counter()
        nearest(train_vectors, q)
        times.append(time.perf_counter() - t0)
    out["neighbours"] = {"train_tickets": len(train), "pooled_train_s": pooled_train,
                         "lookup_ms_median": 1e3 * statistics.median(times), "lookup_ms_max": 1e3 * max(times),
                         "lookups": len(times)}
    return out


COMPARE_TARGET_S = 2.0                          # the Compare page's summary of two 1,500-ticket tables


def shifted_table(table, teams, share: float = 0.1, seed: int = 0):
    """`table` with a seeded `share` of its tickets' predictions moved to another team (that team's and the old
    one's probabilities swapped, so the prediction stays the most probable): a stand-in second router for timing."""
    import numpy as np

    rng = np.random.default_rng(seed)
    out = table.copy()
    teams = list(teams)
    picked = rng.choice(len(out), size=round(share * len(out)), replace=False)
    for i in picked:
        old = out.at[i, "predicted"]
        new = teams[(teams.index(old) + 1 + int(rng.integers(len(teams) - 1))) % len(teams)]
        out.at[i, f"p_{old}"], out.at[i, f"p_{new}"] = out.at[i, f"p_{new}"], out.at[i, f"p_{old}"]
        out.at[i, "predicted"] = new
    out["correct"] = out["team"].eq(out["predicted"])
    return out, len(picked)


def compare_summary(repeats: int, split: str = "test", resamples: int = 2000) -> dict:
    """The whole comparison of two routed tables of `split` as the Compare page computes it (stored predictions
    read, compare_tables with `resamples` resamples, flip_table). The second table is the shipped router's own with
    a seeded 10 % of its predictions moved to another team (not a second router: flips and intervals are real
    computations on it, its figures are not a retrain's)."""
    import statistics

    from ticketnet.compare import compare_tables, flip_table, routed_split, router_teams
    from ticketnet.paths import router_dir

    folder = router_dir()
    teams = router_teams(folder)
    shifted, changed = shifted_table(routed_split(folder, split), teams)
    times, cpu, result, first = [], [], None, None
    for _ in range(max(1, repeats) + 1):
        t0, c0 = time.perf_counter(), time.process_time()
        a = routed_split(folder, split)
        result = compare_tables(a, shifted, teams, teams, resamples=resamples)
        flips = flip_table(a, shifted)
        if first is None:                   # the first call imports scikit-learn and statsmodels: once per server
            first = time.perf_counter() - t0
        else:
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)    # on a shared machine the wall time also counts others' work
    return {"tickets": result["n"], "resamples": resamples, "changed_predictions": changed, "flips": len(flips),
            "first_s": first,
            "seconds": statistics.median(times), "seconds_max": max(times), "repeats": len(times),
            "cpu_seconds": statistics.median(cpu),
            "target_s": COMPARE_TARGET_S, "ratio_to_target": statistics.median(times) / COMPARE_TARGET_S,
            "second_table": "the shipped router's table with a seeded 10 % of predictions moved to another team"}
