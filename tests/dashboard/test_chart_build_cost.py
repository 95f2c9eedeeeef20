"""Building a chart never sends a plain value through Altair's from_dict (it rebuilds its table of every schema class
each time: about 5 ms per shorthand string or alt.condition dict, most of a page's server time on a new ticket), nor
has Altair print a DataFrame to name the layers that share it."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import pytest
import torch

from dashboard import ui
from dashboard.charts import attention as charts
from dashboard.charts import interpretation as interp_charts
from dashboard.charts import quality
from dashboard.charts import theme
from dashboard.charts import interventions as ic
from tests.dashboard.test_charts import TEAMS, TOKENS, _patterns, _per_token, _split_table

N = len(TOKENS)


def _eraser() -> pd.DataFrame:
    return pd.DataFrame([{"signal": s, "fraction": f, "k": max(1, round(f * 20)), "comprehensiveness": f,
                          "sufficiency": 0.5 - f} for s in ("removal", "rollout", "random")
                         for f in (0.01, 0.05, 0.1, 0.2, 0.5)])


def _importance() -> pd.DataFrame:
    return pd.DataFrame({"block": [1, 1, 1, 1, 2, 2, 2, 2], "head": [1, 2, 3, 4] * 2,
                         "accuracy": np.linspace(0.8, 0.9, 8), "accuracy_drop": np.linspace(-0.02, 0.1, 8),
                         "support_prob": np.linspace(-0.1, 0.2, 8), "support_logit_diff": np.linspace(0.0, 0.9, 8)})


def _heads_patches() -> pd.DataFrame:
    rows = [{"direction": d, "block": b, "head": h, "share_logit_diff": (b * h) / 10 - 0.3,
             "support_logit_diff": 0.01 * h} for d in ("a→b", "b→a") for b in (1, 2) for h in (1, 2, 3, 4)]
    return pd.DataFrame(rows)


def _resid_patches() -> pd.DataFrame:
    rows = [{"direction": "a→b", "layer_name": layer, "position": p, "token": t, "aligned": p != 2,
             "source_token": t, "share_logit_diff": 0.1 * p, "support_logit_diff": 0.01 * p}
            for layer in ("embed", "block 1", "block 2") for p, t in enumerate(TOKENS[:5])]
    return pd.DataFrame(rows)


P = _patterns()
BUILDERS = {
    "probability bars": lambda: ui.probability_chart(np.linspace(0.1, 0.3, 5), TEAMS, "delivery"),
    "confusion matrix": lambda: quality.confusion_chart(np.arange(25).reshape(5, 5), TEAMS),
    "heads row": lambda: charts.heads_row(P[0], TOKENS, None, block=1, head_importance=_importance()),
    "query row frame": lambda: charts.query_row_frame(TOKENS, 3),
    "head heatmap": lambda: charts.head_heatmap(P[0, 1], TOKENS, 2, 3, block=1),
    "query bars": lambda: charts.query_bars(P[0], TOKENS, 3),
    "bands": lambda: charts.bands_chart(P[0], TOKENS),
    "model view": lambda: charts.model_view(P, TOKENS),
    "removal and signals": lambda: interp_charts.removal_chart(
        _per_token(), ["removal", "unk replacement", "removal TV"], ["rollout", "integrated gradients"],
        "support for payments (logit difference)"),
    "token highlight": lambda: interp_charts.token_highlight(TOKENS, np.linspace(-0.3, 0.2, N), title="x", diverging=True),
    "token highlight, one signal": lambda: interp_charts.token_highlight(TOKENS, np.linspace(0, 0.2, N), title="x"),
    "eraser curves": lambda: interp_charts.eraser_chart(_eraser(), None),
    "head importance": lambda: interp_charts.head_importance_chart(_importance(), "prob"),
    "tau boxes": lambda: interp_charts.tau_distribution(_split_table()),
    "mean eraser": lambda: interp_charts.mean_eraser_chart(
        pd.DataFrame({"signal": ["rollout", "random"], "comprehensiveness": [0.3, 0.1], "sufficiency": [0.1, 0.4]}),
        ["comprehensiveness", "sufficiency"]),
    "knockout row": lambda: ic.knockout_row_chart(
        ic.knockout_frame(np.linspace(0, 1, N), np.linspace(-0.1, 0.1, N), TOKENS)),
    "effect map": lambda: ic.effect_map_chart(torch.linspace(-0.1, 0.1, N * N).reshape(N, N), TOKENS),
    "ablation grid": lambda: ic.ablation_grid(_importance().assign(mode="zero"), "prob"),
    "patched heads": lambda: ic.patching_heads_grid(_heads_patches(), "a→b"),
    "patched residual stream": lambda: ic.patching_resid_heatmap(_resid_patches(), "a→b"),
    "phrases": lambda: ic.phrase_chart(ic.phrase_frame(["my card", "was charged twice"], [0.2, -0.1], [0.15, -0.05])),
}


@pytest.mark.parametrize("name", list(BUILDERS))
def test_building_a_chart_converts_nothing_through_altairs_from_dict(name, monkeypatch):
    made = []
    real = alt.utils.schemapi._FromDict.__init__

    def spy(self, *args, **kwargs):
        made.append(1)
        real(self, *args, **kwargs)

    printed = []
    real_repr = pd.DataFrame.__repr__

    def spy_repr(self):
        printed.append(1)
        return real_repr(self)

    monkeypatch.setattr(alt.utils.schemapi._FromDict, "__init__", spy)
    monkeypatch.setattr(pd.DataFrame, "__repr__", spy_repr)
    chart = BUILDERS[name]()
    assert isinstance(chart, alt.TopLevelMixin)
    assert made == [], f"{name}: {len(made)} values turned into channels by Altair's from_dict"
    # Layers sharing one DataFrame get it from their layer or concatenation: given to each, Altair names them by a
    # hash of their spec with the frame printed as text first (pandas' repr: tens of ms for a ticket's tokens).
    assert printed == [], f"{name}: a DataFrame printed {len(printed)} times while building"
    monkeypatch.setattr(alt.utils.schemapi._FromDict, "__init__", real)
    chart.to_dict()                                                    # and the chart is a valid spec


def test_a_typed_condition_writes_what_alt_condition_writes():
    pick = alt.selection_point(name="cell", fields=["true"])
    for test in ("datum.x > 0", pick):
        typed = alt.Chart(pd.DataFrame({"x": [1]})).mark_point().encode(
            color=theme.when(test, "#ffffff", "#000000", alt.ColorValue),
            opacity=theme.when(test, 1.0, 0.35, alt.OpacityValue)).add_params(pick).to_dict()
        plain = alt.Chart(pd.DataFrame({"x": [1]})).mark_point().encode(
            color=alt.condition(test, alt.value("#ffffff"), alt.value("#000000")),
            opacity=alt.condition(test, alt.value(1.0), alt.value(0.35))).add_params(pick).to_dict()
        assert typed == plain
