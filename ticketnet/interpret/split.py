"""A whole split at once: τ of every attention signal against deletion effects, and AOPC, one row per ticket."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import pandas as pd
import torch
from torch import Tensor, nn

from ticketnet._runtime.parallel import share_out
from ticketnet.interpret.agreement import kendall_taus, random_signal, random_tau_baseline
from ticketnet.interpret.attention_signals import attention_signals
from ticketnet.interpret.counterfactual import check_eval, counterfactual_batch
from ticketnet.interpret.eraser import FRACTIONS, eraser_plan, unique_rows
from ticketnet.interpret.removal import probability_drop
from ticketnet.nn.batching import length_chunks
from ticketnet.nn.lens import run_with_cache, stack_blocks
from ticketnet.nn.transformer import pad_batch


def _batched_probs(model: nn.Module, seqs: list[list[int]], max_tokens: int = 8192,
                   max_cells: int = 1 << 20, workers: int | None = None) -> Tensor:
    """Probabilities (len(seqs), C) of many id lists: distinct ones only, sorted by length so chunks pad
    little. A chunk holds at most `max_tokens` padded tokens and `max_cells` rows·n² attention cells: small
    chunks stay in cache and run faster per token on CPU than one huge batch, and long rows stay bounded.
    Chunks are independent, so `workers` threads (default: torch's thread count) share them out."""
    unique, where = unique_rows(seqs)
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
    results = split_records(router, rows, [e.ids for e in encoded], progress, target, fractions, eraser_signals,
                            group_size)
    return _split_frame(results, model.config.n_blocks, model.config.h, eraser_signals)


# What `split_records` hands to its `on_ticket` callback for each ticket: its place in `rows`, its record (still
# missing the AOPC columns), p(every team) of the ticket as written (C,), the deletion effect on the followed
# team (n,) or None for a one-token ticket, and its attention signals (name -> (n,)).
OnTicket = Callable[[int, dict, Tensor, "Tensor | None", dict], None]


def split_records(router, rows: Sequence[Mapping[str, str]], ids: Sequence[Sequence[int]],
                  progress: Callable[[int, int], None] | None = None, target: str = "predicted",
                  fractions: Sequence[float] = FRACTIONS, eraser_signals: Sequence[str] | None = SPLIT_ERASER_SIGNALS,
                  group_size: int = 256, on_ticket: OnTicket | None = None, seed_offset: int = 0) -> list[dict]:
    """The work of `interpret_split` on already encoded tickets (`ids`, one list per row, checked by the caller):
    one record per row. Shared with the corpus scan, which needs the same numbers plus what `on_ticket` keeps
    (confidence, top tokens, per-token sums); `eraser_signals=()` skips ERASER. The random baseline of row i is
    seeded by `seed_offset + i`, its place in the whole input, so a slice of a split draws what the split draws."""
    model = router.model
    teams = list(router.teams)
    results: list[dict] = [{} for _ in ids]
    L = model.config.n_blocks
    done = 0
    for group in length_chunks([len(e) for e in ids], group_size):   # similar lengths share a batch
        with torch.inference_mode():
            _, cache = run_with_cache(model, *pad_batch([list(ids[i]) for i in group]))
            patterns = stack_blocks(cache, "pattern", L)                     # (G, L, h, n, n)
            # Every ticket and its deletions: the PyTorch forward gives the base probability and the effects.
            seqs, starts = [], []
            for i in group:
                starts.append(len(seqs))
                seqs.extend(_deletion_rows(torch.tensor(ids[i])))
            probs = _batched_probs(model, seqs)
            plans, eseqs = [], []
            for gi, i in enumerate(group):
                n, s0 = len(ids[i]), starts[gi]
                predicted = int(probs[s0].argmax())
                who = predicted if target == "predicted" else teams.index(rows[i]["team"])
                label = rows[i].get("team")
                rec = {"ticket_id": rows[i].get("ticket_id"), "n": n, "predicted": teams[predicted],
                       "label": label if label in teams else None}
                sig = attention_signals(patterns[gi, :, :, :n, :n])
                effect = None
                if n >= 2:
                    effect = probability_drop(probs[s0], probs[s0 + 1 : s0 + 1 + n], who)
                    taus = kendall_taus(torch.stack(list(sig.values())), effect).tolist()
                    rec.update({f"tau {name}": t for name, t in zip(sig, taus)})
                    # Seeded by the ticket's place in the input, so its draw does not depend on the other tickets.
                    seed = seed_offset + i
                    rec["tau random"] = float(random_tau_baseline(effect, 1, seed=seed)[0])
                    if eraser_signals is None or len(eraser_signals):
                        everything = {**sig, "removal": effect, "random": random_signal(n, seed)}
                        chosen = everything if eraser_signals is None else {k: everything[k] for k in eraser_signals}
                        plan = eraser_plan(torch.tensor(ids[i]), chosen, fractions)
                        plans.append((i, plan, len(eseqs), who, s0))
                        eseqs.extend(s for *_, removed, kept in plan for s in (removed, kept))
                rec["disagreement"] = (1 - rec.get("tau rollout", float("nan"))) / 2
                results[i] = rec
                if on_ticket is not None:
                    on_ticket(i, rec, probs[s0], effect, sig)
            eprobs = _batched_probs(model, eseqs) if eseqs else None
        for i, plan, first, who, s0 in plans:
            results[i].update(_aopc_of_plan(plan, eprobs[first : first + 2 * len(plan), who], float(probs[s0, who])))
        done += len(group)
        if progress is not None:
            progress(done, len(ids))
    return results


def _split_frame(results: list[dict], L: int, h: int, eraser_signals: Sequence[str] | None) -> pd.DataFrame:
    """The split's rows with a fixed column order, whatever ticket came first (one-token rows lack most)."""
    attn = ["rollout", *(f"mean attention b{b + 1}" for b in range(L)),
            *(f"b{b + 1} h{i + 1}" for b in range(L) for i in range(h))]
    aopc_names = [*attn, "removal", "random"] if eraser_signals is None else list(eraser_signals)
    columns = ["ticket_id", "n", "predicted", "label", *(f"tau {a}" for a in attn), "tau random",
               *(f"{m} {a}" for a in aopc_names for m in ("comprehensiveness", "sufficiency")), "disagreement"]
    return pd.DataFrame(results, columns=columns)
