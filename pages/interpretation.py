"""Interpretation: does what the router attends to matter? Attention beside removal effects, gradients, ERASER."""

from __future__ import annotations

from functools import partial

import pandas as pd
import streamlit as st

from dashboard import encoder_ui, narrative, render, state, ui, view, views
from dashboard.charts import attention as charts
from dashboard.charts import interpretation as interp_charts
from dashboard.charts import interventions as ic
from dashboard.charts import theme
from dashboard.data import interventions, model, splits, ticket
from dashboard.narrative import interventions as intervention_words
from dashboard.text import md_escape
from ticketnet.interpret import (
    PHRASE_RULE,
    PHRASE_SHAPLEY_SAMPLES,
    aopc,
    chance_band,
    mean_aopc,
    removal_support,
    signals,
    suggest_edit,
    support_title,
)

ATTENTION_SIGNALS_DEFAULT = signals.names((signals.ROLLOUT, signals.mean_attention(2), signals.INTEGRATED_GRADIENTS))
ERASER_DEFAULT = signals.names((signals.REMOVAL, signals.ROLLOUT, signals.mean_attention(1), signals.mean_attention(2),
                                signals.INTEGRATED_GRADIENTS, signals.RANDOM))
SPLIT_PANEL_PX = 420                 # two of them and the gap fit the main column at 1366 px, one at 1000 px
REMOVAL, UNK, IG = signals.REMOVAL.name, signals.UNK_REPLACEMENT.name, signals.INTEGRATED_GRADIENTS.name
UNIT_SHORT = {"prob": "p", "logit_diff": "log-odds"}

st.title("Interpretation")
router = model.router()
if router.kind == "encoder":
    st.caption("Attention shows where each head reads. Whether that matters is a separate question, answered here by "
               "changing the ticket: take a word's pieces out (or put [MASK] in their place) and watch the team's "
               "score move. Integrated gradients and ERASER add two more views.")
else:
    st.caption("Attention shows where each head reads. Whether that matters is a separate question, answered here "
               "by changing the ticket: delete a token (or replace it with <unk>) and watch the team's score move. "
               "Gradients and ERASER scores add two more views; the split-wide section tests whether one ticket's "
               "story holds.")

teams = list(router.teams)
pick = state.current()
ins = ui.inspection_or_stop(pick)
text_key = pick.text_key

with st.container(border=True):
    ui.ticket_header(pick, ins.probs, teams, ins.tokens)
    ui.notices(ins.encoded)
    answer = st.empty()                            # why this route: filled once the effects are computed below
if router.kind == "encoder":
    encoder_ui.interpretation(pick, ins, teams)
    view.end_page()

predicted = int(ins.predicted)
interp_view = views.interpretation(text_key, teams, predicted, {
    "signals_shown": list(ATTENTION_SIGNALS_DEFAULT),
    "eraser_signals": [*ERASER_DEFAULT, *signals.PHRASE_SIGNALS]}, signals.ROLLOUT.name)
ui.link_refusals(interp_view.restore())
t1, t2 = st.columns([2, 3], vertical_alignment="bottom")      # the target label and team whole at 1000 px
target = t1.selectbox("Target team (whose probability the effects follow)", range(len(teams)),
                      format_func=partial(narrative.team_option, teams, predicted), key=f"target_{text_key}",
                      index=view.start_index(f"target_{text_key}", range(len(teams))))
with t2:
    with_phrases = ui.phrase_signals_toggle(("eraser_signals",), ("signals_shown",), ("focus_signal",))
ti = ticket.interpretation(pick.text, target, pick.evidence, pick.whole_thread, with_phrases)
read = ins.encoded.text                            # what the router reads: the new message of an e-mail ticket
team = teams[target]
if ti.note:
    t2.info(md_escape(ti.note), icon=":material/info:")

