"""An encoder router's Heads (layer, words or pieces, every head as small multiples) and Interpretation (by word)."""

from __future__ import annotations

import streamlit as st

from dashboard import narrative, ui, view, views
from functools import partial

from dashboard.charts import attention as charts
from dashboard.charts import encoder as encoder_charts
from dashboard.charts import raster
from dashboard.data import model, ticket
from dashboard.text import md_escape

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
        ui.chart(charts.heads_row, W, rows, query_row, block=block, columns=grid_columns(n), width=GRID_WIDTH_PX)
    else:
        st.subheader(f"Layer {block}, one head at a time")
        st.caption(f"{n} {level}: the {n_heads} heads of a layer side by side would leave cells too small to read, "
                   "so pick one.")
        head = st.selectbox("Head", range(n_heads), format_func=narrative.head_name, key="one_head",
                            index=view.start_index("one_head", range(n_heads)))
        level_view.remember()
        if n >= raster.RASTER_FROM_TOKENS:
            ui.heads_images(W[head:head + 1], rows, query_row, block=block)
        else:
            ui.chart(charts.head_heatmap, W[head], rows, head + 1, query_row, block=block)

    st.subheader(f"What {md_escape(narrative.quote(rows[query_row]))} (position {query_row}) reads in layer {block}")
    st.markdown(narrative.query_reads(charts.query_frame(W, rows, query_row)))

    st.subheader("What every query reads: the vertical bands")
    st.caption("Mean weight each word or piece receives over all reading rows, per head of this layer. Encoders "
               "often park attention on [CLS], [SEP] and punctuation: a dark band there is a resting place, not "
               "necessarily a reading.")
    ui.chart(charts.bands_chart, W, rows)
    st.info("Interventions (cutting one edge, switching a head off) and the every-layer model view are drawn for "
            "the Tiny router; on an encoder router, the Interpretation page measures what removing each word does.",
            icon=":material/info:")


def _rank_of(values, k: int) -> int:
    """1-based rank of item k when `values` are sorted largest first."""
    return 1 + int((values > values[k]).sum())


def interpretation(pick, ins, teams) -> None:
    """The Interpretation page on an encoder router: every word removed and replaced, beside its attention share."""
    from scipy.stats import kendalltau, spearmanr

    text_key = pick.text_key
    predicted = int(ins.predicted)
    interp_view = views.encoder_interpretation(text_key, teams, predicted)
    ui.link_refusals(interp_view.restore())
    target = st.selectbox("Target team (whose probability the effects follow)", range(len(teams)),
                          format_func=partial(narrative.team_option, teams, predicted), key=f"target_{text_key}",
                          index=view.start_index(f"target_{text_key}", range(len(teams))), width=420)
    unit = ui.unit_toggle(teams[target], views.INTERPRETATION_UNIT)
    interp_view.remember()
    try:
        we = ticket.word_effects(pick.text, target, pick.whole_thread)
    except ValueError as exc:
        ui.cannot_route(exc)
    team = teams[target]
    removed = we.removed if unit == "prob" else we.removed_logit
    replaced = we.replaced if unit == "prob" else we.replaced_logit
    unit_title = (f"p({team}) with − without the word" if unit == "prob"
                  else f"logit margin of {team}: with − without")
    top = int(removed.argmax())
    tau_rollout = kendalltau(removed.numpy(), we.rollout.numpy()).statistic
    tau_last = kendalltau(removed.numpy(), we.last_layer.numpy()).statistic
    rho_rollout = spearmanr(removed.numpy(), we.rollout.numpy()).statistic
    st.subheader("What mattered, word by word")
    st.markdown(md_escape(
        f"Removing {narrative.quote(we.words[top])} moves the {('probability' if unit == 'prob' else 'logit margin')} "
        f"of {team} the most ({narrative.fmt(float(removed[top]))}); attention rollout ranks that word "
        f"{_rank_of(we.rollout, top)} of {len(we.words)}."))
    c1, c2, c4, c3 = st.columns(4)
    c1.metric("τ, rollout vs removal", narrative.tau_text(float(tau_rollout)),
              help="Kendall's τ: the rank agreement, over this ticket's words, of the rollout share (what attention says the "
                   "classifier reads) with what removing the word does. 1: the same order; 0: unrelated.")
    c2.metric("τ, last layer vs removal", narrative.tau_text(float(tau_last)),
              help="The same with the last layer's attention, averaged over its heads, as the classifier reads it.")
    c4.metric("ρ, rollout vs removal", narrative.tau_text(float(rho_rollout)),
              help="Spearman's ρ of the same two rankings: the correlation of their ranks.")
    c3.metric(f"p({team}) of the ticket", f"{we.p_ticket:.3f}")
    frame = encoder_charts.word_frame(we.words, removed, replaced, we.rollout, we.last_layer)
    ui.chart(encoder_charts.word_effects_chart, frame, unit_title, we.replacement)
    st.caption(f"Removed: the word's pieces taken out of the ticket, which closes up. Replaced: each of its pieces "
               f"read as {we.replacement} instead (the tokenizer's mask piece where it has one), which keeps every "
               "position. [CLS] and [SEP] are never removed. The rollout share follows the attention through every "
               "layer (each layer's heads averaged, half kept for the residual) to what the classifier reads: "
               + ("the mean of every piece, as this router pools." if model.router().config.head == "mean"
                  else "the [CLS] piece, as this router's classifier reads it.")
               + f" [CLS] and [SEP] hold {100 * (1 - float(we.rollout.sum())):.1f} % of the rollout; the words the "
                 "rest.")
    st.dataframe(narrative.tidy_numbers(frame.drop(columns=["position"]), 3), hide_index=True,
                 key=f"encoder_words_{text_key}")
    st.info("Gradients, ERASER, phrase Shapley values and the split-wide agreement are computed for the Tiny "
            "router; on an encoder router this page measures removal and replacement by word.",
            icon=":material/info:")
