"""Two routers on the same tickets, head by head and token by token: attention divergence and deletion agreement."""

# Both routers read a ticket with the same tokenizer (`ticketnet.data.text.tokenize`), so position i is the same
# token in both whatever their vocabularies: a word one vocabulary lacks is read as <unk> by that router at the same
# position. Only the truncation can differ (another max_len); every comparison here gives both routers the tokens
# both read, the first min(n_a, n_b) of the ticket (`shared_reading`). Heads are paired by (block, head), which is
# only meaningful between routers with as many blocks and heads per block: `check_same_shape` refuses the rest.

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ticketnet.card import Encoded
from ticketnet.data.text import UNK_ID

# torch and the model code are imported where they are used: the Compare page reads the package for its tables
# (`compare_tables`, `routed_split`) and draws from stored predictions before torch has loaded (docs/performance.md,
# "Cold start").
if TYPE_CHECKING:
    from torch import Tensor

    from ticketnet.router import Router

LN2 = math.log(2.0)          # the largest Jensen–Shannon divergence, in nats
CHUNK_CELLS = 4_000_000           # attention cells (tickets × blocks × heads × n × n) per batch and router
CHUNK_MAX_TICKETS = 256
DIVERGENCE_COLUMNS = ("block", "head", "jsd", "tickets")
IMPORTANCE_MEASURES = ("accuracy_drop", "support_logit_diff")


def shape_of(router: Router | Mapping) -> tuple[int, int]:
    """(blocks, heads per block) of a router, or of the "config" of its router.json (no weights needed): what pairs
    one router's heads with another's."""
    config = router if isinstance(router, Mapping) else router.model.config.to_dict()
    return int(config["n_blocks"]), int(config["h"])


def shape_mismatch(router_a: Router | Mapping, router_b: Router | Mapping) -> str | None:
    """Why the two routers' heads cannot be paired (one readable line), or None when they have as many blocks and
    heads per block. Routers or their router.json configs."""
    (la, ha), (lb, hb) = shape_of(router_a), shape_of(router_b)
    if (la, ha) == (lb, hb):
        return None
    return (f"the routers have different shapes (A: {la} block(s) of {ha} heads, B: {lb} block(s) of {hb} heads), "
            "so their heads cannot be paired; per-head comparison needs routers of the same shape")


def check_same_shape(router_a: Router, router_b: Router) -> None:
    """ValueError with `shape_mismatch`'s line unless both routers have as many blocks and heads per block."""
    problem = shape_mismatch(router_a, router_b)
    if problem:
        raise ValueError(problem)


@dataclass(frozen=True)
class SharedReading:
    """One ticket as both routers read it: the same tokens, each router's encoding of them (<unk> where its
    vocabulary lacks the word)."""

    tokens: list[str]
    a: Encoded
    b: Encoded


def shared_reading(router_a: Router, router_b: Router, text: str) -> SharedReading:
    """The ticket's first min(n_a, n_b) tokens, the ones both routers read, with each router's ids; ValueError for a
    ticket with no token."""
    enc_a, enc_b = router_a.encode(text), router_b.encode(text)
    n = min(len(enc_a.ids), len(enc_b.ids))
    if enc_a.tokens[:n] != enc_b.tokens[:n]:          # one tokenizer: only a changed tokenizer could break this
        raise ValueError("the two routers tokenize this ticket differently; their positions cannot be aligned")
    return SharedReading(enc_a.tokens[:n], _first(enc_a, n), _first(enc_b, n))


def _first(enc: Encoded, n: int) -> Encoded:
    """The encoding cut to its first n tokens (as the router would read a ticket that ends there)."""
    ids = enc.ids[:n]
    return replace(enc, tokens=enc.tokens[:n], ids=ids, unknown=sum(i == UNK_ID for i in ids))


