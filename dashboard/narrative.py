"""Plain sentences about the ticket on screen, from its numbers: what attention and effect say, and what they cannot."""

# Pure functions (tables and arrays in, strings out) so they are tested without Streamlit.
# The sentences are plain text with tokens in quotes; pages render them with Markdown escaping.

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

SMALL_EFFECT = 0.05      # a probability change below this counts as "little"


def _np(x) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=np.float64)


def _rank_desc(values: np.ndarray, i: int) -> int:
    """1-based rank of values[i] from the top (ties share the better rank)."""
    return int((values > values[i]).sum()) + 1


def strongest_link(patterns, query_row: int) -> tuple[int, int, int, float]:
    """(block, head, key position, weight) of the largest weight the query row puts on another token, 1-based
    block and head. Reading itself is skipped unless the ticket has one token."""
    w = _np(patterns)[:, :, query_row, :].copy()                 # (L, h, n)
    if w.shape[-1] > 1:
        w[:, :, query_row] = -1.0
    b, h, k = np.unravel_index(int(np.argmax(w)), w.shape)
    return int(b) + 1, int(h) + 1, int(k), float(w[b, h, k])


def _change(drop: float, team: str) -> str:
    if drop >= 0:
        return f"lowers p({team}) by {drop:.2f}"
    return f"raises p({team}) by {-drop:.2f}"


def statements(per_token: pd.DataFrame, patterns, tokens: Sequence[str], team: str, query_row: int,
               agreement: pd.DataFrame | None = None, random_tau=None, signal: str = "rollout") -> list[str]:
    """A few sentences tying attention to effect on this ticket. `per_token` has a ``removal`` column
    (drop in p(team) when the token is deleted) and the `signal` column; `patterns` is (L, h, n, n)."""
    n = len(tokens)
    out: list[str] = []
    if "removal" not in per_token.columns or n < 2:
        out.append("This ticket has a single token, so there is no deletion to compare attention with: the "
                   "heatmaps show where attention goes, but nothing here tells whether it matters.")
        return out
    effect = per_token["removal"].to_numpy(dtype=np.float64)
    order_effect = np.argsort(-effect, kind="stable")

    # 1. The query row's strongest link, and what deleting the token it reads does.
    b, h, k, w = strongest_link(patterns, query_row)
    q_tok, k_tok = tokens[query_row], tokens[k]
    rank = f"(rank {_rank_desc(effect, k)} of {n} by effect)"
    if abs(effect[k]) < SMALL_EFFECT:
        out.append(f"Head {h} of block {b} puts {w:.2f} of '{q_tok}''s weight on '{k_tok}', yet deleting '{k_tok}' "
                   f"changes p({team}) by only {abs(effect[k]):.2f} {rank}.")
    else:
        out.append(f"Head {h} of block {b} puts {w:.2f} of '{q_tok}''s weight on '{k_tok}', and deleting '{k_tok}' "
                   f"{_change(effect[k], team)} {rank}.")

    # 2. The token whose deletion matters most, and where the chosen signal ranks it.
    top = int(order_effect[0])
    if signal in per_token.columns:
        s = per_token[signal].to_numpy(dtype=np.float64)
        out.append(f"Deleting '{tokens[top]}' moves the prediction most: it {_change(effect[top], team)}. "
                   f"{signal.capitalize()} ranks '{tokens[top]}' {_rank_desc(s, top)} of {n}.")
        s_top = int(np.argmax(s))
        if s_top != top:
            out.append(f"{signal.capitalize()} gives its largest share ({s[s_top]:.2f}) to '{tokens[s_top]}', whose "
                       f"deletion {_change(effect[s_top], team)} (rank {_rank_desc(effect, s_top)} of {n} by effect).")

    # 3. Rank agreement against chance.
    if agreement is not None and len(agreement) and signal in set(agreement["signal"]):
        tau = float(agreement.loc[agreement["signal"] == signal, "kendall_tau"].iloc[0])
        r = _np(random_tau) if random_tau is not None else np.empty(0)
        if np.isnan(tau):
            out.append(f"{signal.capitalize()} is constant on this ticket, so its ranking says nothing.")
        elif r.size:
            lo, hi = np.nanpercentile(r, [5, 95])
            inside = lo <= tau <= hi
            out.append(f"Over all {n} tokens, {signal} agrees with the deletion effect at Kendall τ = {tau:.2f}; "
                       f"90% of random orderings land between {lo:.2f} and {hi:.2f}, so this is "
                       + ("within chance: on this ticket it says little about which words mattered."
                          if inside else ("better than chance." if tau > hi else "worse than chance: it ranks "
                                          "tokens against their effect.")))
        else:
            out.append(f"Over all {n} tokens, {signal} agrees with the deletion effect at Kendall τ = {tau:.2f}.")

    out.append("What these numbers do not show: deleting one token at a time misses words that matter only "
               "together (a 'not' with the team it negates), deletion also shifts every later position, and an "
               "attention weight says where a head reads, not what the block does with what it read. Agreement on "
               "one ticket is no rule for the router; the split-wide section below is the broader test.")
    return out


def ig_completeness(change: float, delta: float, steps: int, team: str) -> str:
    """One sentence on how well the integrated gradients add up: their own error, next to their chart."""
    share = abs(delta) / abs(change) if change else float("inf")
    where = f"{share:.2%} of it" if share != float("inf") else "the change is zero"
    return (f"Integrated gradients ({steps} path steps) should add up to p({team} | ticket) − p({team} | all "
            f"<pad>) = {change:+.4f}; they miss it by {abs(delta):.1e} ({where}).")
