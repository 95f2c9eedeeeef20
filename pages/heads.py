"""Heads: the from-scratch attention of every head on the picked ticket, checked against PyTorch."""

from __future__ import annotations

import hashlib

import streamlit as st

from dashboard import charts, loading, narrative, state, ui
from dashboard.loading import md_escape

MODEL_VIEW_MAX_TOKENS = 96

st.title("Heads")
st.caption("Rows are the reading token (query), columns the token it reads (key); each row sums to 1. Colour is a "
           "square-root scale up to each head's own largest weight. Pick a query row to frame it in every head.")

router = loading.router()
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

text_key = hashlib.sha1(pick.text.encode("utf-8")).hexdigest()[:12]
c1, c2, c3 = st.columns([1, 3, 2], gap="medium")
with c1:
    block = st.segmented_control("Block", list(range(1, n_blocks + 1)), default=1, key="block", required=True,
                                 help="Block 1 reads the token embeddings; block 2 reads block 1's output.")
    block = block or 1
with c2:
    labels = ui.token_choice_labels(tokens)
    query_row = st.selectbox("Query row (the reading token)", range(len(tokens)),
                             index=ui.default_query_row(tokens), format_func=labels.__getitem__,
                             key=f"query_row_{text_key}",
                             help="Default: the first 'not' (negations are where routing is hard), else the first "
                                  "token.")
with c3:
    importance = loading.head_importance("valid")
    if importance is None:
        st.caption("Head importance (what masking each head costs on the valid split) is computed on the "
                   "Interpretation page; once computed it appears in the heatmap titles.")

W = patterns[block - 1]                          # (h, n, n)
st.subheader(f"Block {block}: the {n_heads} heads")
ui.heads_row(W, tokens, query_row, block=block, head_importance=importance)

# -- what the query token reads ---------------------------------------------------------------------------------
st.subheader(f"What {md_escape(narrative.quote(tokens[query_row]))} (position {query_row}) reads in block {block}")
frame = charts.query_frame(W, tokens, query_row)
lines = []
for h in range(n_heads):
    top = frame[frame["head"] == f"head {h + 1}"].nsmallest(2, "rank")
    reads = ", then ".join(f"{md_escape(narrative.quote(r.token))} ({r.key_pos}) {narrative.fmt(r.weight)}"
                           for r in top.itertuples())
    lines.append(f"- **head {h + 1}**: {md_escape(narrative.quote(tokens[query_row]))} reads {reads}")
st.markdown("\n".join(lines))
ui.chart(charts.query_bars, W, tokens, query_row)

# -- vertical bands ---------------------------------------------------------------------------------------------
st.subheader("Tokens every query reads: the vertical bands")
st.caption("Mean weight each token receives over all reading tokens, per head of this block. A dark cell is a "
           "column of the heatmap that lights up for every row: punctuation and the first token often act as a "
           "resting place for attention that is not reading anything in particular.")
ui.chart(charts.bands_chart, W, tokens)

# -- model view -------------------------------------------------------------------------------------------------
st.subheader("Model view: every block × head")
if len(tokens) <= MODEL_VIEW_MAX_TOKENS:
    ui.chart(charts.model_view, patterns, tokens)
else:
    st.info(f"The model view is drawn for tickets up to {MODEL_VIEW_MAX_TOKENS} tokens; this one has {len(tokens)}. "
            "Use the block selector above to see each head in full.")

with st.expander("Parity with PyTorch, part by part"):
    import pandas as pd

    diffs = pd.DataFrame([{"part": narrative.part_name(k), "max |from-scratch − PyTorch|": v}
                          for k, v in ins.differences.items()])
    st.dataframe(diffs, hide_index=True, column_config={
        "max |from-scratch − PyTorch|": st.column_config.NumberColumn(format="%.2e")})
    st.caption("PyTorch's own attention and encoder layers are fed the same block inputs as the from-scratch "
               "MultiHead; every attention weight, attention output, block output and the logits are compared.")