def jensen_shannon(p: Tensor, q: Tensor) -> Tensor:
    """Jensen–Shannon divergence in nats along the last axis, ½ KL(p ‖ m) + ½ KL(q ‖ m) with m = ½ (p + q),
    summed in float64: ½ Σ_j [p_j log(2 p_j / (p_j + q_j)) + q_j log(2 q_j / (p_j + q_j))], where every key's term
    is ≥ 0 (no cancellation between large entropies) and 0 · log 0 counts as 0, so zero weights (padding keys) add
    nothing. Symmetric, 0 for p = q, at most ln 2."""
    import torch

    s = (p + q).clamp_min(torch.finfo(p.dtype).tiny)
    terms = torch.xlogy(p, 2 * p / s)
    terms += torch.xlogy(q, 2 * q / s)
    return (0.5 * terms.sum(-1, dtype=torch.float64)).clamp(0.0, LN2)


def _chunks(lengths: Sequence[int], cells_per_token2: int) -> list[list[int]]:
    """Ticket indices sorted by length, cut into batches of at most CHUNK_MAX_TICKETS tickets and CHUNK_CELLS
    attention cells (padding stays small: neighbours have about the same length)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    chunks, current = [], []
    for i in order:
        n = lengths[i]                                 # the longest so far: the order is by length
        if current and (len(current) + 1 > CHUNK_MAX_TICKETS or (len(current) + 1) * cells_per_token2 * n * n
                        > CHUNK_CELLS):
            chunks.append(current)
            current = []
        current.append(i)
    if current:
        chunks.append(current)
    return chunks


def _patterns(router: Router, ids: Tensor, is_pad: Tensor) -> Tensor:
    """Every block's attention weights (B, blocks, h, n, n) of a padded batch, from the router's named internals."""
    from ticketnet.lens.inspection import stack_blocks

    _, cache = router.run_with_cache(ids, is_pad)
    return stack_blocks(cache, "pattern", router.n_blocks)


def attention_divergence(router_a: Router, router_b: Router, texts: Sequence[str]) -> pd.DataFrame:
    """How much each head's attention changed between two routers of the same shape over the tickets `texts`.

    For ticket t, block l, head k and each of its real (non-padding) query rows i, JSD(A's row i, B's row i) over
    the keys (`jensen_shannon`, nats); a ticket's value is the mean over its n_t query rows, and a head's `jsd` is
    the mean of those over the tickets, so every ticket weighs the same whatever its length:
    jsd(l, k) = (1/T) Σ_t (1/n_t) Σ_i JSD(A_t[l, k, i, :], B_t[l, k, i, :]). Each router reads the tokens both
    read (`shared_reading`). The tickets go through each router in batches sorted by length and padded (padding keys
    get no weight, padding rows are left out), one batched pass of the lens per router.
    Columns: block, head (both 1-based), jsd, tickets. ValueError for routers of different shapes, no tickets, or a
    ticket with no token.
    """
    import torch

    check_same_shape(router_a, router_b)
    if not len(texts):
        raise ValueError("need at least one ticket to compare the routers' attention on")
    with torch.inference_mode():
        return _divergence(router_a, router_b, texts)


def _divergence(router_a: Router, router_b: Router, texts: Sequence[str]) -> pd.DataFrame:
    import torch

    readings = [shared_reading(router_a, router_b, t) for t in texts]
    n_blocks, h = shape_of(router_a)
    total = torch.zeros(n_blocks, h, dtype=torch.float64)
    for chunk in _chunks([len(r.tokens) for r in readings], n_blocks * h):
        ids_a, is_pad = router_a.batch([readings[i].a for i in chunk])
        ids_b, _ = router_b.batch([readings[i].b for i in chunk])
        js = jensen_shannon(_patterns(router_a, ids_a, is_pad), _patterns(router_b, ids_b, is_pad))  # (B, L, h, n)
        real = (~is_pad).double()[:, None, None, :]                                                 # (B, 1, 1, n)
        per_ticket = (js * real).sum(-1) / real.sum(-1)                                             # (B, L, h)
        total += per_ticket.sum(0)
    mean = (total / len(readings)).numpy()
    return pd.DataFrame([(l + 1, k + 1, float(mean[l, k]), len(readings)) for l in range(n_blocks) for k in range(h)],
                        columns=list(DIVERGENCE_COLUMNS))


def head_importance_on(router: Router, texts: Sequence[str], teams: Sequence[str], chunk_size: int = 128,
                       progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """The existing head importance (`ticketnet.interpret.methods.heads.head_importance_by_length`, target: the true
    team) of one router over the tickets whose true team (`teams`, one per text) it knows: block, head, accuracy,
    accuracy_drop, support_logit_diff, support_prob; `progress(done, total)` after each chunk. ValueError when it
    knows none of them."""
    from ticketnet.interpret.methods.heads import head_importance_by_length

    own = list(router.teams)
    keep = [i for i, team in enumerate(teams) if team in own]
    if not keep:
        raise ValueError("the router knows none of these tickets' teams; its head importance cannot be measured here")
    return head_importance_by_length(router, [router.encode(texts[i]).ids for i in keep],
                                     [own.index(teams[i]) for i in keep], chunk_size, progress, pad_id=router.pad_id)


def head_changes(divergence: pd.DataFrame, importance_a: pd.DataFrame | None,
                 importance_b: pd.DataFrame | None) -> pd.DataFrame:
    """`attention_divergence` with each head's importance in either router beside it, where known: columns
    block, head, jsd, tickets, then accuracy_drop_a, support_logit_diff_a, accuracy_drop_b, support_logit_diff_b
    (absent for a router whose importance is None)."""
    out = divergence.copy()
    for suffix, importance in (("a", importance_a), ("b", importance_b)):
        if importance is None:
            continue
        part = importance[["block", "head", *IMPORTANCE_MEASURES]].rename(
            columns={m: f"{m}_{suffix}" for m in IMPORTANCE_MEASURES})
        out = out.merge(part, on=["block", "head"], how="left", validate="one_to_one")
    return out


@dataclass(frozen=True)
class DeletionAgreement:
    """Both routers' deletion effects on one ticket, each toward its own predicted team, and their rank agreement."""

    tokens: list[str]
    support_a: np.ndarray     # (n,) router A's support for team_a of each token: score − score with it deleted
    support_b: np.ndarray     # (n,) the same for router B and team_b
    team_a: str               # router A's predicted team on the ticket
    team_b: str
    confidence_a: float       # p(team_a) from router A
    confidence_b: float
    unit: str                 # "logit_diff" or "prob"
    tau: float                # Kendall τ-b between support_a and support_b; nan when either is constant

    def frame(self) -> pd.DataFrame:
        """position, token, support_a, support_b: one row per token."""
        return pd.DataFrame({"position": range(len(self.tokens)), "token": self.tokens,
                             "support_a": self.support_a, "support_b": self.support_b})


