"""An encoder router's Heads (layer, words or pieces, every head as small multiples) and Interpretation (by word)."""

from __future__ import annotations

from functools import partial

import streamlit as st

from dashboard import narrative, render, ui, view, views
from dashboard.charts import attention as charts
from dashboard.charts import encoder as encoder_charts
from dashboard.charts import interpretation as interp_charts
from dashboard.charts import raster
from dashboard.data import model, ticket
from dashboard.text import md_escape
from ticketnet.interpret.words import SHAPLEY_SAMPLES

GRID_MAX_ROWS = 64         # up to this many rows (words or pieces) every head of a layer is drawn; beyond, one head
GRID_WIDTH_PX = 700        # the grid's width: the main column of a 1,000 px window beside the sidebar


def grid_columns(n: int) -> int:
    """Heads per row of the small multiples: cells of at least about 4.5 px up to GRID_MAX_ROWS rows."""
    return 4 if n <= 24 else 3 if n <= 40 else 2


def heads(pick, ins, teams) -> None:
    """The Heads page on an encoder router, after its header."""
    n_blocks, n_heads = ins.patterns.shape[0], ins.patterns.shape[1]
    text_key = pick.text_key
    st.caption("[CLS] and [SEP] are the special pieces the encoder reads around every ticket; they are shown, "
               "and removal never takes them out. In the word view a word's row is the mean of its pieces' rows and "
               "its column the sum of their columns, so each row still sums to 1; the piece view is what the model "
               "reads.")
    level_view = views.encoder_heads(n_blocks, n_heads)
    ui.link_refusals(level_view.restore())
    level = st.session_state.get("heads_level") or view.start("heads_level") or views.LEVELS[0]
    labels_by_level = {"words": ins.words, "pieces": ins.tokens}
    row_view = views.encoder_heads_row(text_key, level, len(labels_by_level[level]))
    ui.link_refusals(row_view.restore())
    # Layer and level on one row, the query row below: at 1,000 px three columns cut the layer buttons off.
    c1, c2 = st.columns([3, 2], gap="medium")
    with c1:
        block = st.segmented_control("Layer", list(range(1, n_blocks + 1)), key="block", required=True,
                                     default=view.start("block"),
                                     help="Layer 1 reads the embeddings; each later layer reads the one before.") or 1
    with c2:
        level = st.segmented_control("Read as", views.LEVELS, key="heads_level", required=True,
                                     default=view.start("heads_level"),
                                     help="Words: pieces joined back into the ticket's words. Pieces: what the "
                                          "tokenizer cut the ticket into, as the model reads it.") or views.LEVELS[0]
    rows = labels_by_level[level]
    row_key = f"query_row_{text_key}_{level}"
    query_row = st.selectbox("Query row (the reading word or piece)", range(len(rows)),
                             format_func=ui.token_choice_labels(rows).__getitem__, key=row_key,
                             index=view.start_index(row_key, range(len(rows))), width=420)
    level_view.remember()
    row_view.remember()
    W = ins.word_patterns(block - 1) if level == "words" else ins.patterns[block - 1]   # (h, rows, rows)
    n = len(rows)
    if n <= GRID_MAX_ROWS:
        st.subheader(f"Layer {block}: its {n_heads} heads")
        render.chart(charts.heads_row, W, rows, query_row, block=block, columns=grid_columns(n), width=GRID_WIDTH_PX)
    else:
        st.subheader(f"Layer {block}, one head at a time")
        st.caption(f"{n} {level}: the {n_heads} heads of a layer side by side would leave cells too small to read, "
                   "so pick one.")
        head = st.selectbox("Head", range(n_heads), format_func=narrative.head_name, key="one_head",
                            index=view.start_index("one_head", range(n_heads)))
        level_view.remember()
        if n >= raster.RASTER_FROM_TOKENS:
            unit = {"words": "word", "pieces": "piece"}[level]
            render.heads_images(W[head:head + 1], rows, query_row, block=block, unit=unit,
                                below="The list below gives, per head, the two {unit}s the query row reads most.")
        else:
            render.chart(charts.head_heatmap, W[head], rows, head + 1, query_row, block=block)

    st.subheader(f"What {md_escape(narrative.quote(rows[query_row]))} (position {query_row}) reads in layer {block}")
    st.markdown(narrative.query_reads(charts.query_frame(W, rows, query_row)))

    st.subheader("What every query reads: the vertical bands")
    st.caption("Mean weight each word or piece receives over all reading rows, per head of this layer. Encoders "
               "often park attention on [CLS], [SEP] and punctuation: a dark band there is a resting place, not "
               "necessarily a reading.")
    render.chart(charts.bands_chart, W, rows)
    st.info("Interventions (cutting one edge, switching a head off) and the every-layer model view are drawn for "
            "the Tiny router; on an encoder router, the Interpretation page measures what removing each word does.",
            icon=":material/info:")


