"""Parity of the from-scratch attention with PyTorch: the same rows the Verification page shows."""

import pytest
import torch

from ticketnet.lens.parity import TOLERANCE, formula_rows, multihead_rows, one_head_rows

ROWS = formula_rows()


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.check}|{r.case}|{r.dtype}" for r in ROWS])
def test_parity_row_within_tolerance(row):
    assert row.max_diff <= row.tolerance, f"{row.check} ({row.case}, {row.dtype}): {row.max_diff:.2e}"


def test_suite_covers_every_case_in_both_dtypes():
    cases = {(r.case, r.dtype) for r in ROWS}
    assert cases == {(c, d) for c in ("no mask", "causal", "padding 7/5/3", "causal + padding")
                     for d in ("float32", "float64")}
    assert {r.tolerance for r in ROWS} == {1e-6, 1e-12}


def test_parity_detects_a_wrong_copy():
    # A check that cannot fail proves nothing: break the copy and the suite must notice.
    from ticketnet.nn.attention import MultiHead

    mine = MultiHead(64, 4)
    ref = mine.to_torch()
    with torch.no_grad():
        ref.out_proj.bias.add_(1e-3)
        X = torch.randn(2, 5, 64)
        assert (mine(X)[0] - ref(X, X, X)[0]).abs().max() > TOLERANCE[torch.float32]


def test_from_torch_round_trips_weights():
    from ticketnet.nn.attention import MultiHead

    mha = torch.nn.MultiheadAttention(64, 4, batch_first=True)
    mine = MultiHead.from_torch(mha)
    back = mine.to_torch()
    for a, b in zip(mha.state_dict().values(), back.state_dict().values()):
        assert torch.equal(a, b)


def test_float64_rows_are_far_tighter_than_float32():
    assert max(r.max_diff for r in multihead_rows(torch.float64)) < 1e-12
    assert max(r.max_diff for r in one_head_rows(torch.float64)) < 1e-12


def test_shipped_model_on_t65052_equals_pytorch():
    from ticketnet import Router
    from ticketnet.lens.parity import MODEL_TOLERANCE, model_rows

    text = ("It's not a delivery problem and I keep the leaf blower. My card was charged twice for one order. "
            "Can you remove the duplicate charge?")
    rows = model_rows(Router.load(), text)
    names = {r.check for r in rows}
    for i in (0, 1):
        assert {f"shipped model: blocks.{i}.attn.pattern", f"shipped model: blocks.{i}.resid_post"} <= names
    assert all(r.max_diff <= MODEL_TOLERANCE for r in rows), [(r.check, r.max_diff) for r in rows]


def test_shipped_model_on_a_padded_batch_and_masked_token_invariance():
    from ticketnet import Router, data_dir, load_split
    from ticketnet.lens.parity import padded_batch_rows

    rows = load_split(data_dir() / "valid.csv")[:16]
    result = padded_batch_rows(Router.load(), [r["text"] for r in rows])
    assert all(r.passed for r in result), [(r.check, r.max_diff) for r in result if not r.passed]
    assert result[-1].check.startswith("masked-token invariance") and result[-1].max_diff == 0.0
