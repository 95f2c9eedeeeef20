"""Attention beside causal effect: batched counterfactuals, rollout, gradients, rank agreement, ERASER and head masking."""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch
from scipy import stats
from torch import Tensor, nn

from ticketnet.counterfactual import check_eval, check_ticket, counterfactual_batch, variant_probs
from ticketnet.lens import run_with_cache, torch_differences
from ticketnet.model import pad_batch
from ticketnet.parallel import share_out
from ticketnet.text import UNK_ID, token_spans

FRACTIONS: tuple[float, ...] = (0.01, 0.05, 0.1, 0.2, 0.5)   # ERASER's bins (DeYoung et al. 2020), immutable
AGREEMENT_COLUMNS = ("signal", "kendall_tau", "spearman", "top3_overlap")
ERASER_COLUMNS = ("signal", "fraction", "k", "comprehensiveness", "sufficiency")


# -- checks -----------------------------------------------------------------------------------------------
def _check_vector(x: Tensor | Sequence[float], name: str) -> Tensor:
    x = torch.as_tensor(x)
    if x.dim() != 1:
        raise ValueError(f"{name} must be a 1-D tensor (n,), got shape {tuple(x.shape)}")
    return x.detach().to("cpu", torch.float64)


def _check_pair(a: Tensor | Sequence[float], b: Tensor | Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    a, b = _check_vector(a, "a"), _check_vector(b, "b")
    if a.numel() != b.numel():
        raise ValueError(f"rankings must cover the same tokens: {a.numel()} values against {b.numel()}")
    return a.numpy(), b.numpy()


def _ranked(scores: Tensor) -> Tensor:
    """Positions from highest to lowest score; a stable sort so equal scores keep their reading order."""
    return torch.argsort(scores, descending=True, stable=True)


# -- 1-3. counterfactuals ---------------------------------------------------------------------------------
@dataclass
class Counterfactuals:
    """Team probabilities of one ticket and of its one-token variants."""

    base: Tensor      # (C,) the ticket as written
    removed: Tensor   # (n, C) row i: token i deleted
    replaced: Tensor  # (n, C) row i: token i replaced by <unk>


def counterfactual_probs(model: nn.Module, ids: Tensor, unk_id: int = UNK_ID) -> Counterfactuals:
    """Probabilities of the ticket `ids` (n,) and of all its 2n one-token variants, computed together, never one
    variant at a time (`ticketnet.counterfactual.variant_probs`: one padded batch for short tickets; from 40
    tokens block 1 once for all variants, the rest in cache-sized chunks)."""
    probs = variant_probs(model, ids, unk_id)
    return Counterfactuals(base=probs["ticket"], removed=probs["deleted"], replaced=probs["replaced"])


def _check_variants(base: Tensor, variants: Tensor) -> None:
    if base.dim() != 1 or variants.dim() != 2 or variants.shape[1] != base.shape[0]:
        raise ValueError(f"base must be (C,) and variants (n, C), got {tuple(base.shape)} and {tuple(variants.shape)}")


def probability_drop(base: Tensor, variants: Tensor, target: int) -> Tensor:
    """base[target] − variants[:, target] (n,): positive where the changed token supported the target."""
    _check_variants(base, variants)
    if not 0 <= target < base.shape[0]:
        raise ValueError(f"target must be a team index in 0..{base.shape[0] - 1}, got {target}")
    return base[target] - variants[:, target]


def total_variation(base: Tensor, variants: Tensor) -> Tensor:
    """½ Σ_c |base − variant| (n,) in [0, 1]: how much of the whole team distribution moved, any direction."""
    _check_variants(base, variants)
    return 0.5 * (variants - base[None]).abs().sum(-1)


# -- 4-5. attention-based signals -------------------------------------------------------------------------
def received_attention(pattern: Tensor) -> Tensor:
    """Mean weight each key token receives over all query rows: pattern (h, n, n) -> (h, n).

    These are the vertical bands of an attention map; each head's row of the result sums to 1.
    """
    if pattern.dim() != 3 or pattern.shape[-1] != pattern.shape[-2]:
        raise ValueError(f"pattern must be one ticket's (h, n, n) attention weights, got {tuple(pattern.shape)}")
    return pattern.mean(dim=-2)


def attention_rollout(patterns: Tensor) -> Tensor:
    """Attention rollout (Abnar & Zuidema 2020) of patterns (L, h, n, n) -> (n, n), rows summing to 1.

    Per block A = ½·mean_h(W) + ½·I (the identity stands for the residual connection), rows re-normalised;
    then R = A_L ⋯ A_1, so R[i, j] is the share of input token j in position i's output of the last block.
    """
    if patterns.dim() != 4 or patterns.shape[-1] != patterns.shape[-2]:
        raise ValueError(f"patterns must be (L, h, n, n) attention weights, got {tuple(patterns.shape)}")
    n = patterns.shape[-1]
    eye = torch.eye(n, dtype=patterns.dtype, device=patterns.device)
    rollout = eye
    for W in patterns:                                                 # block 1 first, so later blocks multiply on the left
        A = 0.5 * W.mean(0) + 0.5 * eye
        A = A / A.sum(-1, keepdim=True)
        rollout = A @ rollout
    return rollout


def rollout_to_pooled(rollout: Tensor) -> Tensor:
    """Share of each input token in the mean-pooled representation, rollout (n, n) -> (n,), summing to 1.

    The model averages all real positions before its head, so the pooled vector's share is the mean row.
    """
    if rollout.dim() != 2 or rollout.shape[0] != rollout.shape[1]:
        raise ValueError(f"rollout must be (n, n), got {tuple(rollout.shape)}")
    return rollout.mean(0)


# -- 6. gradient attributions (Captum) --------------------------------------------------------------------
def _probability_of_ids(model: nn.Module) -> Callable[[Tensor], Tensor]:
    # Baselines are id 0, which the model would read as padding (and refuse as an all-padding row); every
    # row here is a full ticket, so padding is pinned to "none" and the <pad> vector acts as a zero input.
    def forward(ids: Tensor) -> Tensor:
        return torch.softmax(model(ids, torch.zeros_like(ids, dtype=torch.bool)), dim=-1)
    return forward


def _embedding_layer(model: nn.Module) -> nn.Module:
    if not isinstance(getattr(model, "embed", None), nn.Embedding):
        raise ValueError("gradient attributions need a model with an nn.Embedding called `embed`")
    return model.embed


def integrated_gradients(model: nn.Module, ids: Tensor, target: int, steps: int = 32) -> tuple[Tensor, float]:
    """Integrated gradients of p(target) for one ticket `ids` (n,) -> (attributions (n,), convergence delta).

    Captum's LayerIntegratedGradients on the token embeddings, from the <pad> vector (id 0, zero) at every
    position to the real tokens, position vectors unchanged; summed over d. Attributions add up to
    p(target | ticket) − p(target | all-<pad>) up to the returned delta, in probability units like removal.
    """
    from captum.attr import LayerIntegratedGradients

    check_eval(model)
    if steps < 2:
        raise ValueError(f"integrated gradients needs at least 2 steps along the path, got {steps}")
    with torch.inference_mode(False), torch.enable_grad():
        x = check_ticket(ids).clone()[None]                           # a normal tensor even if made in inference mode
        ig = LayerIntegratedGradients(_probability_of_ids(model), _embedding_layer(model))
        attr, delta = ig.attribute(x, baselines=torch.zeros_like(x), target=target, n_steps=steps,
                                   return_convergence_delta=True)
    return attr[0].sum(-1).detach(), float(delta.reshape(-1)[0])


def gradient_x_input(model: nn.Module, ids: Tensor, target: int) -> Tensor:
    """Gradient × input of p(target) at the token embeddings for one ticket `ids` (n,) -> (n,), summed over d."""
    from captum.attr import LayerGradientXActivation

    check_eval(model)
    with torch.inference_mode(False), torch.enable_grad():
        x = check_ticket(ids).clone()[None]
        gxa = LayerGradientXActivation(_probability_of_ids(model), _embedding_layer(model))
        attr = gxa.attribute(x, target=target)
    return attr[0].sum(-1).detach()


# -- 7. rank agreement ------------------------------------------------------------------------------------
def _constant(x: np.ndarray) -> bool:
    return x.size < 2 or bool(np.all(x == x[0]))


def _tau_method(n: int) -> str:
    # Only the statistic is used; the asymptotic p-value skips scipy's slow exact one for short tickets,
    # but it divides by n − 2, so two tokens take scipy's default (two distinct values cannot tie).
    return "asymptotic" if n >= 3 else "auto"


def kendall_tau(a: Tensor | Sequence[float], b: Tensor | Sequence[float]) -> float:
    """Kendall's τ-b between two scores over the same tokens (scipy); nan when either is constant."""
    a, b = _check_pair(a, b)
    if _constant(a) or _constant(b):
        return float("nan")                                           # no ranking to compare, not a disagreement
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(stats.kendalltau(a, b, method=_tau_method(a.size)).statistic)


def kendall_taus(signals: Tensor, effect: Tensor) -> Tensor:
    """Kendall's τ-b of each row of `signals` (S, n) against `effect` (n,) -> (S,) float64, nan for constant rows.

    The same statistic as `kendall_tau`, in one scipy call along axis 1 (a whole split asks for ~20,000).
    """
    if signals.dim() != 2 or effect.dim() != 1 or signals.shape[1] != effect.shape[0]:
        raise ValueError(f"need signals (S, n) and effect (n,), got {tuple(signals.shape)} and {tuple(effect.shape)}")
    s = signals.detach().to("cpu", torch.float64).numpy()
    e = effect.detach().to("cpu", torch.float64).numpy()
    out = np.full(s.shape[0], np.nan)
    live = ~np.all(s == s[:, :1], axis=1) if s.shape[1] >= 2 else np.zeros(s.shape[0], dtype=bool)
    if live.any() and not _constant(e):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[live] = stats.kendalltau(s[live], np.broadcast_to(e, s[live].shape), axis=1,
                                         method=_tau_method(s.shape[1])).statistic
    return torch.from_numpy(out)


def spearman(a: Tensor | Sequence[float], b: Tensor | Sequence[float]) -> float:
    """Spearman's ρ between two scores over the same tokens (scipy); nan when either is constant."""
    a, b = _check_pair(a, b)
    if _constant(a) or _constant(b):
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(stats.spearmanr(a, b).statistic)


def top_k_overlap(a: Tensor | Sequence[float], b: Tensor | Sequence[float], k: int) -> float:
    """|top-k(a) ∩ top-k(b)| / k, equal scores ranked by position; k is capped at the number of tokens."""
    a, b = _check_pair(a, b)
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    k = min(k, a.size)
    if k == 0:
        return float("nan")
    top_a = set(_ranked(torch.from_numpy(a))[:k].tolist())
    top_b = set(_ranked(torch.from_numpy(b))[:k].tolist())
    return len(top_a & top_b) / k


def random_tau_baseline(effect: Tensor, n_draws: int = 200, seed: int = 0) -> Tensor:
    """τ between uniformly random rankings and `effect` (n,) -> (n_draws,): the chance distribution.

    A signal's τ means little unless it stands clear of this; with few tokens it is wide.
    """
    effect = _check_vector(effect, "effect")
    if n_draws < 1:
        raise ValueError(f"n_draws must be at least 1, got {n_draws}")
    gen = torch.Generator().manual_seed(seed)
    n = effect.numel()
    return torch.tensor([kendall_tau(torch.randperm(n, generator=gen).double(), effect) for _ in range(n_draws)],
                        dtype=torch.float64)


# -- 8. where attention and effect part ways --------------------------------------------------------------
def disagreements(signal: Tensor, effect: Tensor, tokens: Sequence[str], k: int = 3) -> dict[str, list[tuple]]:
    """The k tokens where `signal` (n,) and `effect` (n,) disagree most, as (position, token, signal, effect).

    Both are turned into rank percentiles (0 = lowest of this ticket, 1 = highest; ties share their average
    rank) because their raw scales cannot be compared: attention is a share summing to 1, effect a
    probability change that may be negative. `high_attention_low_effect` lists tokens whose signal
    percentile exceeds their effect percentile by most; `low_attention_high_effect` the reverse. Only
    tokens with a real gap (> 0) are listed, so lists may be shorter than k.
    """
    s, e = _check_pair(signal, effect)
    if len(tokens) != s.size:
        raise ValueError(f"{len(tokens)} tokens for {s.size} scores")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    out: dict[str, list[tuple]] = {"high_attention_low_effect": [], "low_attention_high_effect": []}
    n = s.size
    if n < 2:
        return out
    gap = (stats.rankdata(s) - stats.rankdata(e)) / (n - 1)            # percentile(signal) − percentile(effect)
    gap_t = torch.from_numpy(gap)
    for key, scores in (("high_attention_low_effect", gap_t), ("low_attention_high_effect", -gap_t)):
        for i in _ranked(scores)[:k].tolist():
            if scores[i] > 0:
                out[key].append((i, tokens[i], float(s[i]), float(e[i])))
    return out


# -- 9. ERASER faithfulness -------------------------------------------------------------------------------
def rationale_variants(ids: Tensor, order: Tensor, k: int) -> tuple[Tensor, Tensor]:
    """The ticket without its rationale, x∖r (n−k,), and the rationale alone, r (k,), both in reading order.

    The rationale r is the k tokens with the highest `order` scores (n,), equal scores by position.
    """
    ids = check_ticket(ids)
    order = _check_vector(order, "order")
    n = ids.numel()
    if order.numel() != n:
        raise ValueError(f"order scores {order.numel()} tokens but the ticket has {n}")
    if not 1 <= k <= n - 1:
        raise ValueError(f"k must be in 1..n−1 = 1..{n - 1} so both variants keep a token, got {k}")
    in_r = torch.zeros(n, dtype=torch.bool)
    in_r[_ranked(order)[:k]] = True
    return ids[~in_r], ids[in_r]


def _rationale_size(fraction: float, n: int) -> int:
    # Half-up rounding (Python's round() sends 2.5 to 2); at least one token, and at most n−1 so that
    # x∖r keeps one token for the model to read.
    if not 0 < fraction <= 1:
        raise ValueError(f"fractions must lie in (0, 1], got {fraction}")
    return min(max(1, math.floor(fraction * n + 0.5)), n - 1)


def _eraser_plan(ids: Tensor, signals: Mapping[str, Tensor], fractions: Sequence[float]) -> list[tuple]:
    """(signal, fraction, k, x∖r ids list, r ids list) for every signal and fraction of one ticket; the same
    split as `rationale_variants`, done on lists because a whole data split asks for hundreds of thousands."""
    ids = check_ticket(ids, min_len=2)
    tokens, n = ids.tolist(), ids.numel()
    sizes = [(f, _rationale_size(f, n)) for f in fractions]
    plan = []
    for name, scores in signals.items():
        scores = _check_vector(scores, name)
        if scores.numel() != n:
            raise ValueError(f"signal {name!r} scores {scores.numel()} tokens but the ticket has {n}")
        ranked = _ranked(scores).tolist()
        for f, k in sizes:
            top = set(ranked[:k])
            plan.append((name, f, k, [t for i, t in enumerate(tokens) if i not in top],
                         [t for i, t in enumerate(tokens) if i in top]))
    return plan


def _unique_rows(seqs: list[list[int]]) -> tuple[list[list[int]], list[int]]:
    """Distinct id lists and, per input, its index among them: short tickets repeat variants a lot."""
    index: dict[tuple[int, ...], int] = {}
    where = [index.setdefault(tuple(s), len(index)) for s in seqs]
    return [list(t) for t in index], where


def _eraser_frame(plan: list[tuple], p_row: Tensor, where: list[int], base_at: int, target: int) -> pd.DataFrame:
    p = p_row[:, target]
    base = p[where[base_at]]
    rows = [(name, f, k, float(base - p[where[2 * j]]), float(base - p[where[2 * j + 1]]))
            for j, (name, f, k, _, _) in enumerate(plan)]
    return pd.DataFrame(rows, columns=list(ERASER_COLUMNS))


def eraser(model: nn.Module, ids: Tensor, signals: Mapping[str, Tensor], target: int,
           fractions: Sequence[float] = FRACTIONS) -> pd.DataFrame:
    """ERASER comprehensiveness and sufficiency (DeYoung et al. 2020) of each signal's top tokens.

    For each signal (n,) and fraction, r is its top k = max(1, round(fraction·n)) tokens (at most n−1);
    comprehensiveness = p(target|x) − p(target|x∖r) (high: the model needed r), sufficiency =
    p(target|x) − p(target|r) (low: r alone suffices). All variants of all signals and fractions go
    through ONE batched forward pass. Columns: signal, fraction, k, comprehensiveness, sufficiency.
    """
    check_eval(model)
    ids = check_ticket(ids, min_len=2)
    plan = _eraser_plan(ids, signals, fractions)
    seqs = [s for *_, removed, kept in plan for s in (removed, kept)] + [ids.tolist()]
    unique, where = _unique_rows(seqs)
    with torch.inference_mode():
        probs = torch.softmax(model(*pad_batch(unique)), dim=-1)       # (distinct variants, C)
    return _eraser_frame(plan, probs, where, len(seqs) - 1, target)


def aopc(df: pd.DataFrame) -> pd.DataFrame:
    """Area over the perturbation curve per signal: mean comprehensiveness and sufficiency over fractions."""
    missing = {"signal", "comprehensiveness", "sufficiency"} - set(df.columns)
    if missing:
        raise ValueError(f"aopc needs eraser()'s columns; missing {', '.join(sorted(missing))}")
    return (df.groupby("signal", sort=False)[["comprehensiveness", "sufficiency"]].mean().reset_index())


# -- 10. annotated evidence -------------------------------------------------------------------------------
def evidence_mask(text: str, tokens_kept: int, evidence: str) -> Tensor:
    """Gold tokens (tokens_kept,) bool: tokens whose character span overlaps an annotated evidence phrase.

    `evidence` holds `|`-separated substrings of `text`; every occurrence of each counts, matched without
    regard to case, and a phrase not found in the text marks nothing. `tokens_kept` is how many tokens the
    model read (truncation drops the rest).
    """
    spans = token_spans(text)
    if not 0 <= tokens_kept <= len(spans):
        raise ValueError(f"tokens_kept must be in 0..{len(spans)} (the text has {len(spans)} tokens), got {tokens_kept}")
    mask = torch.zeros(tokens_kept, dtype=torch.bool)
    for phrase in (p.strip() for p in evidence.split("|")):
        if not phrase:
            continue
        for m in re.finditer(re.escape(phrase), text, flags=re.IGNORECASE):   # offsets of the original text
            a, b = m.span()
            for i, (s, e) in enumerate(spans[:tokens_kept]):
                if s < b and a < e:
                    mask[i] = True
    return mask


def average_precision(signal: Tensor, gold: Tensor) -> float:
    """Mean of precision@rank over the ranks of the gold tokens when ranked by `signal` (n,); nan without gold."""
    s = _check_vector(signal, "signal")
    gold = torch.as_tensor(gold, dtype=torch.bool)
    if gold.shape != s.shape:
        raise ValueError(f"gold {tuple(gold.shape)} must match signal {tuple(s.shape)}")
    hits = gold[_ranked(s)].double()                                   # 1 where the ranked token is gold
    if hits.sum() == 0:
        return float("nan")
    precision = hits.cumsum(0) / torch.arange(1, hits.numel() + 1)
    return float((precision * hits).sum() / hits.sum())


def evidence_recovery(signal: Tensor, gold: Tensor) -> dict[str, float]:
    """How well `signal` (n,) finds annotated evidence `gold` (n,) bool: auprc (average precision) and
    token_f1 of the top-|gold| tokens (with as many picks as gold tokens, F1 = precision = recall)."""
    ap = average_precision(signal, gold)
    gold = torch.as_tensor(gold, dtype=torch.bool)
    g = int(gold.sum())
    if g == 0:
        return {"auprc": float("nan"), "token_f1": float("nan")}
    picked = _ranked(_check_vector(signal, "signal"))[:g]
    return {"auprc": ap, "token_f1": float(gold[picked].sum()) / g}


# -- 11. head importance ----------------------------------------------------------------------------------
def head_importance(model: nn.Module, ids: Tensor, is_pad: Tensor, labels: Tensor,
                    target: str | int | None = None, batch_size: int = 512) -> pd.DataFrame:
    """Michel et al. (2019): switch off one head at a time and measure what the routing loses.

    ids, is_pad (B, n) and labels (B,). For every (block, head) the batch is re-run through the lens with
    that head's output scaled by 0; `prob_drop` is the mean fall in the probability of the label
    (target=None), of the unmasked model's predicted team (target="predicted") or of one team index.
    Columns: block, head (1-based), accuracy (with the head off), accuracy_drop, prob_drop.
    """
    check_eval(model)
    if ids.dim() != 2 or is_pad.shape != ids.shape or labels.shape != ids.shape[:1]:
        raise ValueError(f"need ids and is_pad (B, n) and labels (B,), got {tuple(ids.shape)}, "
                         f"{tuple(is_pad.shape)}, {tuple(labels.shape)}")
    L, h = model.config.n_blocks, model.config.h
    # Row 0 of the masks is the intact model; then one row per head, so each batch chunk is read L·h+1 times.
    masks = torch.ones(L * h + 1, L, h)
    for j in range(L * h):
        masks[j + 1, j // h, j % h] = 0.0
    probs = torch.empty(L * h + 1, ids.shape[0], model.config.n_classes)
    with torch.inference_mode():
        for start in range(0, ids.shape[0], batch_size):
            chunk = slice(start, start + batch_size)
            for j, mask in enumerate(masks):
                logits, _ = run_with_cache(model, ids[chunk], is_pad[chunk], head_mask=mask)
                probs[j, chunk] = torch.softmax(logits, -1)
    if target is None:
        who = labels
    elif target == "predicted":
        who = probs[0].argmax(-1)
    elif isinstance(target, int) and 0 <= target < probs.shape[-1]:
        who = torch.full_like(labels, target)
    else:
        raise ValueError(f"target must be None (the label), 'predicted' or a team index, got {target!r}")
    p_who = probs.gather(2, who.view(1, -1, 1).expand(probs.shape[0], -1, 1))[..., 0]   # (L·h+1, B)
    acc = probs.argmax(-1).eq(labels[None]).double().mean(-1)                           # (L·h+1,)
    rows = [(j // h + 1, j % h + 1, float(acc[j + 1]), float(acc[0] - acc[j + 1]),
             float((p_who[0] - p_who[j + 1]).mean())) for j in range(L * h)]
    return pd.DataFrame(rows, columns=["block", "head", "accuracy", "accuracy_drop", "prob_drop"])


# -- 12. one ticket, everything the page shows ------------------------------------------------------------
def attention_signals(patterns: Tensor) -> dict[str, Tensor]:
    """Attention-derived token scores (n,) from one ticket's patterns (L, h, n, n): rollout, per-block mean
    of the received attention, and per head ("b2 h1" = block 2, head 1), all 1-based."""
    if patterns.dim() != 4:
        raise ValueError(f"patterns must be (L, h, n, n), got {tuple(patterns.shape)}")
    received = [received_attention(p) for p in patterns]               # L × (h, n)
    out = {"rollout": rollout_to_pooled(attention_rollout(patterns))}
    out.update({f"mean attention b{b + 1}": r.mean(0) for b, r in enumerate(received)})
    out.update({f"b{b + 1} h{i + 1}": r[i] for b, r in enumerate(received) for i in range(r.shape[0])})
    return out


def agreement_table(signals: Mapping[str, Tensor], effect: Tensor, k: int = 3) -> pd.DataFrame:
    """τ, ρ and top-k overlap of each signal against `effect` (n,). Columns: signal, kendall_tau, spearman,
    top3_overlap (named for the default k)."""
    rows = [(name, kendall_tau(s, effect), spearman(s, effect), top_k_overlap(s, effect, k))
            for name, s in signals.items()]
    return pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS))