def _rank_of(values, k: int) -> int:
    """1-based rank of item k when `values` are sorted largest first."""
    return 1 + int((values > values[k]).sum())


def interpretation(pick, ins, teams) -> None:
    """The Interpretation page on an encoder router: every word removed and replaced, beside its attention share and
    its integrated gradients; then which signal to trust (agreement, ERASER, evidence) and the phrases."""
    from ticketnet.interpret import PHRASE_RULE, signals

    text_key = pick.text_key
    predicted = int(ins.predicted)
    interp_view = views.encoder_interpretation(text_key, teams, predicted)
    ui.link_refusals(interp_view.restore())
    t1, t2 = st.columns([2, 3], vertical_alignment="bottom")
    target = t1.selectbox("Target team (whose probability the effects follow)", range(len(teams)),
                          format_func=partial(narrative.team_option, teams, predicted), key=f"target_{text_key}",
                          index=view.start_index(f"target_{text_key}", range(len(teams))))
    with t2:
        with_phrases = ui.phrase_signals_toggle()
    unit = ui.unit_toggle(teams[target], views.INTERPRETATION_UNIT, parts="word, phrase", coloured=False,
                          margin=True)
    interp_view.remember()
    try:
        ex = ticket.word_explanation(pick.text, target, pick.evidence, pick.whole_thread, with_phrases)
    except ValueError as exc:
        ui.cannot_route(exc)
    we, ig = ex.effects, ex.ig
    team = teams[target]
    removed = we.removed if unit == "prob" else we.removed_logit
    replaced = we.replaced if unit == "prob" else we.replaced_logit
    unit_title = (f"p({team}) with − without the word" if unit == "prob"
                  else f"logit margin of {team}: with − without")
    top = int(removed.argmax())
    agree = ex.agreement.set_index(signals.SIGNAL)
    st.subheader("What mattered, word by word")
    st.markdown(md_escape(
        f"Removing {narrative.quote(we.words[top])} moves the {('probability' if unit == 'prob' else 'logit margin')} "
        f"of {team} the most ({narrative.fmt(float(removed[top]))}); attention rollout ranks that word "
        f"{_rank_of(we.rollout, top)} of {len(we.words)} and integrated gradients ranks it "
        f"{_rank_of(ex.signals[signals.INTEGRATED_GRADIENTS.name], top)}."))
    metrics = st.container(horizontal=True, gap="medium")
    for name, label, help_text in (
            (signals.ROLLOUT.name, "τ, rollout vs removal",
             ("Kendall's τ: the rank agreement, over this ticket's words, of the rollout share (what attention says "
              "the classifier reads) with what removing the word does. 1: the same order; 0: unrelated.")),
            (signals.LAST_LAYER.name, "τ, last layer vs removal",
             "The same with the last layer's attention, averaged over its heads, as the classifier reads it."),
            (signals.INTEGRATED_GRADIENTS.name, "τ, gradients vs removal",
             "The same with integrated gradients, summed over each word's pieces.")):
        if len(agree) and name in agree.index:
            metrics.metric(label, narrative.tau_text(float(agree.loc[name, signals.KENDALL_TAU])), help=help_text,
                           width="content")
    if len(agree) and signals.ROLLOUT.name in agree.index:
        metrics.metric("ρ, rollout vs removal", narrative.tau_text(float(agree.loc[signals.ROLLOUT.name,
                                                                                  signals.SPEARMAN])),
                       help="Spearman's ρ of the same two rankings: the correlation of their ranks.", width="content")
    metrics.metric(f"p({team}) of the ticket", f"{we.p_ticket:.3f}", width="content")
    frame = encoder_charts.word_frame(we.words, removed, replaced, we.rollout, we.last_layer,
                                      ex.signals[signals.INTEGRATED_GRADIENTS.name])
    render.chart(encoder_charts.word_effects_chart, frame, unit_title, we.replacement)
    st.caption(f"Removed: the word's pieces taken out of the ticket, which closes up. Replaced: each of its pieces "
               f"read as {we.replacement} instead (the tokenizer's mask piece where it has one), which keeps every "
               "position. [CLS] and [SEP] are never removed. The rollout share follows the attention through every "
               "layer (each layer's heads averaged, half kept for the residual) to what the classifier reads: "
               + ("the mean of every piece, as this router pools." if model.router().config.head == "mean"
                  else "the [CLS] piece, as this router's classifier reads it.")
               + f" [CLS] and [SEP] hold {100 * (1 - float(we.rollout.sum())):.1f} % of the rollout; the words the "
                 "rest.")
    st.caption(f"Integrated gradients of p({team}) at the piece vectors, from the ticket with [PAD] at every word's "
               f"pieces (the specials kept) to the ticket, summed over each word's pieces: they add up to "
               f"{narrative.fmt(ig.change)} with a gap of {100 * ig.relative_gap:.2g} % after {ig.steps} steps.")
    st.dataframe(narrative.tidy_numbers(frame.drop(columns=["position"]), 3), hide_index=True,
                 key=f"encoder_words_{text_key}")

    st.header("Which signal to trust", divider="gray")
    st.subheader("Agreement with removal")
    st.caption("Each signal's ranking of the words against removal's: Kendall's τ, Spearman's ρ and how many of "
               "removal's top 3 words it also puts in its top 3. 'random' is a random ordering every signal should "
               "beat.")
    st.dataframe(narrative.tidy_numbers(ex.agreement, 3), hide_index=True, key=f"encoder_agreement_{text_key}",
                 column_config={signals.KENDALL_TAU: st.column_config.NumberColumn("Kendall τ", format="%.3f"),
                                signals.SPEARMAN: st.column_config.NumberColumn("Spearman ρ", format="%.3f"),
                                signals.TOP3_OVERLAP: st.column_config.NumberColumn("top-3 overlap", format="%.2f")})
    st.subheader("Faithfulness: ERASER by word")
    if len(ex.eraser):
        st.caption("Take each signal's top words (1% to 50% of the ticket's words, each with all its pieces). "
                   "Comprehensiveness: how much p(target) drops when they are removed (higher = the signal found what "
                   "the model needs). Sufficiency: how much it drops when only they are kept (lower = they suffice). "
                   "[CLS] and [SEP] stay in every variant. AOPC = the mean over the five sizes.")
        render.chart(interp_charts.eraser_chart, ex.eraser, sorted(set(ex.eraser[signals.SIGNAL])), "words")
        st.dataframe(narrative.tidy_numbers(ex.aopc, 3), hide_index=True, key=f"encoder_aopc_{text_key}",
                     column_config={
                         signals.COMPREHENSIVENESS: st.column_config.NumberColumn("AOPC comprehensiveness ↑",
                                                                                  format="%.3f"),
                         signals.SUFFICIENCY: st.column_config.NumberColumn("AOPC sufficiency ↓", format="%.3f")})
        ui.csv_download(ex.eraser, "ERASER table (CSV)", f"ticketnet_{pick.label}_eraser.csv", key="dl_eraser")
    else:
        st.caption("A one-word ticket has no reduced variant to score.")
    st.subheader("Evidence recovery")
    if ex.evidence is not None and ex.gold is not None and bool(ex.gold.any()):
        st.caption("How well each signal ranks the annotated evidence's words first: average precision (AUPRC) and "
                   "F1 of its top words; base rate = share of the words that are evidence, what a random ranking "
                   "scores on average.")
        st.text("Evidence: " + " | ".join(p.strip() for p in pick.evidence.split("|") if p.strip()))
        st.dataframe(narrative.tidy_numbers(ex.evidence, 3), hide_index=True, key=f"encoder_evidence_{text_key}",
                     column_config={signals.AUPRC: st.column_config.NumberColumn("AUPRC", format="%.3f"),
                                    signals.TOKEN_F1: st.column_config.NumberColumn("word F1", format="%.3f"),
                                    "gold_words": st.column_config.NumberColumn("evidence words"),
                                    "base_rate": st.column_config.NumberColumn("base rate", format="%.3f")})
    else:
        st.caption(md_escape(narrative.no_evidence_sentence(pick)))
    if ex.shapley is not None:
        st.subheader("Phrases: deletion and Shapley values")
        how = ("exact" if ex.shapley.method == "exact"
               else f"sampled over {SHAPLEY_SAMPLES} phrase orders (more than 10 phrases)")
        st.caption(md_escape(PHRASE_RULE) + " Each phrase is a run of whole words; the empty ticket is [CLS] and "
                   f"[SEP] alone. Each word carries its phrase's deletion support and Shapley value ({how}) as the "
                   "“phrase deletion” and “phrase shapley” signals of the tables above.")
        st.dataframe(narrative.tidy_numbers(encoder_charts.phrase_frame(ex.phrases, ex.shapley.values,
                                                                         ex.phrase_support), 3),
                     hide_index=True, key=f"encoder_phrases_{text_key}")
        st.caption(f"The Shapley values add up to {narrative.fmt(ex.shapley.full - ex.shapley.empty)} "
                   f"(logit difference of {team}: the ticket − the specials alone), "
                   f"{ex.shapley.evaluations:,} coalitions read.")
    st.info("The split-wide agreement and the interventions (a contrast pair patched, a head switched off) are built "
            "for the Tiny router; on an encoder router this page measures each ticket by word.",
            icon=":material/info:")
