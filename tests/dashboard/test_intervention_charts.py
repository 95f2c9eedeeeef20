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
    # Issue 23 item 9: the unaligned cells, "drawn grey", were blank (a rect whose colour field is NaN is dropped):
    # they get a layer of their own, a fixed grey and no share field to be dropped for.
    aligned, unaligned = spec["layer"]
    assert [r["position"] for r in spec["datasets"][aligned["data"]["name"]]] == [0]
    rows = spec["datasets"][unaligned["data"]["name"]]
    assert [r["position"] for r in rows] == [1] and "share_logit_diff" not in rows[0]
    assert unaligned["mark"] == {"type": "rect", "color": ic.UNALIGNED_COLOR} and "color" not in unaligned["encoding"]
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
    # Issue 23 item 6: both measures say they are the one convention, with the phrase − without it.
    assert measures == {"deleted alone: with − without", "Shapley value: mean with − without"}
    em = ic.effect_map_chart(np.eye(4), TOKENS, "logit_diff", team="Billing").to_dict()
    assert em["encoding"]["color"]["title"] == "support for Billing (logit difference)"
    heads = ab.assign(direction="a→b", share_logit_diff=[0.5, 1.0], share_prob=0.0)
    cells = ic.patching_heads_grid(heads, "a→b").to_dict()["layer"][0]["encoding"]["color"]
    assert cells["title"] == "share recovered (logit difference)"
    with pytest.raises(ValueError, match="unit"):
        ic.ablation_grid(ab, "odds")


# -- issue 23 ----------------------------------------------------------------------------------------------------------
def _scale(spec: dict) -> dict:
    return spec["encoding"]["color"]["scale"]


def test_negligible_edge_effects_are_drawn_near_white_red_where_the_edge_helps():
    # Issue 23 items 6 and 8: a row of 1e-4 logit effects filled the diverging scale (saturated blue for the largest),
    # and a helping edge was drawn blue beside text that says positive is red.
    from ticketnet.interpret.signals import NEGLIGIBLE_EFFECT

    floor = NEGLIGIBLE_EFFECT["logit_diff"]
    frame = ic.knockout_frame([0.1, 0.2, 0.3, 0.4], [1e-4, -3e-5, 2e-5, 0.0], TOKENS)
    bars = ic.knockout_row_chart(frame).to_dict()["hconcat"][1]
    assert _scale(bars)["domain"] == [-floor, floor] and _scale(bars)["reverse"] is True
    assert bars["encoding"]["x"]["scale"]["domain"] == [-floor, floor]      # short bars, not stretched to the edge
    em = ic.effect_map_chart(np.full((4, 4), 1e-4), TOKENS, "logit_diff").to_dict()
    assert _scale(em)["domain"] == [-floor, floor] and _scale(em)["reverse"] is True
    ab = pd.DataFrame({"block": [1, 2], "head": [1, 1], "mode": "zero", "support_logit_diff": [0.3, -0.2],
                       "support_prob": [0.01, -0.02]})
    cells = ic.ablation_grid(ab).to_dict()["layer"][0]
    assert cells["encoding"]["color"]["scale"]["domain"] == [-0.3, 0.3]
    assert cells["encoding"]["color"]["scale"]["reverse"] is True


def test_legends_of_small_effects_show_their_digits():
    # Issue 23 item 5: legends read 0.00 / 0.00 / 0.00 over effects near 0.002.
    em = ic.effect_map_chart(np.linspace(-0.3, 0.3, 16).reshape(4, 4), TOKENS, "prob").to_dict()
    assert em["encoding"]["color"]["legend"]["format"] == ".2~f"
    tip = next(t for t in em["encoding"]["tooltip"] if t["field"] == "support")
    assert tip["format"] == ".3f"
    frame = ic.phrase_frame(["a", "b"], [0.002, -0.001], [0.0015, 0.0])
    assert ic.phrase_chart(frame, "prob").to_dict()["encoding"]["x"]["axis"]["format"] == ".4~f"


def test_patching_grids_flag_shares_of_a_negligible_change():
    # Issue 23 item 9: "share recovered 0.73" of a −0.085 change, no team flipped, shown without a warning.
    from dashboard.data import interventions as di
    from dashboard.narrative import interventions as words

    heads = pd.DataFrame({"block": [1, 2], "head": [1, 1], "direction": "a→b", "share_logit_diff": [0.73, 0.1],
                          "share_prob": [0.5, 0.0], "support_logit_diff": [0.06, 0.0], "support_prob": [0.0, 0.0]})
    flagged = ic.patching_heads_grid(heads, "a→b", unreliable=True).to_dict()["title"]
    assert flagged["subtitle"] == ic.UNRELIABLE_NOTE
    assert "subtitle" not in ic.patching_heads_grid(heads, "a→b").to_dict()["title"]
    assert di.negligible_change(-0.085, "logit_diff") and not di.negligible_change(-0.5, "logit_diff")
    assert di.negligible_change(float("nan"), "prob")
    note = words.share_note(-0.085, "logit_diff", "payments", flips=False)
    assert note and "only -0.085" in note and "no team flips" in note and "unreliable" in note
    assert words.share_note(-1.2, "logit_diff", "payments", flips=True) is None
    with pytest.raises(ValueError, match="unit"):
        di.negligible_change(0.1, "odds")


def _knockout(support):
    import torch

    from ticketnet.interpret import Knockout

    s = torch.tensor(support, dtype=torch.float64)
    return Knockout(block=0, head=0, weights=torch.tensor([0.4, 0.3, 0.2, 0.1], dtype=torch.float64),
                    support={"logit_diff": s, "prob": s / 4}, base={"logit_diff": 2.0, "prob": 0.9}, query=0)


def test_edge_tables_list_no_negligible_high_support_edge_and_say_so():
    # Issue 23 item 8: the "low weight, high support" table listed edges whose support was 0 (1e-6).
    from dashboard.data import interventions as di
    from dashboard.narrative import interventions as words

    quiet = _knockout([1e-4, -2e-6, 3e-6, 4e-6])
    rows = words.edge_rows(quiet, TOKENS, "logit_diff", "payments")
    assert "low weight, high support" not in set(rows["edge"])
    note = words.edge_note(quiet, "logit_diff", "payments")
    assert note.startswith("No edge of this row has a support for payments (logit difference) above 0.10")
    loud = _knockout([0.0, 0.0, 0.01, 0.5])
    rows = words.edge_rows(loud, TOKENS, "logit_diff", "payments")
    assert list(rows.loc[rows["edge"] == "low weight, high support", "token"]) == ["not"]
    assert words.edge_note(loud, "logit_diff") is None
