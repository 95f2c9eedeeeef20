"""Plain sentences about the ticket on screen, from its numbers: what attention and effect say, and what they cannot."""

# Pure functions (tables and arrays in, strings out) so they are tested without Streamlit.
# The sentences are plain text with tokens in quotes; pages render them with Markdown escaping.

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dashboard.text import fmt, md_escape  # fmt: numbers in sentences; the chart builders use it too
from ticketnet.interpret import signals
from ticketnet.interpret.metrics.disagreement import SMALL_EFFECT, SMALL_EFFECTS   # what counts as "little"


# -- numbers and tokens in sentences ------------------------------------------------------------------------------
def team_option(teams: Sequence[str], predicted: int, i: int) -> str:
    """A team as a choice of target: its name, marked when it is the predicted team."""
    return teams[i] + (" (predicted)" if i == predicted else "")


def head_name(k: int) -> str:
    """Head `k` (from 0) as the pages name it (from 1)."""
    return f"head {k + 1}"


def count(n: int, noun: str, plural: str | None = None) -> str:
    """A count with its noun, singular or plural, thousands separated: "1 token", "60,000 tokens"."""
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"


def flips_sentence(fixed: int, broken: int, both_wrong: int) -> str:
    """The Compare page's flips in a sentence, each count agreeing with its noun and verb: "B fixed 1 ticket",
    "1 is wrong in both", "3 are wrong in both"."""
    return (f"B fixed {count(fixed, 'ticket')} (A wrong, B right), broke {broken:,} (A right, B wrong); "
            f"{both_wrong:,} {'is' if both_wrong == 1 else 'are'} wrong in both with different teams.")


def share_text(part: int, whole: int) -> str:
    """A share as a sentence says it: "12%", and "under 1%" for a share that rounds to 0 but is not 0."""
    share = part / whole if whole else 0.0
    if 0 < share < 0.005:
        return "under 1%"
    return f"{share:.0%}"


def unknown_sentence(encoded) -> str:
    """The words of a ticket read as <unk>, counted on the same basis as the unfamiliar flag (word tokens; punctuation
    is always known), each distinct word listed once in ticket order, and other unknown symbols counted apart."""
    unknown_words = len(encoded.unknown_words)
    distinct = encoded.distinct_unknown_words
    listed = ", ".join(distinct[:8]) + (", …" if len(distinct) > 8 else "")
    parts = []
    if unknown_words:
        parts.append(f"{unknown_words:,} of the {count(encoded.words, 'word')} read "
                     f"({share_text(unknown_words, encoded.words)}) {'was' if unknown_words == 1 else 'were'} never "
                     f"seen in training ({listed})")
    others = encoded.unknown - unknown_words
    if others:
        parts.append(f"{count(others, 'other symbol')} {'is' if others == 1 else 'are'} unknown too")
    return "; ".join(parts) + "; they read as <unk>."


def no_evidence_sentence(pick) -> str:
    """Why the evidence-recovery section is empty for a ticket without annotated evidence, in one line."""
    if pick.evidence.strip():
        return ("This ticket's annotated evidence could not be found among the tokens the router read (it lies past "
                "the tokens read, or its offsets do not match the text), so the signals cannot be scored against it.")
    if pick.custom:
        what = "A corpus ticket" if pick.corpus_id else "A typed ticket"
        return (f"{what} has no annotated evidence, so there is nothing to score the signals against; tickets of "
                "the shipped splits carry it.")
    return (f"{pick.ticket_id} has no annotated evidence (its split marks none for it), so there is nothing to score "
            "the signals against.")


def quote(token: str) -> str:
    """A token in typographic quotes, so punctuation tokens read clearly: “'”, “.”, “not”."""
    return f"\u201c{token}\u201d"


def tidy_numbers(df: pd.DataFrame, decimals: int) -> pd.DataFrame:
    """The table with its float columns rounded to `decimals` places and negative zeros made positive, so a cell
    never reads "-0.000" (-0.0001 shown with three decimals)."""
    # One frame made from the columns, not each assigned into a copy (a block per column): half the time. Keyed by
    # position, then named, so repeated column names stay apart.
    out = pd.DataFrame({i: s.round(decimals) + 0.0 if pd.api.types.is_float_dtype(s) else s
                        for i, (_, s) in enumerate(df.items())}, index=df.index)
    out.columns = df.columns
    return out


_PART = {"attn.pattern": "attention weights", "attn.out": "attention output", "resid_post": "output"}