@dataclass
class TicketInterpretation:
    """Everything the interpretation page shows for one ticket, computed once by `interpret_ticket`."""

    text: str
    tokens: list[str]                   # n tokens the model read (after truncation)
    ids: Tensor                         # (n,)
    teams: tuple[str, ...]
    target: int                         # team whose probability the effects and attributions follow
    probs: Tensor                       # (C,) team probabilities (PyTorch forward)
    counterfactuals: Counterfactuals | None   # None for a one-token ticket
    signals: dict[str, Tensor]          # name -> (n,) token scores; "removal" is the causal reference
    agreement: pd.DataFrame             # signal, kendall_tau, spearman, top3_overlap vs removal
    random_tau: Tensor                  # (n_draws,) τ of random rankings vs removal: the chance band
    eraser: pd.DataFrame                # signal, fraction, k, comprehensiveness, sufficiency
    aopc: pd.DataFrame                  # signal, comprehensiveness, sufficiency
    evidence: pd.DataFrame | None       # signal, auprc, token_f1, gold_tokens, base_rate; None without evidence
    per_token: pd.DataFrame             # position, token, one column per signal, removal TV, unk TV
    patterns: Tensor                    # (L, h, n, n) from the from-scratch lens
    differences: dict[str, float]       # |from-scratch − PyTorch| per block output, see lens.torch_differences
    ig_delta: float                     # integrated gradients' convergence delta
    truncated: bool = False
    note: str = ""                      # why some parts are empty, or other caveats to show
    disagreements: dict[str, list[tuple]] = field(default_factory=dict)   # rollout vs removal

    @property
    def n(self) -> int:
        return len(self.tokens)

    @property
    def predicted(self) -> int:
        return int(self.probs.argmax())

    @property
    def max_difference(self) -> float:
        return max(self.differences.values())