def deletion_agreement(router_a: Router, router_b: Router, text: str, unit: str = "logit_diff") -> DeletionAgreement:
    """Each router's deletion effect on the ticket toward its own predicted team (`counterfactual_probs` and
    `removal_support`: support = score with the token − score with it deleted, in `unit`), on the tokens both read
    (`shared_reading`), and Kendall τ between the two rankings of the tokens. Routers of any shapes and team sets.
    ValueError for a ticket with fewer than two shared tokens (deleting the only token leaves nothing to route)."""
    import torch

    from ticketnet.interpret.methods.removal import counterfactual_probs, removal_support
    from ticketnet.interpret.metrics.agreement import kendall_tau

    reading = shared_reading(router_a, router_b, text)
    if len(reading.tokens) < 2:
        raise ValueError("deletion effects need a ticket of at least two tokens")
    out = {}
    for key, router, enc in (("a", router_a, reading.a), ("b", router_b, reading.b)):
        cf = counterfactual_probs(router.model, torch.tensor(enc.ids, dtype=torch.long))
        target = int(cf.base.argmax())
        out[key] = (removal_support(cf.base, cf.removed, target, unit).double().numpy(), router.teams[target],
                    float(cf.base[target]))
    (sa, ta, ca), (sb, tb, cb) = out["a"], out["b"]
    return DeletionAgreement(reading.tokens, sa, sb, ta, tb, ca, cb, unit, kendall_tau(sa, sb))
