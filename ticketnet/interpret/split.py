"""A whole split at once: τ of every attention signal against deletion effects, and AOPC, one row per ticket."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import pandas as pd
import torch
from torch import Tensor, nn

from ticketnet._runtime.parallel import share_out
from ticketnet.interpret.metrics.agreement import kendall_taus, random_signal, random_tau_baseline
from ticketnet.interpret.methods.attention_signals import attention_signals
from ticketnet.interpret.methods.counterfactual import check_eval, counterfactual_batch
from ticketnet.interpret.metrics.eraser import FRACTIONS, eraser_plan, unique_rows
from ticketnet.interpret.metrics.evidence import average_precision, evidence_mask
from ticketnet.interpret.methods.removal import probability_drop
from ticketnet.nn.batching import length_chunks
from ticketnet.lens.inspection import run_with_cache, stack_blocks
from ticketnet.nn.transformer import pad_batch


# A group of tickets holds its attention maps and every ticket's n deletions at once, so its memory grows with
# tickets·n²: 256 tickets up to 64 tokens, fewer above (26 at 199 tokens), and a worker's peak stops depending on
# the longest tickets its corpus happens to hold.
GROUP_CELLS = 256 * 64 * 64


def _batched_probs(model: nn.Module, seqs: list[list[int]], max_tokens: int = 8192,
                   max_cells: int = 1 << 20, workers: int | None = None) -> Tensor:
    """Probabilities (len(seqs), C) of many id lists: distinct ones only, sorted by length so chunks pad
    little. A chunk holds at most `max_tokens` padded tokens and `max_cells` rows·n² attention cells: small
    chunks stay in cache and run faster per token on CPU than one huge batch, and long rows stay bounded.
    Chunks are independent, so `workers` threads (default: torch's thread count) share them out."""
    unique, where = unique_rows(seqs)
    chunks = length_chunks([len(u) for u in unique], max(len(unique), 1), max_cells=max_cells, max_tokens=max_tokens)
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
PHRASE_SIGNALS: tuple[str, ...] = ("phrase deletion", "phrase shapley")
EVIDENCE_SIGNALS: tuple[str, ...] = ("removal", "rollout", "mean attention b1", "mean attention b2", "random",
                                     *PHRASE_SIGNALS)


def _phrase_signals(model: nn.Module, ids: Tensor, text: str, who: int, n_samples: int, seed: int) -> dict[str, Tensor]:
    """Token scores (n,) from the ticket's phrases: each token carries its phrase's support for the target in logit
    difference (ticket − phrase deleted), and its phrase's Shapley value (exact up to 10 phrases)."""
    from ticketnet.interpret.interventions.phrases import phrase_deletions, split_phrases, token_scores
    from ticketnet.interpret.interventions.shapley import phrase_shapley

    phrases = split_phrases(text, ids.numel())
    singles = phrase_deletions(model, ids, phrases, who, pairs=False)
    support = singles[singles.kind == "single"].support_logit_diff.to_numpy()
    shap = phrase_shapley(model, ids, phrases, who, n_samples=n_samples, seed=seed)
    return {"phrase deletion": token_scores(phrases, support), "phrase shapley": token_scores(phrases, shap.values)}


def _evidence_columns(text: str, evidence: str, n: int, signals: Mapping[str, Tensor]) -> dict[str, float]:
    """`auprc <signal>`: average precision of each signal against the gold evidence tokens; nan without evidence."""
    nan = {f"auprc {k}": float("nan") for k in signals}
    if not (evidence or "").strip():
        return nan
    try:
        gold = evidence_mask(text, n, evidence)
    except ValueError:
        return nan
    return {f"auprc {k}": average_precision(v, gold) for k, v in signals.items()}


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
                    group_size: int = 256, phrases: bool = False, shapley_samples: int = 16,
                    group_cells: int = GROUP_CELLS) -> pd.DataFrame:
    """One row per ticket of `rows` (dicts with ticket_id, text and optionally team): how attention agrees
    with deletion effects and how faithful each signal's top tokens are.

    Columns: ticket_id, n, predicted, label, `tau <signal>` (Kendall τ vs removal) for rollout, mean
    attention per block and every head ("b2 h1"), `tau random` (one random ranking per ticket: over the
    split, the chance distribution), `comprehensiveness <signal>` / `sufficiency <signal>` (AOPC over
    `fractions`) for `eraser_signals` (None: every attention signal as well, about 2.5× the work), and
    `disagreement` = (1 − τ(rollout, removal)) / 2 in [0, 1], high where rollout ranks tokens against
    their effect. `target` is "predicted" or "label": the team whose probability is followed. Tickets go
    `group_size` at a time (fewer when long: at most `group_cells` tickets·n²), similar lengths together, every
    group's variants in length-sorted batches;
    `progress(done, total)` is called after each group. One-token tickets get nan scores.

    phrases=True adds, after the columns above (which stay as they are), the phrase signals (`phrase deletion`:
    each token scored by its phrase's drop in the target's logit difference when deleted; `phrase shapley`: by its
    phrase's Shapley value, exact up to 10 phrases, else `shapley_samples` Captum orders) with their AOPC columns,
    and `auprc <signal>` (average precision against the ticket's `evidence`) for removal, rollout, mean attention
    per block, random and both phrase signals; nan where a ticket has no evidence.
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
                            group_size, phrases=phrases, shapley_samples=shapley_samples, group_cells=group_cells)
    return _split_frame(results, model.config.n_blocks, model.config.h, eraser_signals, phrases)


# What `split_records` hands to its `on_ticket` callback for each ticket: its place in `rows`, its record (still
# missing the AOPC columns), p(every team) of the ticket as written (C,), the deletion effect on the followed
# team (n,) or None for a one-token ticket, and its attention signals (name -> (n,)).
OnTicket = Callable[[int, dict, Tensor, "Tensor | None", dict], None]


def split_records(router, rows: Sequence[Mapping[str, str]], ids: Sequence[Sequence[int]],
                  progress: Callable[[int, int], None] | None = None, target: str = "predicted",
                  fractions: Sequence[float] = FRACTIONS, eraser_signals: Sequence[str] | None = SPLIT_ERASER_SIGNALS,
                  group_size: int = 256, on_ticket: OnTicket | None = None, seed_offset: int = 0,
                  phrases: bool = False, shapley_samples: int = 16, group_cells: int = GROUP_CELLS) -> list[dict]:
    """The work of `interpret_split` on already encoded tickets (`ids`, one list per row, checked by the caller):
    one record per row. Shared with the corpus scan, which needs the same numbers plus what `on_ticket` keeps
    (confidence, top tokens, per-token sums); `eraser_signals=()` skips ERASER. The random baseline of row i is
    seeded by `seed_offset + i`, its place in the whole input, so a slice of a split draws what the split draws."""
    model = router.model
    teams = list(router.teams)
    results: list[dict] = [{} for _ in ids]
    L = model.config.n_blocks
    done = 0
    for group in length_chunks([len(e) for e in ids], group_size, group_cells):   # similar lengths share a batch
        with torch.inference_mode():
            _, cache = run_with_cache(model, *pad_batch([list(ids[i]) for i in group]))
            patterns = stack_blocks(cache, "pattern", L)                     # (G, L, h, n, n)
            # Every ticket and its deletions: the PyTorch forward gives the base probability and the effects.
            seqs, starts = [], []
            for i in group:
                starts.append(len(seqs))
                seqs.extend(_deletion_rows(torch.tensor(ids[i])))
            probs = _batched_probs(model, seqs)
            plans, eseqs, pplans, pseqs = [], [], [], []
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
                    everything = {**sig, "removal": effect, "random": random_signal(n, seed)}
                    if phrases:
                        extra = _phrase_signals(model, torch.tensor(ids[i]), rows[i]["text"], who,
                                                shapley_samples, seed=seed)
                        everything.update(extra)
                        # Their ERASER variants go through their own batches: mixed into the usual ones they would
                        # change the batch composition and so the last bits of the existing columns.
                        pplan = eraser_plan(torch.tensor(ids[i]), extra, fractions)
                        pplans.append((i, pplan, len(pseqs), who, s0))
                        pseqs.extend(s for *_, removed, kept in pplan for s in (removed, kept))
                        rec.update(_evidence_columns(rows[i]["text"], rows[i].get("evidence", ""), n,
                                                     {k: everything[k] for k in EVIDENCE_SIGNALS}))
                    if eraser_signals is None or len(eraser_signals):
                        chosen = everything if eraser_signals is None else {k: everything[k] for k in eraser_signals}
                        if eraser_signals is None:
                            chosen = {k: v for k, v in chosen.items() if k not in PHRASE_SIGNALS}
                        plan = eraser_plan(torch.tensor(ids[i]), chosen, fractions)
                        plans.append((i, plan, len(eseqs), who, s0))
                        eseqs.extend(s for *_, removed, kept in plan for s in (removed, kept))
                rec["disagreement"] = (1 - rec.get("tau rollout", float("nan"))) / 2
                results[i] = rec
                if on_ticket is not None:
                    on_ticket(i, rec, probs[s0], effect, sig)
            eprobs = _batched_probs(model, eseqs) if eseqs else None
            pprobs = _batched_probs(model, pseqs) if pseqs else None
        for i, plan, first, who, s0 in plans:
            results[i].update(_aopc_of_plan(plan, eprobs[first : first + 2 * len(plan), who], float(probs[s0, who])))
        for i, plan, first, who, s0 in pplans:
            results[i].update(_aopc_of_plan(plan, pprobs[first : first + 2 * len(plan), who], float(probs[s0, who])))
        done += len(group)
        if progress is not None:
            progress(done, len(ids))
    return results


def _split_frame(results: list[dict], L: int, h: int, eraser_signals: Sequence[str] | None,
                 phrases: bool = False) -> pd.DataFrame:
    """The split's rows with a fixed column order, whatever ticket came first (one-token rows lack most)."""
    attn = ["rollout", *(f"mean attention b{b + 1}" for b in range(L)),
            *(f"b{b + 1} h{i + 1}" for b in range(L) for i in range(h))]
    aopc_names = [*attn, "removal", "random"] if eraser_signals is None else list(eraser_signals)
    columns = ["ticket_id", "n", "predicted", "label", *(f"tau {a}" for a in attn), "tau random",
               *(f"{m} {a}" for a in aopc_names for m in ("comprehensiveness", "sufficiency")), "disagreement"]
    if phrases:                                                        # after the usual columns, never among them
        columns += [*(f"{m} {a}" for a in PHRASE_SIGNALS for m in ("comprehensiveness", "sufficiency")),
                    *(f"auprc {a}" for a in EVIDENCE_SIGNALS)]
    return pd.DataFrame(results, columns=columns)