def part_name(name: str) -> str:
    """A model part as the pages name it, blocks counted from 1: "blocks.0.attn.pattern" → "block 1 attention
    weights", "blocks.1.resid_post" → "block 2 output"; other names are returned unchanged."""
    parts = name.split(".", 2)
    if len(parts) == 3 and parts[0] == "blocks" and parts[1].isdigit():
        return f"block {int(parts[1]) + 1} {_PART.get(parts[2], parts[2])}"
    return name


def parity_label(check: str) -> str:
    """A parity row's name with every "blocks.N.part" in it written the pages' way (block N+1)."""
    import re

    return re.sub(r"blocks\.\d+\.[\w.]+", lambda m: part_name(m.group()), check)


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


def score_name(team: str, unit: str = "prob") -> str:
    """The score an effect moves, as a sentence names it: "p(payments)", or "the log-odds of payments"."""
    return f"p({team})" if unit == "prob" else f"the log-odds of {team}"


def _change(drop: float, team: str, unit: str = "prob") -> str:
    if drop >= 0:
        return f"lowers {score_name(team, unit)} by {fmt(drop)}"
    return f"raises {score_name(team, unit)} by {fmt(-drop)}"


def statements(per_token: pd.DataFrame, patterns, tokens: Sequence[str], team: str, query_row: int,
               agreement: pd.DataFrame | None = None, random_tau=None, signal: str = signals.ROLLOUT.name,
               unit: str = "prob") -> list[str]:
    """A few sentences tying attention to effect on this ticket. `per_token` has a ``removal`` column (the
    deletion's support for the team in `unit`: the drop in p(team), or in its log-odds) and the `signal` column;
    `patterns` is (L, h, n, n)."""
    n = len(tokens)
    out: list[str] = []
    if signals.REMOVAL.name not in per_token.columns or n < 2:
        out.append("This ticket has a single token, so there is no deletion to compare attention with: the "
                   "heatmaps show where attention goes, but nothing here tells whether it matters.")
        return out
    effect = per_token[signals.REMOVAL.name].to_numpy(dtype=np.float64)
    order_effect = np.argsort(-effect, kind="stable")
    small, score = SMALL_EFFECTS[unit], score_name(team, unit)

    # 1. The query row's strongest link, and what deleting the token it reads does.
    b, h, k, w = strongest_link(patterns, query_row)
    q_tok, k_tok = quote(tokens[query_row]), quote(tokens[k])
    rank = f"rank {_rank_desc(effect, k)} of {n} by effect"
    if abs(effect[k]) < small:
        out.append(f"Head {h} of block {b} puts {fmt(w)} of the weight of {q_tok} on {k_tok}, yet deleting {k_tok} "
                   f"barely moves {score}: it {_change(effect[k], team, unit)} ({rank}).")
    else:
        out.append(f"Head {h} of block {b} puts {fmt(w)} of the weight of {q_tok} on {k_tok}, and deleting {k_tok} "
                   f"{_change(effect[k], team, unit)} ({rank}).")

    # 2. The token whose deletion matters most, and where the chosen signal ranks it.
    top = int(order_effect[0])
    if signal in per_token.columns:
        s = per_token[signal].to_numpy(dtype=np.float64)
        if abs(effect[top]) < small:
            lead = (f"No single deletion moves {score} by {fmt(small)} or more; the largest effect is "
                    f"deleting {quote(tokens[top])}, which {_change(effect[top], team, unit)}.")
        else:
            lead = f"Deleting {quote(tokens[top])} moves the prediction most: it {_change(effect[top], team, unit)}."
        out.append(f"{lead} {signal.capitalize()} ranks {quote(tokens[top])} {_rank_desc(s, top)} of {n}.")
        s_top = int(np.argmax(s))
        if s_top != top:
            out.append(f"{signal.capitalize()} gives its largest share ({fmt(s[s_top])}) to {quote(tokens[s_top])}, "
                       f"whose deletion {_change(effect[s_top], team, unit)} (rank {_rank_desc(effect, s_top)} of {n} "
                       "by effect).")

    # 3. Rank agreement against chance.
    if agreement is not None and len(agreement) and signal in set(agreement[signals.SIGNAL]):
        tau = float(agreement.loc[agreement[signals.SIGNAL] == signal, signals.KENDALL_TAU].iloc[0])
        r = _np(random_tau) if random_tau is not None else np.empty(0)
        if np.isnan(tau):
            out.append(f"{signal.capitalize()} is constant on this ticket, so its ranking says nothing.")
        elif r.size:
            lo, hi = np.nanpercentile(r, [5, 95])
            inside = lo <= tau <= hi
            out.append(f"Over all {n} tokens, {signal} agrees with the deletion effect at Kendall τ = {fmt(tau)}; "
                       f"90% of random orderings land between {fmt(lo)} and {fmt(hi)}, so this is "
                       + ("within chance: on this ticket it says little about which words mattered."
                          if inside else ("better than chance." if tau > hi else "worse than chance: it ranks "
                                          "tokens against their effect.")))
        else:
            out.append(f"Over all {n} tokens, {signal} agrees with the deletion effect at Kendall τ = {fmt(tau)}.")

    out.append("What these numbers do not show: deleting one token at a time misses words that matter only "
               "together (a “not” with the team it negates), deletion also shifts every later position, and an "
               "attention weight says where a head reads, not what the block does with what it read. Agreement on "
               "one ticket is no rule for the router; the split-wide section below is the broader test.")
    return out


