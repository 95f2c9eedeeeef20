"""One ticket's signals scored for a target team: τ (ρ, top-3) against removal, ERASER, evidence, as long rows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd
import torch
from torch import Tensor

from ticketnet.interpret import signals as sig
from ticketnet.interpret.metrics.agreement import kendall_taus, spearmans, top_k_overlap
from ticketnet.interpret.metrics.eraser import ERASER_COLUMNS, FRACTIONS, eraser_plan
from ticketnet.interpret.metrics.evidence import evidence_recovery

Row = tuple  # (ticket_id, signal, metric, value), the columns of signals.LONG_COLUMNS


@dataclass
class TicketScores:
    """What `score_ticket` found, and the ERASER variants it still needs p(target) of: run `sequences()` through the
    model (the caller batches them, across tickets if it likes) and hand the probabilities to `eraser_rows`."""

    ticket_id: object
    rows: list[Row]              # τ (and ρ, top-3 overlap) and evidence rows, complete
    plan: list[tuple]            # eraser_plan: (signal, fraction, k, x∖r, r) per signal and fraction

    def sequences(self) -> list[list[int]]:
        """x∖r then r, for every entry of the plan: 2·len(plan) id lists."""
        return [s for *_, removed, kept in self.plan for s in (removed, kept)]

    def eraser_table(self, p_target: Tensor, base: Tensor) -> pd.DataFrame:
        """Comprehensiveness and sufficiency per signal and fraction (signal, fraction, k, comprehensiveness,
        sufficiency) from p(target) (2·len(plan),) of `sequences()` and p(target | ticket), subtracted in their
        dtype."""
        rows = [(name, f, k, float(base - p_target[2 * j]), float(base - p_target[2 * j + 1]))
                for j, (name, f, k, _, _) in enumerate(self.plan)]
        return pd.DataFrame(rows, columns=list(ERASER_COLUMNS))

    def aopc_rows(self, p_target: Tensor, base: Tensor) -> list[Row]:
        """AOPC rows: each signal's comprehensiveness and sufficiency averaged over the fractions."""
        sums: dict[str, list[float]] = {}
        for j, (name, *_rest) in enumerate(self.plan):
            acc = sums.setdefault(name, [0.0, 0.0, 0])
            acc[0] += float(base - p_target[2 * j])
            acc[1] += float(base - p_target[2 * j + 1])
            acc[2] += 1
        return [row for name, (comp, suff, cnt) in sums.items()
                for row in ((self.ticket_id, name, sig.COMPREHENSIVENESS, comp / cnt),
                            (self.ticket_id, name, sig.SUFFICIENCY, suff / cnt))]


def score_ticket(ticket_id, ids: Tensor, signals: Mapping[str, Tensor], effect: Tensor | None, *,
                 tau: Sequence[str] = (), agreement: Sequence[str] = (), eraser: Sequence[str] = (),
                 evidence: Sequence[str] = (), gold: Tensor | None = None,
                 fractions: Sequence[float] = FRACTIONS) -> TicketScores:
    """Score the ticket `ids` (n,) and its `signals` (name -> (n,)) against the removal `effect` (n,), the drop in
    p(target) when each token is deleted (None: no τ or agreement asked), for the chosen signals of each kind:

    `tau`: Kendall τ (metric TAU); `agreement`: τ, Spearman ρ and top-3 overlap (TAU, SPEARMAN, TOP3_OVERLAP);
    `eraser`: the ERASER plan over `fractions` (n ≥ 2), finished by the caller (`TicketScores`); `evidence`: AP and
    token F1 (AUPRC, TOKEN_F1) against the evidence tokens `gold` (n,) bool, nan rows when `gold` is None. The
    caller batches the ERASER variants as it likes: one ticket's pass, or a whole group of a split.
    """
    rows: list[Row] = []
    taus = [*tau, *agreement]
    if taus and effect is None:
        raise ValueError("τ and agreement are taken against the removal effect: pass it")
    if taus:
        values = kendall_taus(torch.stack([signals[k].double() for k in taus]), effect).tolist()
        rows += [(ticket_id, k, sig.TAU, t) for k, t in zip(taus, values)]
    rhos = spearmans(torch.stack([signals[k].double() for k in agreement]), effect).tolist() if agreement else []
    for k, rho in zip(agreement, rhos):
        rows += [(ticket_id, k, sig.SPEARMAN, rho),
                 (ticket_id, k, sig.TOP3_OVERLAP, top_k_overlap(signals[k], effect, 3))]
    for k in evidence:
        found = ({m: float("nan") for m in sig.EVIDENCE_METRICS} if gold is None
                 else evidence_recovery(signals[k], gold))
        rows += [(ticket_id, k, m, found[m]) for m in sig.EVIDENCE_METRICS]
    plan = eraser_plan(ids, {k: signals[k] for k in eraser}, fractions) if eraser else []
    return TicketScores(ticket_id, rows, plan)
