"""Warm reruns timed server side (AppTest): Heads and Interpretation, the Routing policy sliders, the Ticket map."""

from __future__ import annotations

import statistics
import time

from ticketnet.bench.browser import APP

TICKET = "T-65052"


def warm_interaction(repeats: int = 10) -> dict:
    """Server-side script time of a rerun on the Heads page after changing the query row, then the block; then on
    the Interpretation page after changing the target team (`_warm_target`).

    AppTest runs the real page script in process, as the server does on each interaction; the ticket's
    forward pass is cached by then, so this is the rerun cost a user waits for (network excluded).
    """
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params["ticket"] = TICKET
    at.run()
    at.switch_page("../pages/heads.py").run()
    if at.exception:
        raise RuntimeError(f"the Heads page failed: {at.exception[0].value}")
    query = next(s for s in at.selectbox if s.label.startswith("Query row"))
    n = len(query.options)
    t0 = time.perf_counter()                      # the first visit to block 2 draws its heads (cached after)
    at.segmented_control(key="block").set_value(2).run()
    block_first = time.perf_counter() - t0
    at.segmented_control(key="block").set_value(1).run()
    rows, blocks = [], []
    for i in range(repeats):
        t0 = time.perf_counter()
        next(s for s in at.selectbox if s.label.startswith("Query row")).set_value((i * 7 + 3) % n).run()
        rows.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        at.segmented_control(key="block").set_value(1 + i % 2).run()
        blocks.append(time.perf_counter() - t0)
    if at.exception:
        raise RuntimeError(f"the Heads page failed: {at.exception[0].value}")
    result = {"query_row_ms_median": 1e3 * statistics.median(rows), "query_row_ms_max": 1e3 * max(rows),
              "block_ms_median": 1e3 * statistics.median(blocks), "block_ms_max": 1e3 * max(blocks),
              "block_first_ms": 1e3 * block_first,
              "repeats": repeats, "tokens": n}
    result.update(_warm_target(at, repeats))
    return result


def _warm_target(at, repeats: int) -> dict:
    """Interpretation page: the rerun after changing the target team. The first choice of each team computes its
    interpretation (removal effects, gradients, ERASER: model calls, reported apart); later visits are cached."""
    at.switch_page("../pages/interpretation.py").run()
    if at.exception:
        raise RuntimeError(f"the Interpretation page failed: {at.exception[0].value}")

    def target():
        return next(s for s in at.selectbox if s.label.startswith("Target team"))

    n = len(target().options)
    predicted = target().value
    first = []
    for t in range(n):                            # every team once: the predicted one was computed on page load
        if t == predicted:
            continue
        t0 = time.perf_counter()
        target().set_value(t).run()
        first.append(time.perf_counter() - t0)
    again = []
    for i in range(repeats):
        t = (predicted + 1 + i) % n
        t0 = time.perf_counter()
        target().set_value(t).run()
        again.append(time.perf_counter() - t0)
    if at.exception:
        raise RuntimeError(f"the Interpretation page failed: {at.exception[0].value}")
    return {"target_ms_median": 1e3 * statistics.median(again), "target_ms_max": 1e3 * max(again),
            "target_first_ms_median": 1e3 * statistics.median(first), "target_first_ms_max": 1e3 * max(first),
            "teams": n}


POLICY_PAGE = "../pages/policy.py"
POLICY_TARGET_MS = 300.0