# -- position effects: deletion moves every later token, <unk> replacement does not --------------------------------
POSITION_SHARE = 0.6         # the gap has the common sign on at least this share of the tokens…
POSITION_TOKEN_GAP = 0.02    # …counting a token only when its gap is at least this large…
POSITION_MEDIAN_GAP = 0.05   # …and the median gap over all tokens is at least this large


@dataclass(frozen=True)
class PositionEffect:
    """What `position_effect` found on one ticket."""

    detected: bool
    direction: str               # "raises" or "lowers": what deleting does to p(team) compared with <unk>
    consistent: int              # tokens whose gap has the common sign and is at least POSITION_TOKEN_GAP
    n: int
    median_gap: float            # median over tokens of (deletion drop − replacement drop)
    median_deletion: float       # median drop in p(team) when one token is deleted
    median_replacement: float    # median drop in p(team) when one token is replaced by <unk>


def position_effect(deletion, replacement) -> PositionEffect:
    """Does this ticket's deletion effect measure the positions more than the words?

    Deleting token i also moves every later token one position up; replacing it with <unk> keeps every position.
    The two agree when the word is what matters. Rule (documented, per ticket): gap_i = deletion_i − replacement_i
    (both drops in p(team)); the ticket has a position effect when the median gap is at least POSITION_MEDIAN_GAP in
    size and at least POSITION_SHARE of the tokens have a gap of that same sign and at least POSITION_TOKEN_GAP in
    size. Then the deletion column mostly measures the shift of positions, and the <unk> replacement column is the
    better reading of what each word does. Tickets under 5 tokens are never flagged."""
    d, r = _np(deletion), _np(replacement)
    if d.shape != r.shape or d.ndim != 1:
        raise ValueError(f"deletion and replacement need the same length, got {d.shape} and {r.shape}")
    n = d.size
    if n == 0:
        return PositionEffect(False, "raises", 0, 0, 0.0, 0.0, 0.0)
    gap = d - r
    median_gap = float(np.median(gap))
    sign = 1.0 if median_gap >= 0 else -1.0
    consistent = np.flatnonzero(sign * gap >= POSITION_TOKEN_GAP)
    detected = bool(n >= 5 and abs(median_gap) >= POSITION_MEDIAN_GAP and consistent.size >= POSITION_SHARE * n)
    return PositionEffect(detected, "lowers" if sign > 0 else "raises", int(consistent.size), int(n), median_gap,
                          float(np.median(d)), float(np.median(r)))


def position_effect_message(found: PositionEffect, team: str) -> str | None:
    """A sentence for the page when `found.detected`, else None."""
    if not found.detected:
        return None
    moves = "raises" if found.median_deletion < 0 else "lowers"
    return (f"Position effect on this ticket: deleting a token {moves} p({team}) by a median of "
            f"{fmt(abs(found.median_deletion))}, while replacing the same token with <unk> moves it by a median of "
            f"{fmt(abs(found.median_replacement))}. On {found.consistent} of {found.n} tokens deletion {found.direction} p({team}) more than replacement does, by a median of "
            f"{fmt(abs(found.median_gap))}. Deleting a token shifts every later token one position, and this router "
            "is sensitive to that shift: here the removal column measures positions more than words. Read the "
            "\"unk replacement\" column (it keeps every position) for what each word does.")


