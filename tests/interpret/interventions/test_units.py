"""Units: the logit difference is the target's log-odds, support comes in both units with one sign and one title, small
values keep their digits."""

import math

import pytest
import torch

from ticketnet.interpret.interventions.units import (
    format_effect, logit_difference, share_title, support_column, support_title, supports,
)


def test_logit_difference_is_the_log_odds_of_the_target():
    logits = torch.tensor([[2.0, 0.5, -1.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0, 0.0]])
    p = torch.softmax(logits, -1)[:, 0]
    assert torch.allclose(logit_difference(logits, 0), torch.log(p / (1 - p)), atol=1e-6)
    assert logit_difference(logits, 3)[1].item() == pytest.approx(-math.log(4))


def test_support_is_base_minus_variant_in_both_units():
    base = torch.tensor([3.0, 0.0, 0.0])
    var = torch.tensor([[2.0, 0.0, 0.0], [3.0, 0.0, 0.0]])
    ch = supports(base, var, 0)
    assert set(ch) == {"logit_diff", "prob"}
    assert ch["logit_diff"][0].item() == pytest.approx(1.0, abs=1e-6) and ch["logit_diff"][1] == 0
    assert ch["prob"][0] > 0
    with pytest.raises(ValueError, match="target"):
        supports(base, var, 3)


def test_one_wording_names_the_team_and_the_unit():
    assert support_title("logit_diff", "Billing") == "support for Billing (logit difference)"
    assert support_title("prob") == "support for the target (probability)"
    assert support_column("prob") == "support_prob"
    assert share_title("logit_diff") == "share recovered (logit difference)"
    with pytest.raises(ValueError, match="unit"):
        support_title("accuracy", "Billing")


def test_small_values_print_with_their_digits():
    assert format_effect(0.00042) == "+0.00042"
    assert format_effect(-0.0000123) == "-0.000012"
    assert format_effect(0.004) == "+0.0040"
    assert format_effect(0.25) == "+0.250"
    assert format_effect(0.0) == "0"
    assert format_effect(float("nan")) == "n/a"
    assert "0.00" != format_effect(0.001)
