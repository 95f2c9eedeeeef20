"""The parity suite: from-scratch attention against PyTorch, as rows that both pytest and the dashboard read."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ticketnet.nn.attention import MultiHead, attention, causal_mask, padding_mask

TOLERANCE = {torch.float32: 1e-6, torch.float64: 1e-12}
MODEL_TOLERANCE = 1e-5
LENGTHS = (7, 5, 3)  # the padded batch: three sequences of 7, 5 and 3 real tokens


@dataclass(frozen=True)
class ParityRow:
    check: str          # what was compared
    case: str           # which mask
    dtype: str
    max_diff: float
    tolerance: float

    @property
    def passed(self) -> bool:
        return self.max_diff <= self.tolerance


def _masks(dtype: torch.dtype) -> dict[str, tuple]:
    """Our additive masks next to PyTorch's boolean ones (True = may not read) for the same four cases."""
    n = max(LENGTHS)
    is_pad = torch.arange(n)[None, :] >= torch.tensor(LENGTHS)[:, None]          # (3, 7)
    future = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)          # (7, 7)
    causal, pad = causal_mask(n, dtype), padding_mask(is_pad, dtype)              # (7, 7), (3, 1, 1, 7)
    return {
        "no mask": (None, {}),
        "causal": (causal, {"attn_mask": future}),
        "padding 7/5/3": (pad, {"key_padding_mask": is_pad}),
        "causal + padding": (causal + pad, {"attn_mask": future, "key_padding_mask": is_pad}),
    }


def one_head_rows(dtype: torch.dtype = torch.float32, seed: int = 0) -> list[ParityRow]:
    """attention() against F.scaled_dot_product_attention on one head (3 sequences, 7 tokens, d_k = 16)."""
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(3, 7, 16, generator=g, dtype=dtype) for _ in range(3))
    rows = []
    for case, (mask, _) in _masks(dtype).items():
        m = None if mask is None else (mask[:, 0] if mask.dim() == 4 else mask)  # (3, 1, 7) or (7, 7)
        ours, _ = attention(q, k, v, m)
        theirs = F.scaled_dot_product_attention(q, k, v, attn_mask=m)
        rows.append(ParityRow("attention() vs F.scaled_dot_product_attention: output", case, str(dtype)[6:],
                              (ours - theirs).abs().max().item(), TOLERANCE[dtype]))
    return rows


def multihead_rows(dtype: torch.dtype = torch.float32, seed: int = 0, d: int = 64, h: int = 4) -> list[ParityRow]:
    """MultiHead against nn.MultiheadAttention holding the same weights, outputs and per-head weights."""
    torch.manual_seed(seed)
    mine = MultiHead(d, h).to(dtype)
    ref = mine.to_torch().eval()
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(3, max(LENGTHS), d, generator=g, dtype=dtype)
    rows = []
    with torch.no_grad():
        for case, (mask, kwargs) in _masks(dtype).items():
            o1, w1 = mine(X, X, mask)
            o2, w2 = ref(X, X, X, need_weights=True, average_attn_weights=False, **kwargs)
            for what, a, b in (("output", o1, o2), ("weights", w1, w2)):
                rows.append(ParityRow(f"MultiHead vs nn.MultiheadAttention: {what}", case, str(dtype)[6:],
                                      (a - b).abs().max().item(), TOLERANCE[dtype]))
    return rows


def model_rows(router, text: str) -> list[ParityRow]:
    """The shipped model's blocks on one ticket: from-scratch weights, attention and block outputs vs PyTorch."""
    from ticketnet.lens.inspection import inspect_ticket

    return [ParityRow(f"shipped model: {name}", "one ticket", "float32", diff, MODEL_TOLERANCE)
            for name, diff in inspect_ticket(router, text).differences.items()]


def padded_batch_rows(router, texts: list[str]) -> list[ParityRow]:
    """The shipped model on a padded batch of tickets, and the masked-token invariance check."""
    from ticketnet.lens.inspection import act_name, run_with_cache, torch_differences
    from ticketnet.nn.transformer import pad_batch

    model = router.model
    ids, is_pad = pad_batch([router.encode(t).ids for t in texts])
    if not is_pad.any():
        raise ValueError("the invariance check needs tickets of different lengths (some padding)")
    with torch.no_grad():
        logits, cache = run_with_cache(model, ids, is_pad)
        rows = [ParityRow(f"shipped model, padded batch: {name}", f"{len(texts)} tickets", "float32", diff,
                          MODEL_TOLERANCE) for name, diff in torch_differences(model, ids, is_pad, cache, logits).items()]
        changed = ids.masked_fill(is_pad, 7)                         # any real token where padding was
        logits2, cache2 = run_with_cache(model, changed, is_pad)
        real = ~is_pad
        moved = max((cache[act_name("resid_post", i)] - cache2[act_name("resid_post", i)]).abs().amax(-1)[real].max().item()
                    for i in range(model.config.n_blocks))
        moved = max(moved, (logits - logits2).abs().max().item())
    rows.append(ParityRow("masked-token invariance: change padded tokens, unmasked outputs and logits move by",
                          f"{len(texts)} tickets", "float32", moved, 0.0))
    return rows


def formula_rows() -> list[ParityRow]:
    """Every synthetic parity check: one head and MultiHead, four mask cases, float32 and float64."""
    return [r for dt in (torch.float32, torch.float64) for r in one_head_rows(dt) + multihead_rows(dt)]
