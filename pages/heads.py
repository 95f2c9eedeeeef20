"""Heads: the from-scratch attention of every head on the picked ticket, checked against PyTorch."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import encoder_ui, narrative, render, state, ui, view, views
from dashboard.charts import attention as charts
from dashboard.charts import interventions as ic
from dashboard.charts import raster, theme
from dashboard.data import interventions, model, splits
from dashboard.narrative import interventions as intervention_words
from dashboard.text import md_escape
from ticketnet.interpret import support_title

MODEL_VIEW_MAX_TOKENS = 96

st.title("Heads")
st.caption("Rows are the reading token (query), columns the token it reads (key); each row sums to 1. Colour is a "
           "square-root scale up to each head's own largest weight. Pick a query row to frame it in every head.")

router = model.router()
teams = list(router.teams)
pick = state.current()
ins = ui.inspection_or_stop(pick)              # cached per text: changing block or row never reruns the model
tokens = ins.tokens
patterns = ins.patterns                          # (blocks, h, n, n)
n_blocks, n_heads = patterns.shape[0], patterns.shape[1]

with st.container(border=True):
    ui.ticket_header(pick, ins.probs, teams, tokens)
    ui.notices(ins.encoded)
    ui.parity_badge(ins.max_difference, ins.differences)
if router.kind == "encoder":
    encoder_ui.heads(pick, ins, teams)
    view.end_page()

text_key = pick.text_key
blocks = list(range(1, n_blocks + 1))
labels = ui.token_choice_labels(tokens)
first_row = ui.default_query_row(tokens)
heads_view = views.heads(text_key, n_blocks, n_heads, len(tokens), first_row)
ui.link_refusals(heads_view.restore())
row_key = f"query_row_{text_key}"
# The block picker's column grows with its buttons: at [1, 3, 2] a 1,000 px window cut the second one off.
c1, c2, c3 = st.columns([0.75 * max(2, len(blocks)), 3, 2], gap="medium")
with c1:
    block = st.segmented_control("Block", blocks, key="block", required=True, default=view.start("block"),
                                 help="Block 1 reads the token embeddings; block 2 reads block 1's output.") or 1
with c2:
    query_row = st.selectbox("Query row (the reading token)", range(len(tokens)), format_func=labels.__getitem__,
                             key=row_key, index=view.start_index(row_key, range(len(tokens))), help="Default: the first 'not' (negations are where routing is hard), "
                                               "else the first token.")
with c3:
    importance = splits.head_importance("valid")
    if importance is None:
        st.caption("Head importance (what masking each head costs on the valid split) is computed on the "
                   "Interpretation page; once computed it appears in the heatmap titles.")

W = patterns[block - 1]                          # (h, n, n)
st.subheader(f"Block {block}: the {n_heads} heads")
if len(tokens) >= raster.RASTER_FROM_TOKENS:
    render.heads_images(W, tokens, query_row, block=block)
else:
    render.heads_row(W, tokens, query_row, block=block, head_importance=importance)

# -- what the query token reads ---------------------------------------------------------------------------------
st.subheader(f"What {md_escape(narrative.quote(tokens[query_row]))} (position {query_row}) reads in block {block}")
st.markdown(narrative.query_reads(charts.query_frame(W, tokens, query_row), tokens[query_row]))
render.chart(charts.query_bars, W, tokens, query_row)

# -- vertical bands ---------------------------------------------------------------------------------------------
st.subheader("Tokens every query reads: the vertical bands")
st.caption("Mean weight each token receives over all reading tokens, per head of this block. A dark cell is a "
           "column of the heatmap that lights up for every row: punctuation and the first token often act as a "
           "resting place for attention that is not reading anything in particular.")
render.chart(charts.bands_chart, W, tokens)

# -- model view -------------------------------------------------------------------------------------------------
st.subheader("Model view: every block × head")
if len(tokens) <= MODEL_VIEW_MAX_TOKENS:
    render.chart(charts.model_view, patterns, tokens)
else:
    st.info(f"The model view is drawn for tickets up to {MODEL_VIEW_MAX_TOKENS} tokens; this one has {len(tokens)}. "
            "Use the block selector above to see each head in full.")

with st.expander("Parity with PyTorch, part by part"):
    diffs = pd.DataFrame([{"part": narrative.part_name(k), "max |from-scratch − PyTorch|": v}
                          for k, v in ins.differences.items()])
    st.dataframe(diffs, hide_index=True, column_config={
        "max |from-scratch − PyTorch|": st.column_config.NumberColumn(format="%.2e")})
    st.caption("PyTorch's own attention and encoder layers are fed the same block inputs as the from-scratch "
               "MultiHead; every attention weight, attention output, block output and the logits are compared.")

# -- route interventions: cut one edge, switch one head off ----------------------------------------------------------
# Below everything the page showed before, each in an expander that computes only once it is opened (on_change
# "rerun" makes `.open` tell), so the page's first view draws what it drew before, as fast; each result is cached per
# (ticket, block, row, head) in dashboard/data/interventions.py.
target = int(ins.predicted)
team = teams[target]
n_tokens = len(tokens)

st.header("Interventions: cut an edge, switch a head off", divider="gray")
st.caption("Attention weights say where a head reads; these views change the run and measure what the prediction "
           "loses. Each section computes when it is opened.")
unit = ui.unit_toggle(team, views.HEADS_UNIT)

knockout_section = st.expander("Cutting attention edges: does the weight matter?", key="open_knockout",
                               on_change="rerun", icon=":material/content_cut:")
with knockout_section:
    if knockout_section.open:
        st.caption(f"Each edge of one head's query row is cut in turn (its score set to −∞, the row renormalised) and the "
                   f"ticket routed again: the edge's support for {md_escape(team)}, the predicted team, is the "
                   "ticket's score minus the score with the edge cut. A heavy edge with no support was weight without effect.")
        row_peaks = W[:, query_row, :].max(dim=-1).values                 # (h,) each head's largest weight on this row
        # The head picked (the view's, from a pick or a link) on every row; until one is picked, each row offers
        # its heaviest head.
        picked_head = st.session_state.get("ko_head")
        row_head_key = f"ko_head_{text_key}_{block}_{query_row}"
        ko_head = st.selectbox("Head to cut", range(n_heads), format_func=narrative.head_name, key=row_head_key,
                               index=picked_head if picked_head is not None else
                               int(row_peaks.argmax()) if n_tokens > 1 else 0,
                               on_change=ui.copy_choice, args=(row_head_key, "ko_head"),
                               help="Default: the head that puts the largest weight on one token of this row.")
        ko = interventions.knockout_row(pick.text, block - 1, ko_head, query_row, target, pick.whole_thread)
        ko_tau = ko.tau(unit)
        st.subheader(f"Block {block}, head {ko_head + 1}: the row of {md_escape(narrative.quote(tokens[query_row]))} "
                     f"(position {query_row}), edge by edge")
        render.chart(ic.knockout_row_chart, ic.knockout_frame(ko.weights, ko.support[unit], tokens), unit, team)
        st.markdown(md_escape(narrative.knockout_sentence(tokens, query_row, ko_head + 1, block, ko.weights,
                                                          ko.support[unit], ko_tau, unit, team)))
        st.metric("Kendall τ, weight against support (this row)", narrative.tau_text(ko_tau))
        found = intervention_words.edge_rows(ko, tokens, unit, team)
        quiet = intervention_words.edge_note(ko, unit, team)
        if quiet:
            st.caption(md_escape(quiet))
        if len(found):
            st.caption("Edges where weight and support disagree most (rank percentiles on this row): support = "
                       f"ticket − edge cut, positive where the edge helps {md_escape(team)}.")
            st.dataframe(found, hide_index=True, key=f"ko_disagree_{text_key}")
        else:
            st.caption("Weight and support rank every edge of this row alike: no disagreement to list.")

        if n_tokens <= interventions.MAP_MAX_N:
            st.subheader(f"Every edge of block {block}: effect maps beside the attention")
            maps = interventions.effect_maps(pick.text, block - 1, target, pick.whole_thread)
            step = ic.map_step(n_tokens)
            pair_row = st.container(horizontal=True, gap="medium")    # side by side when wide, stacked in a laptop column
            with pair_row.container(width="content"):
                render.chart(charts.head_heatmap, W[ko_head], tokens, ko_head + 1, query_row, block=block, step=step,
                         title=f"attention weights, block {block} · head {ko_head + 1}")
            with pair_row.container(width="content"):
                render.chart(ic.effect_map_chart, maps[ko_head].support[unit], tokens, unit, step=step,
                         title=f"support of each edge, from cutting it, head {ko_head + 1}", team=team)
            taus = pd.DataFrame({"head": [narrative.head_name(k) for k in range(n_heads)],
                                 "Kendall τ (n² weights vs n² supports)": [narrative.tau_text(m.tau(unit))
                                                                           for m in maps]})
            st.caption(f"Same axes: cell (query, key) on the right is the support of that edge of the left: "
                       f"{support_title(unit, team)}, ticket − edge cut. Kendall τ between each head's {n_tokens}² = "
                       f"{n_tokens ** 2} weights and the edges' support:")
            st.dataframe(taus, hide_index=True, width=theme.HALF_COLUMN_PX + 100, key=f"map_taus_{text_key}")
        else:
            st.info(f"The full effect map is drawn for tickets up to {interventions.MAP_MAX_N} tokens; this one has "
                    f"{n_tokens}. A map cuts each of its {n_tokens ** 2:,} edges in turn, each a run of {n_tokens} tokens, so "
                    "its cost grows as n³. The row view above cuts one query row at a time: pick another row to see it.",
                    icon=":material/info:")

ablation_section = st.expander("Switching heads off on this ticket", key="open_ablation", on_change="rerun",
                               icon=":material/power_settings_new:")
with ablation_section:
    if ablation_section.open:
        st.caption(f"Each head of each block in turn replaced by zeros or by its mean output over the valid split: the "
                   f"head's {md_escape(support_title(unit, team))} is the ticket's score minus the score with the head "
                   "replaced (unit chosen above). Zero ablation takes the head's information and its average "
                   "contribution; mean ablation keeps the average and takes only what is specific to this ticket.")
        mode = st.segmented_control("Replace the head's output with", ("zero", "mean"), default="zero", key="ablation_mode",
                                    required=True, format_func={"zero": "zeros", "mean": "its mean over valid"}.get) or "zero"
        if mode == "mean":
            with st.spinner("Averaging every head's output over the valid split (once per weights file, a few seconds)…"):
                interventions.valid_head_means()
        ablated = interventions.ablation(pick.text, target, mode, pick.whole_thread)
        render.chart(ic.ablation_grid, ablated, unit, team)
        st.markdown(md_escape(narrative.ablation_sentence(ablated, unit, team, mode)))

heads_view.remember()