def _random_signal(n: int, seed: int) -> Tensor:
    # A random ordering as an ERASER baseline: a faithful signal must beat it.
    return torch.randperm(n, generator=torch.Generator().manual_seed(seed)).double()


def interpret_ticket(router, text: str, target: int | None = None, evidence: str = "",
                     ig_steps: int = 32, n_draws: int = 200, seed: int = 0) -> TicketInterpretation:
    """Interpret one ticket: counterfactual effects, attention signals, gradients, agreement, ERASER, evidence.

    `target` defaults to the predicted team. A one-token ticket has no deletion counterfactual; its
    removal-based parts (agreement, ERASER, disagreements) are empty and `note` says why.
    """
    model = router.model
    check_eval(model)
    enc = router.encode(text)
    ids = torch.tensor(enc.ids, dtype=torch.long)
    n = ids.numel()
    with torch.inference_mode():
        x, pad = ids[None], torch.zeros(1, n, dtype=torch.bool)
        logits, cache = run_with_cache(model, x, pad)
        differences = torch_differences(model, x, pad, cache, logits)
        probs = torch.softmax(model(x, pad)[0], -1)                    # PyTorch's, as the router reports it
    patterns = torch.stack([cache[f"blocks.{i}.attn.pattern"][0] for i in range(model.config.n_blocks)])
    target = int(probs.argmax()) if target is None else int(target)
    if not 0 <= target < probs.numel():
        raise ValueError(f"target must be a team index in 0..{probs.numel() - 1}, got {target}")

    notes = []
    if enc.truncated:
        notes.append(f"only the first {n} of {enc.n_total} tokens are read; the rest are not interpreted")
    signals: dict[str, Tensor] = {}
    cf = None
    if n >= 2:
        cf = counterfactual_probs(model, ids, router.vocab.stoi.get("<unk>", UNK_ID))
        signals["removal"] = probability_drop(cf.base, cf.removed, target)
        signals["unk replacement"] = probability_drop(cf.base, cf.replaced, target)
    else:
        notes.append("a one-token ticket has no deletion counterfactual: removal effects, agreement with them, "
                     "ERASER and disagreements are empty")
    signals.update(attention_signals(patterns))
    ig, delta = integrated_gradients(model, ids, target, steps=ig_steps)
    signals["integrated gradients"] = ig
    signals["gradient x input"] = gradient_x_input(model, ids, target)

    per_token = pd.DataFrame({"position": range(n), "token": enc.tokens})
    for name, s in signals.items():
        per_token[name] = s.double().numpy()
    if cf is not None:
        per_token["removal TV"] = total_variation(cf.base, cf.removed).double().numpy()
        per_token["unk TV"] = total_variation(cf.base, cf.replaced).double().numpy()

    if cf is not None:
        effect = signals["removal"]
        others = {k: v for k, v in signals.items() if k != "removal"}
        agreement = agreement_table(others, effect)
        random_tau = random_tau_baseline(effect, n_draws, seed)
        table = eraser(model, ids, {**signals, "random": _random_signal(n, seed)}, target)
        found = disagreements(signals["rollout"], effect, enc.tokens)
    else:
        agreement = pd.DataFrame(columns=list(AGREEMENT_COLUMNS))
        random_tau = torch.empty(0, dtype=torch.float64)
        table = pd.DataFrame(columns=list(ERASER_COLUMNS))
        found = {"high_attention_low_effect": [], "low_attention_high_effect": []}

    evidence_table = None
    if evidence.strip():
        try:
            gold = evidence_mask(text, n, evidence)
        except ValueError as exc:                                      # offsets unavailable for this text
            notes.append(f"evidence not scored: {exc}")
        else:
            per_token["evidence"] = gold.numpy()
            if not bool(gold.any()):
                notes.append("none of the evidence phrases overlaps a token the model read")
            evidence_table = pd.DataFrame(
                [{"signal": name, **evidence_recovery(s, gold), "gold_tokens": int(gold.sum()),
                  "base_rate": float(gold.double().mean())} for name, s in signals.items()])

    return TicketInterpretation(
        text=text, tokens=list(enc.tokens), ids=ids, teams=tuple(router.teams), target=target, probs=probs,
        counterfactuals=cf, signals=signals, agreement=agreement, random_tau=random_tau, eraser=table,
        aopc=aopc(table) if len(table) else pd.DataFrame(columns=["signal", "comprehensiveness", "sufficiency"]),
        evidence=evidence_table, per_token=per_token, patterns=patterns, differences=differences,
        ig_delta=delta, truncated=enc.truncated, note="; ".join(notes), disagreements=found)