def policy_sliders(repeats: int = 10) -> dict:
    """Server-side script time of the Routing policy page's rerun after a slider move (the page's target: ≤ 300 ms): the
    target precision moved to a value this process has not computed (thresholds fitted on valid, bootstrap reports
    on test and the hand-written set, the queue), α likewise (sets calibrated and measured), and the method toggled.

    The page is opened once first (imports, the stored tables, MAPIE); each precision value's axis range has its
    chart template built the first time it is seen, so the precision moves stay inside one range after a warm-up
    move at each end, as a user dragging the slider mostly does. Medians and maxima in milliseconds."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=300)
    at.run()
    t0 = time.perf_counter()
    at.switch_page(POLICY_PAGE).run()
    first_open = time.perf_counter() - t0
    if at.exception:
        raise RuntimeError(f"the Routing policy page failed: {at.exception[0].value}")

    def move(key: str, value) -> float:
        start = time.perf_counter()
        widget = at.segmented_control(key=key) if key == "policy_method" else at.slider(key=key)
        widget.set_value(value).run()
        if at.exception:
            raise RuntimeError(f"the Routing policy page failed: {at.exception[0].value}")
        return time.perf_counter() - start

    warm = [move("policy_precision", v) for v in (0.97, 0.99)]    # the template of each end's axis range
    targets = [round(0.971 + 0.001 * (i % 18), 3) for i in range(repeats)]
    precision = [move("policy_precision", v) for v in targets]
    # Moves whose thresholds differ from every earlier move's: the ones that ran the bootstrap again (the reports are
    # cached by the thresholds, and neighbouring targets often give every team the same one).
    from ticketnet import paths, predictions
    from ticketnet.policy import fit_team_thresholds

    weights = paths.weights_path()
    valid = predictions.read_predictions(weights, "valid", paths.router_data(weights.parent) / "valid.csv")
    teams = sorted(set(valid["team"]) | set(valid["predicted"]))
    seen = {tuple(sorted(fit_team_thresholds(valid["confidence"].to_numpy(), valid["predicted"].to_numpy(),
                                             valid["correct"].to_numpy(), teams, precision=v).thresholds.items()))
            for v in targets} if valid is not None else set()
    alphas = [move("policy_alpha", round(0.06 + 0.01 * (i % 20), 2)) for i in range(repeats)]
    methods = [move("policy_method", ("aps", "lac")[i % 2]) for i in range(repeats)]
    out = {"first_open_ms": 1e3 * first_open, "template_ms_max": 1e3 * max(warm), "repeats": repeats,
           "target_ms": POLICY_TARGET_MS, "precision_distinct_thresholds": len(seen)}
    for name, times in (("precision", precision), ("alpha", alphas), ("method", methods)):
        out[f"{name}_ms_median"] = 1e3 * statistics.median(times)
        out[f"{name}_ms_max"] = 1e3 * max(times)
    return out


MAP_REDRAW_TARGET_S = 1.0          # the Ticket map page at 20,000 points, its target, server side


def map_redraw(repeats: int = 5, split: str = "train") -> dict:
    """Server-side script time of the Ticket map page redrawing its map (every point) after a change of colouring,
    and after a box selection that lists tickets, once the split's map is computed (the first open is reported
    apart: it computes or reads the map). AppTest runs the page script in process, as the server does."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=900)
    at.run()
    t0 = time.perf_counter()
    at.switch_page("../pages/map.py").run()
    at.segmented_control(key="map_split").set_value(split).run()
    first = time.perf_counter() - t0
    if at.exception:
        raise RuntimeError(f"the Ticket map page failed: {at.exception[0].value}")
    import pyarrow as pa

    spec = at.get("vega_lite_chart")[0].proto
    points = sum(pa.ipc.open_stream(d.data.data).read_all().num_rows for d in spec.datasets) or None
    colours = list(at.selectbox(key="map_colour").options)
    redraws, boxes = [], []
    for i in range(repeats):
        t0 = time.perf_counter()
        at.selectbox(key="map_colour").select(colours[(i + 1) % len(colours)]).run()
        redraws.append(time.perf_counter() - t0)
    for i in range(repeats):
        at.session_state[f"map_{split}_PCA"] = {"selection": {"box": {"x": [-1.0 - i * 0.1, 1.0],
                                                                      "y": [-1.0, 1.0]}, "click": []}}
        t0 = time.perf_counter()
        at.run()
        boxes.append(time.perf_counter() - t0)
    if at.exception:
        raise RuntimeError(f"the Ticket map page failed: {at.exception[0].value}")
    median = statistics.median(redraws)
    return {"split": split, "points": points, "first_open_s": first, "redraw_s_median": median,
            "redraw_s_max": max(redraws), "box_s_median": statistics.median(boxes), "box_s_max": max(boxes),
            "picked_rows": len(next((d.value for d in at.dataframe if "heads" in d.value.columns), [])),
            "repeats": repeats, "ratio_to_target": median / MAP_REDRAW_TARGET_S}