def ig_completeness(change: float, delta: float, steps: int, team: str) -> str:
    """One sentence on how well the integrated gradients add up: their own error, next to their chart."""
    share = abs(delta) / abs(change) if change else float("inf")
    where = f"{share:.2%} of it" if share != float("inf") else "the change is zero"
    return (f"Integrated gradients ({steps} path steps) should add up to p({team} | ticket) − p({team} | all "
            f"<pad>) = {change:+.4f}; they miss it by {abs(delta):.1e} ({where}).")


# -- route interventions: units, edge knockout, patching, phrases ---------------------------------------
UNIT_NAMES = signals.UNIT_LABELS     # the library's names of the two units, read without torch


def effect(value: float) -> str:
    """A signed effect as the intervention views print it: `ticketnet.interpret.format_effect`, never "+0.00"."""
    from ticketnet.interpret.interventions.units import format_effect

    return format_effect(value)


def unit_sentence(unit: str, team: str, parts: str = "token, phrase, edge, head", coloured: bool = True,
                  margin: bool = False) -> str:
    """The sign convention and the unit every effect view on the page shows, in words; `parts` what is taken out,
    `coloured` where the charts draw help in red, `margin` where the logit unit is the target's logit minus the best
    other team's (an encoder router's word effects) rather than its log-odds."""
    positive = "positive (red)" if coloured else "positive"
    rule = (f"Every effect is support for {team}: its score with the part ({parts}) minus its score "
            f"without it, so {positive} where the part helps {team} and removing it lowers the score.")
    if unit == "logit_diff" and margin:
        return (f"{rule} Score: the logit margin of {team}, its logit minus the best other team's. Unlike p({team}) "
                "it does not flatten out near 0 or 1, so a small change in a confident prediction stays visible.")
    if unit == "logit_diff":
        return (f"{rule} Score: the logit difference of {team}, log(p / (1 − p)), the log-odds of {team} against every "
                f"other team. Unlike p({team}) it does not flatten out near 0 or 1, so a small change in a confident "
                "prediction stays visible.")
    if unit == "prob":
        return (f"{rule} Score: p({team}), the probability of {team}: easy to read, but flat near 0 and 1, where a "
                "large change in the model's evidence can move it very little.")
    raise ValueError(f"unknown unit {unit!r}")


def tau_text(tau: float) -> str:
    """A Kendall τ as the pages print it; "n/a" when it is undefined (a constant ranking)."""
    return "n/a" if not np.isfinite(tau) else fmt(tau)


def knockout_sentence(tokens: Sequence[str], query: int, head: int, block: int, weights, support, tau: float,
                      unit: str, team: str) -> str:
    """What cutting each edge of one query row does, in words: the edge that matters most against the heaviest one.
    `support` (n,) is ticket − edge cut (positive: the edge helps `team`); head and block 1-based."""
    from ticketnet.interpret.interventions.units import support_title

    w, d = _np(weights), _np(support)
    heavy, strong = int(np.argmax(w)), int(np.argmax(np.abs(d)))
    title = support_title(unit, team)
    q = quote(tokens[query])
    first = (f"In head {head} of block {block}, {q} puts most weight on {quote(tokens[heavy])} ({fmt(w[heavy])}); "
             f"that edge's {title}, from cutting it: {effect(d[heavy])}.")
    if strong != heavy:
        first += (f" The edge whose cut matters most is {q} → {quote(tokens[strong])} (weight {fmt(w[strong])}): "
                  f"{effect(d[strong])}.")
    shown = "undefined (every cut has the same effect)" if np.isnan(tau) else fmt(tau)
    return f"{first} Kendall τ between the row's weights and the edges' support: {shown}."


def redundancy_statements(phrases: Sequence[str], redundant: pd.DataFrame, deletions: pd.DataFrame,
                          teams: Sequence[str]) -> list[str]:
    """Plain words for each pair of phrases that each do nothing alone (the predicted team stays) but flip the
    team deleted together (`redundant_pairs`' table, `phrase_deletions`' table)."""
    out = []
    base_team = teams[int(deletions.loc[deletions.kind == "ticket", "predicted"].iloc[0])]
    for r in redundant.itertuples():
        a, b = int(r.first), int(r.second)
        pair = deletions[(deletions.kind == "pair") & (deletions.phrases.map(tuple) == (a, b))].iloc[0]
        out.append(f"Deleting {quote(phrases[a])} alone leaves the ticket with {base_team}, and so does deleting "
                   f"{quote(phrases[b])} alone; deleting both sends it to {teams[int(pair.predicted)]}. Each phrase "
                   "backs up the other: single deletions miss them, and a reading that credits only one of them is "
                   f"incomplete (interaction {effect(r.interaction)} in logit difference beyond the two single "
                   "deletions).")
    return out