# -- 13. a whole split ------------------------------------------------------------------------------------
def _batched_probs(model: nn.Module, seqs: list[list[int]], max_tokens: int = 8192,
                   max_cells: int = 1 << 20, workers: int | None = None) -> Tensor:
    """Probabilities (len(seqs), C) of many id lists: distinct ones only, sorted by length so chunks pad
    little. A chunk holds at most `max_tokens` padded tokens and `max_cells` rows·n² attention cells: small
    chunks stay in cache and run faster per token on CPU than one huge batch, and long rows stay bounded.
    Chunks are independent, so `workers` threads (default: torch's thread count) share them out."""
    unique, where = _unique_rows(seqs)
    order = sorted(range(len(unique)), key=lambda i: len(unique[i]))
    chunks, start = [], 0
    while start < len(order):
        stop = start + 1                                               # sorted, so the last row sets the width
        while stop < len(order):
            rows, n = stop - start + 1, len(unique[order[stop]])
            if rows * n > max_tokens or rows * n * n > max_cells:
                break
            stop += 1
        chunks.append(order[start:stop])
        start = stop
    out = torch.empty(len(unique), model.config.n_classes)

    def run(share: list[list[int]]) -> None:
        with torch.inference_mode():                                   # grad mode is per thread
            for idx in share:
                out[idx] = torch.softmax(model(*pad_batch([unique[i] for i in idx])), -1)

    share_out(run, chunks, workers)
    return out[where]


