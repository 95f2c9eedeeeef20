"""Chart builders of the route interventions: specs carry the data, units and sort orders the pages rely on."""

import numpy as np
import pandas as pd
import pytest

from dashboard.charts import interventions as ic

TOKENS = ["it", "'", "s", "not"]


def test_knockout_row_chart_pairs_weight_and_effect_on_one_axis():
    frame = ic.knockout_frame([0.1, 0.2, 0.3, 0.4], [0.0, -0.5, 1e-5, 0.2], TOKENS)
    spec = ic.knockout_row_chart(frame).to_dict()
    assert len(spec["hconcat"]) == 2
    assert spec["hconcat"][0]["encoding"]["y"]["sort"] == ["0:it", "1:'", "2:s", "3:not"]
    assert spec["hconcat"][1]["encoding"]["x"]["title"] == "support for the target (logit difference)"
    spec = ic.knockout_row_chart(frame, "prob", team="Billing").to_dict()
    assert spec["hconcat"][1]["encoding"]["x"]["title"] == "support for Billing (probability)"
    with pytest.raises(ValueError):
        ic.knockout_frame([0.1], [0.0, 0.1], TOKENS)


def test_effect_map_has_the_heatmap_axes_and_a_centred_scale():
    change = np.arange(16.0).reshape(4, 4) - 8
    spec = ic.effect_map_chart(change, TOKENS, unit="prob").to_dict()
    assert spec["encoding"]["x"]["sort"] == spec["encoding"]["y"]["sort"] == ["0:it", "1:'", "2:s", "3:not"]
    assert spec["encoding"]["color"]["scale"]["domain"] == [-8.0, 8.0]
    assert spec["encoding"]["color"]["title"] == "support for the target (probability)"
    with pytest.raises(ValueError, match="unit"):
        ic.effect_map_chart(change, TOKENS, unit="odds")


def test_grids_and_phrase_chart():
    ab = pd.DataFrame({"block": [1, 1, 2, 2], "head": [1, 2, 1, 2], "mode": "zero",
                       "support_logit_diff": [0.1, -0.2, 0, 0.3], "support_prob": [0.01, -0.02, 0, 0.03]})
    assert ic.ablation_grid(ab).to_dict()["layer"][0]["mark"]["type"] == "rect"
    heads = ab.assign(direction="a→b", share_logit_diff=[0.1, 0.9, 0.0, -0.1], share_prob=0.0)
    assert "a→b" in ic.patching_heads_grid(heads, "a→b").to_dict()["title"]["text"]
    with pytest.raises(ValueError, match="direction"):
        ic.patching_heads_grid(heads, "b→a")
    resid = pd.DataFrame({"direction": "b→a", "layer": 0, "layer_name": "block 1 input", "position": [0, 1],
                          "token": ["it", "not"], "source": [0, None], "source_token": ["it", None],
                          "aligned": [True, False], "share_logit_diff": [0.5, np.nan], "share_prob": [0.4, np.nan]})
    spec = ic.patching_resid_heatmap(resid, "b→a").to_dict()
    assert spec["encoding"]["color"]["value"] == "#dddddd"             # unaligned cells are grey
    frame = ic.phrase_frame(["It's not a delivery problem", "and I keep it."], [0.2, -0.1], [0.5, 0.1])
    assert ic.phrase_chart(frame).to_dict()["mark"]["type"] == "bar"


def test_every_support_chart_says_support_for_the_team_in_its_unit():
    ab = pd.DataFrame({"block": [1, 2], "head": [1, 1], "mode": "zero", "support_logit_diff": [0.1, -0.2],
                       "support_prob": [0.01, -0.02]})
    grid = ic.ablation_grid(ab, "prob", team="Billing").to_dict()
    assert grid["layer"][0]["encoding"]["color"]["title"] == "support for Billing (probability)"
    assert grid["layer"][0]["encoding"]["color"]["field"] == "support_prob"
    frame = ic.phrase_frame(["a", "b"], [0.2, -0.1], [0.5, 0.1])
    spec = ic.phrase_chart(frame, "logit_diff", team="Billing").to_dict()
    assert spec["encoding"]["x"]["title"] == "support for Billing (logit difference)"
    measures = {row["measure"] for row in spec["datasets"][spec["data"]["name"]]}
    assert measures == {"deleted alone", "Shapley value"}
    em = ic.effect_map_chart(np.eye(4), TOKENS, "logit_diff", team="Billing").to_dict()
    assert em["encoding"]["color"]["title"] == "support for Billing (logit difference)"
    heads = ab.assign(direction="a→b", share_logit_diff=[0.5, 1.0], share_prob=0.0)
    cells = ic.patching_heads_grid(heads, "a→b").to_dict()["layer"][0]["encoding"]["color"]
    assert cells["title"] == "share recovered (logit difference)"
    with pytest.raises(ValueError, match="unit"):
        ic.ablation_grid(ab, "odds")
