"""One sign for all seven kinds of effect: a part that helps the target has positive support, on a hand-built model."""

import pytest
import torch

from tests.conftest import KEYWORD_ID, keyword_transformer
from ticketnet.interpret import (
    contrast_patching,
    counterfactual_probs,
    edge_knockout,
    effect_map,
    head_ablation,
    head_importance,
    phrase_deletions,
    phrase_shapley,
    removal_support,
)
from ticketnet.interpret.interventions.phrases import Phrase
from ticketnet.interpret.interventions.units import UNITS
from ticketnet.nn.transformer import pad_batch

TICKET = torch.tensor([3, 4, KEYWORD_ID, 5, 6])                        # the keyword at position 2
WHERE = 2
TEAM = 0                                                               # the team the keyword helps


@pytest.fixture(scope="module")
def model():
    return keyword_transformer()


def test_the_hand_built_model_routes_by_the_keyword(model):
    with torch.inference_mode():
        with_it, without = torch.softmax(model(*pad_batch([TICKET.tolist(), [3, 4, 5, 6]])), -1)[:, TEAM]
    assert 0.9 > float(with_it) > 0.5 and float(without) == pytest.approx(1 / 3, abs=1e-6)


@pytest.mark.parametrize("unit", UNITS)
def test_deleting_or_unk_replacing_the_helpful_token_gives_positive_support(model, unit):
    cf = counterfactual_probs(model, TICKET)
    others = [i for i in range(TICKET.numel()) if i != WHERE]
    for variants in (cf.removed, cf.replaced):                         # token deletion, <unk> replacement
        s = removal_support(cf.base, variants, TEAM, unit)
        assert s[WHERE] > 0.1 and s[WHERE] > 5 * s[others].abs().max()
        assert removal_support(cf.base, variants, 1, unit)[WHERE] < 0   # ... and it works against another team
    deleted, replaced = (removal_support(cf.base, v, TEAM, unit)[others] for v in (cf.removed, cf.replaced))
    assert (deleted < 0).all()                                         # another token dilutes the keyword's mean
    assert replaced.abs().max() < 1e-6                                 # ... and reads as <unk> already


@pytest.mark.parametrize("unit", UNITS)
def test_an_edge_into_the_helpful_token_has_positive_support(model, unit):
    ko = edge_knockout(model, TICKET, 0, 0, 0, TEAM)                  # block 1 head 1, query row 0
    others = [j for j in range(TICKET.numel()) if j != WHERE]
    assert ko.support[unit][WHERE] > 0                                 # cutting it leaves the row reading nothing
    assert (ko.support[unit][others] < 0).all()                        # cutting another edge moves weight onto it
    assert effect_map(model, TICKET, 0, 1, TEAM).support[unit].abs().max() < 1e-6   # a head that writes nothing


@pytest.mark.parametrize("unit", UNITS)
def test_switching_off_the_helpful_head_gives_positive_support(model, unit):
    df = head_ablation(model, TICKET, TEAM)
    helpful = df[(df["block"] == 1) & (df["head"] == 1)].iloc[0]
    assert helpful[f"support_{unit}"] > 0.1
    assert df[(df["block"] != 1) | (df["head"] != 1)][f"support_{unit}"].abs().max() < 1e-6
    ids, is_pad = pad_batch([TICKET.tolist(), [KEYWORD_ID, 3], [4, 5, 6]])
    imp = head_importance(model, ids, is_pad, torch.tensor([TEAM, TEAM, 1]), target=TEAM)
    first = imp[(imp["block"] == 1) & (imp["head"] == 1)].iloc[0]
    assert first[f"support_{unit}"] > 0.05
    assert imp[(imp["block"] != 1) | (imp["head"] != 1)][f"support_{unit}"].abs().max() < 1e-6


@pytest.mark.parametrize("unit", UNITS)
def test_deleting_the_helpful_phrase_and_its_shapley_value_agree_in_sign(model, unit):
    phrases = [Phrase(0, 2, "a"), Phrase(2, 4, "b"), Phrase(4, 5, "c")]   # the keyword in phrase 1
    d = phrase_deletions(model, TICKET, phrases, TEAM)
    singles = d[d.kind == "single"][f"support_{unit}"].to_numpy()
    shap = phrase_shapley(model, TICKET, phrases, TEAM, unit).values
    assert singles[1] > 0.1 and shap[1] > 0.1
    for k in (0, 2):                                # phrases without the keyword only dilute it: negative, smaller
        assert singles[k] < 0 and float(shap[k]) < 0 and singles[1] > 2 * abs(singles[k])
    assert float(shap.sum()) == pytest.approx(float(phrase_shapley(model, TICKET, phrases, TEAM, unit).full
                                                    - phrase_shapley(model, TICKET, phrases, TEAM, unit).empty))


@pytest.mark.parametrize("unit", UNITS)
def test_patching_the_helpful_activation_in_gives_positive_support(model, unit):
    edit = TICKET.clone()
    edit[WHERE] = 8                                                    # the keyword replaced: same length, aligned
    cp = contrast_patching(model, TICKET, edit, TEAM)
    heads = cp.heads.set_index(["direction", "block", "head"])
    into_edit, into_ticket = heads.loc[("a→b", 1, 1)], heads.loc[("b→a", 1, 1)]
    assert into_edit[f"support_{unit}"] > 0.05 > -0.05 > into_ticket[f"support_{unit}"]
    assert into_edit[f"share_{unit}"] > 0 and into_ticket[f"share_{unit}"] > 0   # both recover part of the gap
    resid = cp.resid[(cp.resid.direction == "a→b") & (cp.resid.layer == 0) & (cp.resid.position == WHERE)].iloc[0]
    assert resid[f"support_{unit}"] > 0.1                              # the keyword's own embedding put back