def _deletion_rows(ids: Tensor) -> list[list[int]]:
    """The ticket and its n one-token deletions as unpadded id lists; just the ticket when it has one token."""
    if ids.numel() < 2:
        return [ids.tolist()]
    batch, is_pad = counterfactual_batch(ids, kinds=("deleted",))
    return [row[~pad].tolist() for row, pad in zip(batch, is_pad)]


SPLIT_ERASER_SIGNALS: tuple[str, ...] = ("removal", "rollout", "mean attention b1", "mean attention b2", "random")


def _aopc_of_plan(plan: list[tuple], p: Tensor, base: float) -> dict[str, float]:
    """AOPC columns of one ticket from its ERASER plan and p(target) (2·len(plan),) of x∖r, r pairs."""
    sums: dict[str, list[float]] = {}
    for j, (name, *_rest) in enumerate(plan):                          # mean over the fractions, per signal
        acc = sums.setdefault(name, [0.0, 0.0, 0])
        acc[0] += base - float(p[2 * j])
        acc[1] += base - float(p[2 * j + 1])
        acc[2] += 1
    out = {}
    for name, (comp, suff, cnt) in sums.items():
        out[f"comprehensiveness {name}"] = comp / cnt
        out[f"sufficiency {name}"] = suff / cnt
    return out