SPLIT_METRICS: tuple[str, ...] = ("tau", "comprehensiveness", "sufficiency")


def split_long(frame: pd.DataFrame) -> pd.DataFrame:
    """`interpret_split`'s wide table as long rows: ticket_id, signal, metric (tau, comprehensiveness,
    sufficiency), value; one-token tickets' missing values are dropped."""
    parts = []
    for metric in SPLIT_METRICS:
        prefix = metric + " "
        cols = [c for c in frame.columns if c.startswith(prefix)]
        long = frame.melt(id_vars=["ticket_id"], value_vars=cols, var_name="signal", value_name="value")
        long["signal"] = long["signal"].str.slice(len(prefix))
        long.insert(2, "metric", metric)
        parts.append(long)
    out = pd.concat(parts, ignore_index=True)
    return out.dropna(subset=["value"]).reset_index(drop=True)


def mean_aopc(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean AOPC comprehensiveness and sufficiency per signal over a split: signal, comprehensiveness,
    sufficiency, in the order the split table lists the signals."""
    long = split_long(frame)
    long = long[long["metric"] != "tau"]
    order = list(dict.fromkeys(long["signal"]))
    means = long.pivot_table(index="signal", columns="metric", values="value", aggfunc="mean")
    means = means.reindex(order).reset_index()
    means.columns.name = None
    return means[["signal", "comprehensiveness", "sufficiency"]]