def shapley_sentence(method: str, n_phrases: int, evaluations: int, samples: int, exact_max: int) -> str:
    """How the phrase Shapley values were computed."""
    if method == "exact":
        return (f"Exact Shapley values: all {evaluations} coalitions of the {n_phrases} phrases enumerated (exact up to "
                f"{exact_max} phrases).")
    return (f"Sampled Shapley values: {n_phrases} phrases are more than the {exact_max} enumerated exactly, so "
            f"{samples} random phrase orders were drawn (Captum's ShapleyValueSampling orders, {evaluations} distinct "
            "coalitions sent through the model together, in length-sorted batches); they still add up exactly to the "
            "ticket's value minus the empty ticket's.")


DIRECTION_WORDS = {"a→b": "from the ticket into the edit", "b→a": "from the edit into the ticket"}


def strongest_patches(heads: pd.DataFrame, resid: pd.DataFrame, unit: str, k: int = 2) -> str:
    """A sentence naming the strongest head and residual patches in each direction, by share of the change recovered
    (`contrast_patching`'s tables; share = 1 when the patch alone carries the whole change)."""
    col = f"share_{unit}"

    def strongest(table: pd.DataFrame):
        return table.reindex(table[col].abs().sort_values(ascending=False).index).head(k).itertuples()

    parts = []
    for direction, words in DIRECTION_WORDS.items():
        h = heads[heads.direction == direction].dropna(subset=[col])
        r = resid[(resid.direction == direction) & resid.aligned].dropna(subset=[col])
        if h.empty and r.empty:
            continue
        bits = [f"block {row.block} head {row.head} ({fmt(getattr(row, col))})" for row in strongest(h)]
        bits += [f"the residual stream at {row.layer_name}, position {row.position} {quote(row.token)} "
                 f"({fmt(getattr(row, col))})" for row in strongest(r)]
        parts.append(f"patched {words}: " + ", ".join(bits))
    if not parts:
        return "No position of one run has a partner in the other, so nothing can be patched."
    return ("Strongest patches by share of the change in " + UNIT_NAMES[unit] + " they recover — "
            + "; ".join(parts) + ". A share of 1 means the patch alone turns one run's prediction into the other's.")


def ablation_sentence(table: pd.DataFrame, unit: str, team: str, mode: str) -> str:
    """The head with the largest support for the target on this ticket (`head_ablation`'s table), in words."""
    from ticketnet.interpret.interventions.units import support_column, support_title

    col = support_column(unit)
    top = table.loc[table[col].abs().idxmax()]
    how = "zeros" if mode == "zero" else "its mean output over the valid split"
    small = int((table[col].abs() < 0.1 * abs(top[col])).sum()) if top[col] else len(table)
    return (f"Replacing block {int(top['block'])} head {int(top['head'])} with {how} shows the largest "
            f"{support_title(unit, team)}: {effect(top[col])}. {small} of the {len(table)} heads have less than a "
            "tenth of that, either sign.")


def phrase_signal_sentence(method: str, samples: int) -> str:
    """What the phrase rows of the ERASER and evidence tables are."""
    how = "exact" if method == "exact" else f"sampled over {samples} phrase orders (more than 10 phrases)"
    return ("“phrase deletion” and “phrase shapley” score each token by its phrase: the phrase's support for the "
            f"target in logit difference (ticket − phrase deleted), and the phrase's Shapley value ({how}). The "
            "single-token signals are ranked token by token; these rank whole phrases, as in the split-wide run.")


def patching_intro(value_a: float, value_b: float, unit: str, team: str) -> str:
    """How to read the patching charts: the change to recover, and what a share means."""
    from ticketnet.interpret.interventions.units import support_title

    return (f"The edit moves the {UNIT_NAMES[unit]} of {team} from {fmt(value_a)} (ticket) to {fmt(value_b)} (edit): "
            f"the wording the edit took out has {support_title(unit, team)} {effect(value_a - value_b)}. Each cell: "
            "one activation taken from the other run, and the share of the change between the runs it recovers (1: all "
            "of it; 0: none; negative: the wrong way). A head patch replaces that head's output at every aligned "
            "position; a residual patch replaces one position of one layer.")


