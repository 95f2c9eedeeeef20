"""Figures from the analysts' timings: nearest-rank percentiles, their summaries, the p95 target met or not."""

from __future__ import annotations

TARGET_P95_S = 1.0


def pct(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (None without values)."""
    if not values:
        return None
    xs = sorted(values)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def summary(values: list[float]) -> dict:
    return {"n": len(values), "p50": pct(values, 0.5), "p95": pct(values, 0.95),
            "max": max(values) if values else None}


def during(outcomes, window: tuple[float, float] | None) -> dict:
    """The analysts' p95 per page for actions that began inside `window` and for the others."""
    if not window:
        return {}
    inside = [o for o in outcomes if window[0] <= o.started <= window[1]]
    outside = [o for o in outcomes if not window[0] <= o.started <= window[1]]
    pages = dict.fromkeys(o.page for o in outcomes)
    return {side: {"all": summary([o.seconds for o in group]),
                   **{p: summary([o.seconds for o in group if o.page == p]) for p in pages}}
            for side, group in (("during_split_run", inside), ("outside_split_run", outside))}


def meets_target(step: dict, target: float) -> bool:
    """No error, and p95 ≤ `target` on every page the analysts used (each page timed at least once)."""
    pages = step["by_page"].values()
    return step["errors"] == 0 and all(p["n"] and p["p95"] <= target for p in pages)