signal_names = [s for s in ti.signals if s not in signals.names(signals.EFFECTS)]
has_effect = REMOVAL in ti.per_token.columns
unit = ui.unit_toggle(team, views.INTERPRETATION_UNIT)   # one unit for every effect on the page
unit_name = narrative.UNIT_NAMES[unit]
support = support_title(unit, team)
shown_tokens = ti.per_token
if has_effect:                                     # the token effects in the unit chosen, as support for the team
    cf = ti.counterfactuals
    shown_tokens = ti.per_token.assign(**{
        REMOVAL: removal_support(cf.base, cf.removed, target, unit).double().numpy(),
        UNK: removal_support(cf.base, cf.replaced, target, unit).double().numpy()})

if has_effect:
    answer.markdown("**" + md_escape(narrative.why_sentence(ti.tokens, shown_tokens[REMOVAL], team, unit)) + "**")

# -- per-token effect beside attention --------------------------------------------------------------------------
st.header("What each token does, beside what attention says", divider="gray")
view.allow("signals_shown", signal_names, [])
chosen = st.multiselect("Attention and gradient signals to show beside the effects", signal_names, key="signals_shown",
                        default=view.start("signals_shown"),
                        help="b1 h2 = block 1, head 2: the mean weight each token receives from all reading tokens. "
                             "mean attention = the same averaged over the block's heads. rollout = attention "
                             "followed through both blocks with the residual stream (Abnar & Zuidema 2020). "
                             "integrated gradients = attribution of p(target) to each token's embedding.")
if has_effect:
    st.caption(f"Red bars: the token supports {md_escape(team)} (deleting it, or replacing it with <unk>, lowers "
               f"the score); blue: it works against {md_escape(team)}. Both in {md_escape(support)}. TV = total "
               "variation, how much of the whole team distribution moves, any direction.")
    effects = [REMOVAL, UNK, signals.REMOVAL_TV.name]
    # The effects and the signals as two charts of one column each: side by side where the window has room (1366
    # px), one under the other at 1000 px, every panel wide enough for its whole title.
    pair = st.container(horizontal=True, gap="medium")
    with pair.container(width="content"):
        render.chart(interp_charts.removal_chart, shown_tokens, effects, [], support)
    if chosen:
        with pair.container(width="content"):
            render.chart(interp_charts.removal_chart, shown_tokens, [], chosen, support)
    shift = narrative.position_effect_message(
        narrative.position_effect(ti.per_token[REMOVAL], ti.per_token[UNK]), team) \
        if UNK in ti.per_token.columns else None
    if shift:
        st.warning(md_escape(shift), icon=":material/swap_horiz:")
else:
    render.chart(interp_charts.removal_chart, ti.per_token, [], chosen or signal_names[:1])
if IG in chosen:
    st.caption(md_escape(narrative.ig_completeness(ti.ig.change, ti.ig.delta, ti.ig.steps, team)))

view.allow("focus_signal", signal_names, signals.ROLLOUT.name)
focus = st.selectbox("Signal to compare in the lists and the highlighted text", signal_names, key="focus_signal",
                     index=view.start_index("focus_signal", signal_names))
if has_effect:
    render.chart(interp_charts.token_highlight, ti.tokens, shown_tokens[REMOVAL],
             title=f"text coloured by {support}, from deleting each token (red: helps)", diverging=True)
render.chart(interp_charts.token_highlight, ti.tokens, ti.per_token[focus], title=f"text coloured by {focus}")