def unaligned_sentence(tokens_a: Sequence[str], tokens_b: Sequence[str], a_to_b: Sequence, b_to_a: Sequence,
                       limit: int = 12) -> str | None:
    """The positions with no partner in the other run (grey in the residual heatmaps), or None when all align."""
    def listed(tokens, partner):
        lone = [f"{i}:{t}" for i, (t, j) in enumerate(zip(tokens, partner, strict=True)) if j is None]
        more = f" and {len(lone) - limit} more" if len(lone) > limit else ""
        return ", ".join(lone[:limit]) + more, len(lone)

    a, na = listed(tokens_a, a_to_b)
    b, nb = listed(tokens_b, b_to_a)
    if not na and not nb:
        return None
    parts = []
    if na:
        parts.append(f"{na} of the ticket's tokens have no partner in the edit ({a})")
    if nb:
        parts.append(f"{nb} of the edit's tokens have none in the ticket ({b})")
    return ("Unaligned, drawn grey and never patched: " + "; ".join(parts) + ". Other positions are paired by the "
            "longest common subsequence of the two token lists, words replaced one for one paired too.")


# -- the answer first: why this route, and can it be trusted --------------------------------------------------------
def why_sentence(tokens: Sequence[str], support, team: str, unit: str = "prob", k: int = 3) -> str:
    """Why the router routes to `team`, in one sentence: the `k` tokens whose deletion lowers its score most
    (`support`: each token's deletion as support for `team`, in `unit`), or that no single token carries it."""
    s = _np(support)
    n = len(tokens)
    if n < 2 or s.shape != (n,):
        return f"This ticket has a single token: there is no deletion to say why it goes to {team}."
    order = [int(i) for i in np.argsort(-s, kind="stable")[:k] if s[i] > 0]
    small = SMALL_EFFECTS[unit]
    if not order or s[order[0]] < small:
        return (f"No single word carries the route to {team}: deleting any one of the {n} tokens moves "
                f"{score_name(team, unit)} by under {fmt(small)}, so the prediction rests on many words together.")
    parts = [f"{quote(tokens[i])} ({fmt(s[i])})" for i in order if s[i] >= small]
    words = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return (f"Why {team}: deleting {words} lowers {score_name(team, unit)} most "
            f"({'the word' if len(parts) == 1 else 'the words'} the route rests on).")


def trust_sentence(assessment, team: str) -> str:
    """Whether to trust the route, by the rule every page flags by (`RouterCard.assess`): the stored routing policy's
    threshold for the team, else the calibrated low-confidence threshold, and unknown words."""
    if assessment is None:
        return "Trust it? There is nothing the router can read in this ticket."
    if assessment.unfamiliar:
        return ("Trust it? No: the ticket is unlike the ones the router was trained on, so treat the route as a "
                "guess and check it by hand.")
    if assessment.rule == "policy":
        if assessment.low_confidence:
            return (f"Trust it? Not alone: below the routing policy's threshold for {team}, this ticket would go to "
                    "a person with its shortlist of teams.")
        return (f"Trust it? The routing policy would auto-route it: its confidence {assessment.confidence:.3f} clears "
                f"the threshold for {team} ({assessment.min_confidence:.3f}), fitted on valid for its precision target.")
    if assessment.low_confidence:
        return (f"Trust it? Not alone: its confidence {assessment.confidence:.2f} is below the router's calibrated "
                f"threshold {assessment.min_confidence:.2f}; check the route by hand.")
    return (f"Trust it? Its confidence {assessment.confidence:.2f} clears the router's calibrated threshold "
            f"{assessment.min_confidence:.2f} (no routing policy is stored).")


def query_reads(frame, reader: str | None = None) -> str:
    """A Markdown list, a line per head, of the two keys the query row reads most (`charts.query_frame`'s table):
    "- **head 1**: “not” reads “card” (5) 0.41, then …"; `reader` names the query token before "reads"."""
    lines = []
    for h, group in frame.groupby("head", sort=False):
        top = group.nsmallest(2, "rank")
        reads = ", then ".join(f"{md_escape(quote(r.token))} ({r.key_pos}) {fmt(r.weight)}" for r in top.itertuples())
        who = f"{md_escape(quote(reader))} " if reader is not None else ""
        lines.append(f"- **{h}**: {who}reads {reads}")
    return "\n".join(lines)