def interpret_split(router, rows: Sequence[Mapping[str, str]], progress: Callable[[int, int], None] | None = None,
                    target: str = "predicted", fractions: Sequence[float] = FRACTIONS,
                    eraser_signals: Sequence[str] | None = SPLIT_ERASER_SIGNALS,
                    group_size: int = 256) -> pd.DataFrame:
    """One row per ticket of `rows` (dicts with ticket_id, text and optionally team): how attention agrees
    with deletion effects and how faithful each signal's top tokens are.

    Columns: ticket_id, n, predicted, label, `tau <signal>` (Kendall τ vs removal) for rollout, mean
    attention per block and every head ("b2 h1"), `tau random` (one random ranking per ticket: over the
    split, the chance distribution), `comprehensiveness <signal>` / `sufficiency <signal>` (AOPC over
    `fractions`) for `eraser_signals` (None: every attention signal as well, about 2.5× the work), and
    `disagreement` = (1 − τ(rollout, removal)) / 2 in [0, 1], high where rollout ranks tokens against
    their effect. `target` is "predicted" or "label": the team whose probability is followed. Tickets go
    `group_size` at a time, similar lengths together, every group's variants in length-sorted batches;
    `progress(done, total)` is called after each group. One-token tickets get nan scores.
    """
    if target not in ("predicted", "label"):
        raise ValueError(f"target must be 'predicted' or 'label', got {target!r}")
    model = router.model
    check_eval(model)
    teams = list(router.teams)
    encoded = []
    for r in rows:
        try:
            encoded.append(router.encode(r["text"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"ticket {r.get('ticket_id')!r}: {exc}") from None
        if target == "label" and r.get("team") not in teams:
            raise ValueError(f"ticket {r.get('ticket_id')!r}: target='label' needs a known team, got {r.get('team')!r}")
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i].ids))   # similar lengths share a batch
    results: list[dict] = [{} for _ in encoded]
    L = model.config.n_blocks
    for g0 in range(0, len(order), group_size):
        group = order[g0 : g0 + group_size]
        with torch.inference_mode():
            _, cache = run_with_cache(model, *pad_batch([encoded[i].ids for i in group]))
            patterns = torch.stack([cache[f"blocks.{b}.attn.pattern"] for b in range(L)], 1)   # (G, L, h, n, n)
            # Every ticket and its deletions: the PyTorch forward gives the base probability and the effects.
            seqs, starts = [], []
            for i in group:
                starts.append(len(seqs))
                seqs.extend(_deletion_rows(torch.tensor(encoded[i].ids)))
            probs = _batched_probs(model, seqs)
            plans, eseqs = [], []
            for gi, i in enumerate(group):
                n, s0 = len(encoded[i].ids), starts[gi]
                predicted = int(probs[s0].argmax())
                who = predicted if target == "predicted" else teams.index(rows[i]["team"])
                label = rows[i].get("team")
                rec = {"ticket_id": rows[i].get("ticket_id"), "n": n, "predicted": teams[predicted],
                       "label": label if label in teams else None}
                sig = attention_signals(patterns[gi, :, :, :n, :n])
                if n >= 2:
                    effect = probability_drop(probs[s0], probs[s0 + 1 : s0 + 1 + n], who)
                    taus = kendall_taus(torch.stack(list(sig.values())), effect).tolist()
                    rec.update({f"tau {name}": t for name, t in zip(sig, taus)})
                    # Seeded by the ticket's place in `rows`, so its draw does not depend on the other tickets.
                    rec["tau random"] = float(random_tau_baseline(effect, 1, seed=i)[0])
                    everything = {**sig, "removal": effect, "random": _random_signal(n, i)}
                    chosen = everything if eraser_signals is None else {k: everything[k] for k in eraser_signals}
                    plan = _eraser_plan(torch.tensor(encoded[i].ids), chosen, fractions)
                    plans.append((i, plan, len(eseqs), who, s0))
                    eseqs.extend(s for *_, removed, kept in plan for s in (removed, kept))
                rec["disagreement"] = (1 - rec.get("tau rollout", float("nan"))) / 2
                results[i] = rec
            eprobs = _batched_probs(model, eseqs) if eseqs else None
        for i, plan, first, who, s0 in plans:
            results[i].update(_aopc_of_plan(plan, eprobs[first : first + 2 * len(plan), who], float(probs[s0, who])))
        if progress is not None:
            progress(min(g0 + group_size, len(order)), len(order))
    return _split_frame(results, model.config.n_blocks, model.config.h, eraser_signals)


def _split_frame(results: list[dict], L: int, h: int, eraser_signals: Sequence[str] | None) -> pd.DataFrame:
    """The split's rows with a fixed column order, whatever ticket came first (one-token rows lack most)."""
    attn = ["rollout", *(f"mean attention b{b + 1}" for b in range(L)),
            *(f"b{b + 1} h{i + 1}" for b in range(L) for i in range(h))]
    aopc_names = [*attn, "removal", "random"] if eraser_signals is None else list(eraser_signals)
    columns = ["ticket_id", "n", "predicted", "label", *(f"tau {a}" for a in attn), "tau random",
               *(f"{m} {a}" for a in aopc_names for m in ("comprehensiveness", "sufficiency")), "disagreement"]
    return pd.DataFrame(results, columns=columns)