with st.expander("Per-token numbers (table and CSV)"):
    # The effects in the unit chosen at the top, as the bars above, named with it (in the CSV too).
    table = shown_tokens.rename(columns={c: f"{c}: support ({unit_name})" for c in (REMOVAL, UNK)})
    num_cols = [c for c in table.columns if c not in ("position", "token", "evidence")]
    st.dataframe(narrative.tidy_numbers(table, 4), hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.4f") for c in num_cols})
    ui.csv_download(table, "per-token table (CSV)", f"ticketnet_{pick.label}_per_token.csv", key="dl_tokens")

# -- agreement ----------------------------------------------------------------------------------------------------
if has_effect:
    st.header("Do they agree?", divider="gray")
    # Side by side on a wide screen, stacked on a laptop's 540 px column (as columns, the table scrolled sideways).
    agree_row = st.container(horizontal=True, gap="large")
    a1, a2 = agree_row.container(width=theme.COLUMN_PX), agree_row.container(width=420)
    with a1:
        agreement = ti.agreement.copy()
        band = chance_band(ti.random_tau) if len(ti.random_tau) else None
        if band is None:                          # all nan when every deletion moves p(team) the same
            st.caption(f"Deleting any one of the {ti.n} tokens moves p({md_escape(team)}) by the same amount, so "
                       "there is no ranking for a signal to agree with: Kendall τ is undefined (blank) here.")
        else:
            agreement["beyond chance"] = agreement[signals.KENDALL_TAU].map(band.verdict)
            st.caption(f"Each signal ranked against the removal effect over the {ti.n} tokens. Random orderings give "
                       f"τ between {narrative.fmt(band.low)} and {narrative.fmt(band.high)} ({band.coverage:.0%} of "
                       f"{band.draws} draws) on this ticket: a τ inside that band is no evidence of agreement.")
        st.dataframe(narrative.tidy_numbers(agreement, 3), hide_index=True, width="stretch", column_config={
            signals.KENDALL_TAU: st.column_config.NumberColumn("Kendall τ", format="%.3f"),
            signals.SPEARMAN: st.column_config.NumberColumn("Spearman ρ", format="%.3f"),
            signals.TOP3_OVERLAP: st.column_config.NumberColumn("top-3 overlap", format="%.2f",
                                                          help="share of the signal's 3 highest tokens that are "
                                                               "among the 3 with the largest removal effect")})
        ui.csv_download(agreement, "agreement (CSV)", f"ticketnet_{pick.label}_agreement.csv", key="dl_agreement")
    with a2:
        found = ti.disagreements(focus, k=3, unit=unit)       # in the page's unit, as the bars above
        score = narrative.score_name(team, unit)
        st.caption(md_escape(
            f"High effect: deleting the token moves {score} by at least {narrative.fmt(found.high_effect)}, the "
            f"larger of {narrative.fmt(narrative.SMALL_EFFECTS[unit])} and half this ticket's largest change "
            f"({narrative.fmt(found.largest_effect)}); low effect: under {narrative.fmt(found.low_effect)}. "
            f"High {focus}: the top third of this ticket's tokens; low: the bottom half."))
        for rows_found, heading, empty in (
                (found.high_signal_low_effect, f"High {focus}, low effect",
                 f"none: every token {focus} ranks high also has an effect"),
                (found.low_signal_high_effect, f"Low {focus}, high effect",
                 f"none: no token's deletion moves {score} by {narrative.fmt(found.high_effect)} or more"
                 if found.largest_effect < found.high_effect else
                 f"none: {focus} ranks every high-effect token in its top half")):
            st.markdown(f"**{md_escape(heading)}**")
            removal_header = f"deleted: {support}"                # the thresholds above are in the page's unit
            rows = pd.DataFrame(rows_found, columns=["position", "token", focus, removal_header])
            if len(rows):
                st.dataframe(narrative.tidy_numbers(rows, 3), hide_index=True, width="stretch", column_config={
                    focus: st.column_config.NumberColumn(format="%.3f"),
                    # A short label: a header as long as the title widens the column past the table's edge, and
                    # its right-aligned numbers go out of sight.
                    removal_header: st.column_config.NumberColumn(f"deleted: support ({UNIT_SHORT[unit]})", format="%.3f",
                                                                  help=removal_header)})
            else:
                st.caption(md_escape(empty))

    # -- what this shows --------------------------------------------------------------------------------------------
    st.subheader("What this shows, and what it does not")
    lines = narrative.statements(shown_tokens, ti.patterns, ti.tokens, team, ui.default_query_row(ti.tokens),
                                 ti.agreement, ti.random_tau, signal=focus, unit=unit)
    st.markdown("\n".join(f"- {md_escape(s)}" for s in lines))

    # -- ERASER -------------------------------------------------------------------------------------------------------
    st.header("Faithfulness: ERASER comprehensiveness and sufficiency", divider="gray")
    st.caption("Take each signal's top tokens (1% to 50% of the ticket). Comprehensiveness: how much p(target) drops "
               "when they are removed (higher = the signal found what the model needs). Sufficiency: how much it "
               "drops when only they are kept (lower = they suffice). AOPC = the mean over the five sizes. 'random' "
               "is a random ordering every signal should beat.")
    # Phrase deletion and phrase Shapley are token signals of the interpretation (each token carries its phrase's
    # score), beside the single-token ones: the same rows the split-wide run averages (docs/model-card.md).
    e_options = sorted([*ti.signals, signals.RANDOM.name])
    view.allow("eraser_signals", e_options, [])
    e_signals = st.multiselect("Signals (each one chosen is scored)", e_options, key="eraser_signals",
                               default=view.start("eraser_signals"))
    if not e_signals:
        st.info("Choose at least one signal to score.", icon=":material/checklist:")
    else:
        eraser_table = ticket.eraser(pick.text, target, pick.evidence, pick.whole_thread, with_phrases,
                                     tuple(sorted(e_signals)))
        # Chart, then the AOPC table below it at full width: side by side the legend slid under the table and the
        # sufficiency column was cut off.
        render.chart(interp_charts.eraser_chart, eraser_table, e_signals)
        if with_phrases:
            st.caption(md_escape(narrative.phrase_signal_sentence(ti.phrase_shapley_method, PHRASE_SHAPLEY_SAMPLES)))
        st.dataframe(narrative.tidy_numbers(aopc(eraser_table), 3), hide_index=True, column_config={
            signals.COMPREHENSIVENESS: st.column_config.NumberColumn("AOPC comprehensiveness ↑", format="%.3f"),
            signals.SUFFICIENCY: st.column_config.NumberColumn("AOPC sufficiency ↓", format="%.3f")})
        ui.csv_download(eraser_table, "ERASER table (CSV)", f"ticketnet_{pick.label}_eraser.csv", key="dl_eraser")

# -- evidence -------------------------------------------------------------------------------------------------------
if ti.evidence is not None:
    st.header("Evidence recovery", divider="gray")
    st.caption("The annotated evidence of this ticket (below, as plain text). How well each signal ranks the evidence "
               "tokens first: average precision (AUPRC) and F1 of its top tokens; base rate = share of tokens that "
               "are evidence, what a random ranking scores on average.")
    st.text("Evidence: " + " | ".join(p.strip() for p in pick.evidence.split("|") if p.strip()))
    if "evidence" in ti.per_token.columns:
        render.chart(interp_charts.token_highlight, ti.tokens, ti.per_token["evidence"].astype(float), title="evidence tokens")
    st.dataframe(narrative.tidy_numbers(ti.evidence, 3), hide_index=True, width="stretch", column_config={
        signals.AUPRC: st.column_config.NumberColumn("AUPRC", format="%.3f"),
        signals.TOKEN_F1: st.column_config.NumberColumn("token F1", format="%.3f"),
        "base_rate": st.column_config.NumberColumn("base rate", format="%.3f")})
else:
    st.header("Evidence recovery", divider="gray")
    st.caption(md_escape(narrative.no_evidence_sentence(pick)))

# -- interventions: a contrast pair, phrases ----------------------------------------------------------------
# Each in an expander that computes once it is opened (on_change="rerun" makes `.open` tell), so the page's first view
# draws what it drew before; results are cached per ticket, edit, target and unit in dashboard/data/interventions.py.
st.header("Interventions: an edit of the ticket, and its phrases", divider="gray")
st.caption(f"Change the ticket and measure what the prediction of {md_escape(team)} does: an edited ticket patched "
           "into the original run (and back), and whole phrases deleted, in pairs and as Shapley coalitions. Each "
           "section computes when it is opened.")
st.caption(md_escape(f"Effects below are {support}, as chosen at the top of the page."))

contrast_section = st.expander("Contrast pair and activation patching", key="open_contrast", on_change="rerun",
                               icon=":material/compare_arrows:")
with contrast_section:
    if contrast_section.open:
        suggested = suggest_edit(read, pick.evidence)
        st.caption("Edit the ticket into a contrast (b) and compare it with the ticket (a). "
                   + ("Prefilled with a suggested edit: a negated phrase that holds none of the evidence deleted, "
                      "else a phrase set aside by a following “but”, else the evidence itself."
                      if suggested else "No edit could be suggested for this ticket: the ticket itself is prefilled, "
                      "change a few words."))
        edited = st.text_area("Edited ticket (b)", value=suggested or read, key=f"contrast_edit_{text_key}",
                              max_chars=20_000, height=110)
        try:
            ins_b = ticket.inspection(edited, pick.whole_thread) if edited.strip() else None
        except ValueError as exc:
            ins_b = None
            st.warning(f"The edit cannot be routed: {md_escape(exc)}")
        if ins_b is None:
            st.info("Type an edited ticket to compare.", icon=":material/edit:")
        else:
            cp = interventions.contrast(read, edited, target, pick.whole_thread)
            pa, pb = st.columns(2)
            for col, name, probs, values in ((pa, "ticket (a)", ins.probs, cp.values_a),
                                             (pb, "edit (b)", ins_b.probs, cp.values_b)):
                k = int(probs.argmax())
                col.metric(f"prediction, {name}", teams[k])
                col.markdown(f"p({md_escape(team)}) **{narrative.fmt(values['prob'])}** · logit difference "
                             f"**{narrative.fmt(values['logit_diff'])}**")
            if edited == read or cp.values_a[unit] == cp.values_b[unit]:
                st.info(f"The edit leaves the {unit_name} of {md_escape(team)} where it was: there is no change for a "
                        "patch to recover. Edit some words.", icon=":material/info:")
            else:
                st.caption(md_escape(narrative.patching_intro(cp.values_a[unit], cp.values_b[unit], unit, team)))
                change = cp.values_b[unit] - cp.values_a[unit]
                flips = int(ins.probs.argmax()) != int(ins_b.probs.argmax())
                caveat = intervention_words.share_note(change, unit, team, flips)
                if caveat:
                    st.warning(md_escape(caveat), icon=":material/warning:")
                gaps = narrative.unaligned_sentence(cp.tokens_a, cp.tokens_b, cp.alignment.a_to_b(),
                                                    cp.alignment.b_to_a())
                if gaps:
                    st.caption(md_escape(gaps))
                st.markdown(md_escape(narrative.strongest_patches(cp.heads, cp.resid, unit)))
                for direction, words in narrative.DIRECTION_WORDS.items():
                    st.subheader(f"Patched {words} ({direction})")
                    render.chart(ic.patching_heads_grid, cp.heads, direction, unit, unreliable=caveat is not None)
                    render.chart(ic.patching_resid_heatmap, cp.resid, direction, unit, unreliable=caveat is not None)

phrase_section = st.expander("Phrases: deletion, pairs, Shapley values", key="open_phrases", on_change="rerun",
                             icon=":material/segment:")
with phrase_section:
    if phrase_section.open:
        st.caption(md_escape("How the ticket is cut: " + PHRASE_RULE))
        ph = interventions.phrases(pick.text, target, unit, pick.whole_thread)
        texts = [p.text for p in ph.phrases]
        singles = ph.singles()
        shown = pd.DataFrame({"#": range(len(texts)), "phrase": texts,
                              f"deleted alone: {support}": singles[f"support_{unit}"].map(narrative.effect),
                              f"Shapley value: {support}": [narrative.effect(v) for v in ph.shapley.values.tolist()],
                              "team when deleted": [teams[int(t)] for t in singles["predicted"]]})
        st.dataframe(shown, hide_index=True, width="stretch", key=f"phrase_table_{text_key}")
        st.caption(md_escape(narrative.shapley_sentence(ph.shapley.method, len(texts), ph.shapley.evaluations,
                                                        interventions.SHAPLEY_SAMPLES, interventions.EXACT_MAX)
                             + f" Sum of the values: {narrative.effect(float(ph.shapley.values.sum()))} = the ticket "
                             f"({narrative.fmt(ph.shapley.full)}) minus every phrase deleted "
                             f"({narrative.fmt(ph.shapley.empty)})."))
        # Stretched to the column: at width="content" a one-view chart of fixed width collapses to its labels in the
        # browser (no bar, no axis).
        render.chart(ic.phrase_chart, ic.phrase_frame(texts, singles[f"support_{unit}"], ph.shapley.values), unit, team,
                 width="stretch")
        st.subheader("Pairs of phrases deleted together")
        statements = narrative.redundancy_statements(texts, ph.redundant, ph.deletions, teams)
        for line in statements:
            st.warning(md_escape(line), icon=":material/join_inner:")
        if not statements and len(texts) > 1:
            st.caption("No two phrases that each leave the team alone flip it when deleted together: no phrase here "
                       "hides behind another.")
        pairs = ph.pairs()
        if len(pairs):
            pair_table = pd.DataFrame({
                "phrases": [" + ".join(str(i) for i in c) for c in pairs["phrases"]],
                f"deleted together: {support}": pairs[f"support_{unit}"].map(narrative.effect),
                "team": [teams[int(t)] for t in pairs["predicted"]], "flips": pairs["flips"]})
            st.dataframe(pair_table, hide_index=True, width="stretch", key=f"pair_table_{text_key}")
        else:
            st.caption("A single phrase: there is no pair to delete.")

# -- across the split -----------------------------------------------------------------------------------------------
st.header("Across a split", divider="gray")
split = st.segmented_control("Split", splits.available(), default="valid", key="interp_split", required=True) or "valid"
n_split = len(splits.split_rows(split))
# Side by side on a wide screen, one above the other in a laptop's 540 px column: as two st.columns there, the τ box
# plot had 96 px of plot beside its signal names.
split_row = st.container(horizontal=True, gap="large")
s1, s2 = split_row.container(width=SPLIT_PANEL_PX), split_row.container(width=SPLIT_PANEL_PX)

with s1:
    st.subheader("Head importance")
    ui.split_status(split, "heads", "Head importance")
    importance = splits.head_importance(split)
    if importance is None:
        st.caption(f"Switch off one head at a time over the {n_split} tickets and measure what routing loses "
                   "(Michel et al. 2019).")
        ui.head_importance_button(split, n_split, key="btn_heads")
    else:
        render.chart(interp_charts.head_importance_chart, importance, unit)
        hb1, hb2 = st.columns(2)
        blk = hb1.selectbox("Block", sorted(importance["block"].unique()), key="imp_block")
        hd = hb2.selectbox("Head", sorted(importance["head"].unique()), key="imp_head")
        row = importance[(importance["block"] == blk) & (importance["head"] == hd)].iloc[0]
        st.markdown(f"Masking **block {blk} head {hd}**, in the one convention (with the head − masked): accuracy "
                    f"{narrative.effect(row['accuracy_drop'])}; {support_title(unit, 'the true team')} "
                    f"{narrative.effect(row[f'support_{unit}'])} on average. Its pattern on this ticket:")
        render.chart(charts.head_heatmap, ins.patterns[blk - 1, hd - 1], ins.tokens, hd, None, block=blk)

with s2:
    st.subheader("Attention against effect, ticket by ticket")
    ui.split_status(split, "interpret", "Interpretation")
    interp = splits.split_interpretation(split)
    if interp is None:
        st.caption(f"For each of the {n_split} tickets: Kendall τ of every attention signal against the deletion "
                   "effect (target: predicted team), and ERASER AOPC. Computed once and shared with the Tickets "
                   "page.")
        ui.split_interpretation_button(split, n_split, key="btn_split")
    else:
        render.chart(interp_charts.tau_distribution, interp, width="stretch")
        long = interp_charts.tau_long(interp)
        med = long.groupby(signals.SIGNAL, sort=False)[signals.TAU].median()
        rnd_med = med.get(theme.RANDOM_SIGNAL, float("nan"))
        best = med.drop(theme.RANDOM_SIGNAL, errors="ignore").idxmax()
        st.markdown(md_escape(
            f"Median τ: {best} {narrative.fmt(med[best])} (best), random {narrative.fmt(rnd_med)}. The grey box is what random orderings "
            "give; a signal whose box sits on it tells you no more about which words matter than chance."))
        means = mean_aopc(interp)
        render.chart(interp_charts.mean_eraser_chart, means, list(signals.ERASER_METRICS))
        ui.csv_download(interp, "split interpretation (CSV)", f"ticketnet_{split}_interpretation.csv",
                        key="dl_split_interp")

interp_view.remember()
