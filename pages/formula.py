"""The formula softmax(QKᵀ/√d_k + M)V, piece by piece, on small examples whose numbers you can check by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import narrative, state, ui
from dashboard.charts import lesson as lc
from dashboard.data import model, ticket
from dashboard.text import md_escape
from ticketnet.lesson import explorers as lesson

SECTIONS = ("Two vectors", "Matrix form", "Why √d_k", "Masks", "Bigger embeddings", "Your ticket's head")


@st.cache_data(show_spinner="Drawing 20,000 query–key pairs and 2,000 rows of 32 keys for each d_k (seeded)…")
def scaling_table() -> tuple[lesson.ScalingRow, ...]:
    return lesson.scaling_table()


@st.cache_data(show_spinner=False)
def matrix_steps(mask: str) -> list[lesson.Step]:
    return lesson.matrix_steps(mask)


@st.cache_data(show_spinner=False)
def pitfall() -> lesson.Pitfall:
    return lesson.boolean_mask_pitfall()


@st.cache_data(show_spinner=False)
def fully_masked() -> list[dict]:
    return lesson.fully_masked_rows()


def _table(t, rows, cols) -> pd.DataFrame:
    return pd.DataFrame(np.asarray(t.tolist(), dtype=float), index=list(rows), columns=list(cols))


def two_vectors() -> None:
    st.markdown("Two values to mix, v₁ = [2, 0] and v₂ = [0, 4], each with a key: k₁ = [1, 0], k₂ = [0, 1]. "
                "Move the query q: each score is q·kᵢ / √2, softmax turns the two scores into weights that sum "
                "to 1, and the output is O = w₁v₁ + w₂v₂.")
    c1, c2 = st.columns(2)
    q1 = c1.slider("q, first component", -3.0, 3.0, 1.0, 0.1, key="formula_q1")
    q2 = c2.slider("q, second component", -3.0, 3.0, 0.0, 0.1, key="formula_q2")
    r = lesson.two_vectors(q1, q2)
    left, right = st.columns([2, 3])
    with left:
        st.dataframe(pd.DataFrame({"key": ["k₁ = [1, 0]", "k₂ = [0, 1]"], "q·k": r.dots,
                                   "score q·k / √2": r.scores, "weight": r.weights}),
                     hide_index=True, column_config={c: st.column_config.NumberColumn(format="%.3f")
                                                     for c in ("q·k", "score q·k / √2", "weight")})
        st.metric("Output O", f"[{r.output[0]:.3f}, {r.output[1]:.3f}]")
        st.caption("Scores decide the proportions; the values decide what gets mixed. However q moves, O stays "
                   "on the segment between v₁ and v₂.")
    with right:
        frame = lc.two_vectors_frame(lesson.TWO_VALUES[0], lesson.TWO_VALUES[1], r.output, r.weights)
        st.altair_chart(lc.two_vectors_chart(frame))


def _step_buttons(n_steps: int) -> int:
    if "formula_step" not in st.session_state:
        st.session_state["formula_step"] = 1

    def move(delta: int) -> None:
        st.session_state["formula_step"] = min(n_steps, max(1, st.session_state["formula_step"] + delta))

    def go(k: int) -> None:
        st.session_state["formula_step"] = k

    cols = st.columns(n_steps + 2)
    cols[0].button("Back", key="formula_back", on_click=move, args=(-1,),
                   disabled=st.session_state["formula_step"] <= 1)
    for k in range(1, n_steps + 1):
        cols[k].button(str(k), key=f"formula_goto_{k}", on_click=go, args=(k,),
                       type="primary" if k == st.session_state["formula_step"] else "secondary")
    cols[-1].button("Next", key="formula_next", on_click=move, args=(1,),
                    disabled=st.session_state["formula_step"] >= n_steps)
    return st.session_state["formula_step"]


def matrix_form() -> None:
    st.markdown("The whole formula on three tokens, 'damaged on arrival', with d = 4 numbers per token and "
                "d_k = 2. The weight matrices are made up so that Q, K and V are the worked example's; every "
                "other number is computed here. The 'damaged' row is framed in red.")
    mask = st.radio("Mask", lesson.MASKS, horizontal=True, key="formula_mask")
    steps = matrix_steps(mask)
    k = _step_buttons(len(steps))
    step = steps[k - 1]
    st.subheader(f"Step {step.number} of {len(steps)}: {step.title}")
    st.latex(step.formula)
    c1, c2 = st.columns(2)
    c1.metric("Shape of the result", str(step.shape))
    c2.metric("Weights of 'damaged'",
              "not yet" if step.damaged_weights is None else ", ".join(f"{w:.3f}" for w in step.damaged_weights))
    cols = st.columns(len(step.matrices))
    for col, m in zip(cols, step.matrices):
        marked = m.rows[m.marked_row] if m.marked_row is not None else None
        col.altair_chart(lc.matrix_chart(lc.matrix_frame(m.values, m.rows, m.cols), m.name, marked))
    st.caption(step.note)


def why_sqrt_dk() -> None:
    st.markdown("With query and key numbers drawn from N(0, 1), a dot product adds d_k terms of variance 1, so "
                "Var(q·k) = d_k. Dividing by √d_k brings it back to 1. Measured here with a fixed seed, float64: "
                "20,000 pairs for the variance, 2,000 queries × 32 keys for softmax, and a second seeded draw of "
                "the same size for the softmax Jacobian ‖diag(p) − ppᵀ‖.")
    table = scaling_table()
    by_dk = {r.d_k: r for r in table}
    d_k = st.select_slider("Key size d_k", options=list(lesson.DK_VALUES), value=4, key="formula_dk")
    r = by_dk[d_k]
    c = st.columns(4)
    c[0].metric("Var(q·k)", f"{r.var_unscaled:,.2f}", help=f"standard deviation {r.var_unscaled ** 0.5:.2f}; "
                f"after dividing by √{d_k}: {r.var_scaled:.3f}")
    c[1].metric("Largest weight, unscaled → scaled", f"{r.top_unscaled:.3f} → {r.top_scaled:.3f}")
    c[2].metric("Rows with a weight above 0.99", f"{r.saturated_unscaled:.1%} → {r.saturated_scaled:.1%}")
    c[3].metric("Softmax Jacobian size", f"{r.grad_unscaled:.3f} → {r.grad_scaled:.3f}")
    st.altair_chart(lc.weight_bars(lc.weight_bars_frame(r.example_unscaled, r.example_scaled, d_k)))
    st.caption(f"The first of the 2,000 queries against its 32 keys at d_k = {d_k}, weights sorted largest first. "
               "The numbers above are averages over all 2,000.")
    st.altair_chart(lc.variance_chart(lc.variance_frame(table), selected=d_k))
    st.dataframe(pd.DataFrame([{
        "d_k": t.d_k, "Var(q·k)": t.var_unscaled, "Var(q·k/√d_k)": t.var_scaled,
        "largest weight, unscaled": t.top_unscaled, "largest weight, scaled": t.top_scaled,
        "rows > 0.99, unscaled": t.saturated_unscaled, "Jacobian, unscaled": t.grad_unscaled,
        "Jacobian, scaled": t.grad_scaled} for t in table]), hide_index=True)


def masks() -> None:
    st.markdown("The causal mask leaves 'damaged' (the first token) only itself to read. Three ways to hide the "
                "other two keys from its row of scaled scores (0.354, 0.530, 2.121):")
    choices = lesson.mask_choices()
    st.altair_chart(lc.mask_rows_chart(lc.mask_rows_frame(choices, lesson.TOKENS)))
    st.dataframe(pd.DataFrame({m: [*ws, sum(ws)] for m, ws in choices.items() if m != "scores"},
                               index=[*lesson.TOKENS, "row sum"]).T)
    st.caption("A score of 0 is not hidden: e⁰ = 1 still takes a share. Zeroing weights after softmax leaves a "
               "row that no longer sums to 1. Adding −∞ before softmax does both jobs at once.")

    st.subheader("The boolean-mask pitfall")
    st.markdown("Both PyTorch APIs accept a True/False mask, with opposite meanings: in "
                "`F.scaled_dot_product_attention` True means *may read*, in `nn.MultiheadAttention` True means "
                "*may not read*. The same causal mask `future` (True above the diagonal), run live on Q, K, V:")
    p = pitfall()
    rows, cols = lesson.TOKENS, ("1", "2")
    st.dataframe(pd.DataFrame(p.future.numpy(), index=rows, columns=rows), width="content")
    c = st.columns(3)
    c[0].markdown("**Wrong**: `scaled_dot_product_attention(attn_mask=future)`")
    c[0].dataframe(_table(p.sdpa_wrong, rows, cols))
    c[1].markdown("**Right**: `scaled_dot_product_attention(attn_mask=~future)`")
    c[1].dataframe(_table(p.sdpa_right, rows, cols))
    c[2].markdown("**Right**: `nn.MultiheadAttention(attn_mask=future)`")
    c[2].dataframe(_table(p.mha_right, rows, cols))
    st.markdown("The wrong mask lets every token read only its future; the last row has nothing left to read. "
                "An additive mask of 0 and −∞ means the same thing everywhere; ticketnet's `attention()` with "
                "`causal_mask(3)` gives the right answer:")
    st.dataframe(_table(p.ours, rows, cols))

    st.subheader("A fully masked row")
    st.markdown("What each API returns for the 'damaged' query when it may read no key at all (measured with "
                "the installed torch; ticketnet documents its own choice: weights and output exactly 0):")
    st.dataframe(pd.DataFrame([{**r, "output of the fully masked row": ", ".join(f"{x:.3f}" for x in
                                                                                  r["output of the fully masked row"])}
                               for r in fully_masked()]), hide_index=True)


def bigger_embeddings() -> None:
    st.markdown("The √d_k division corrects for how *many* terms a dot product adds, not for how *large* they "
                "are. Multiply every token vector of the example by a factor: Q and K both grow, so every score "
                "grows by the factor squared.")
    factor = st.slider("Multiply every embedding by", 0.5, 8.0, 4.0, 0.5, key="formula_factor")
    s = lesson.bigger_embeddings(factor)
    c1, c2 = st.columns(2)
    with c1:
        st.markdown("Scores S/√d_k")
        st.dataframe(_table(s.scores, lesson.TOKENS, lesson.TOKENS))
        st.markdown("Weights")
        st.dataframe(_table(s.weights, lesson.TOKENS, lesson.TOKENS).style.format("{:.3f}"))
    with c2:
        st.metric("Softmax Jacobian size of the 'damaged' row", f"{s.jacobian[0]:.2e}" if s.jacobian[0] < 1e-3 else f"{s.jacobian[0]:.4f}",
                  delta=f"{s.jacobian[0] - lesson.bigger_embeddings(1.0).jacobian[0]:+.4f} against factor 1",
                  delta_color="off")
        factors = np.linspace(0.5, 8.0, 31)
        frame = lc.saturation_frame(factors, [lesson.bigger_embeddings(f).weights[lesson.DAMAGED].tolist()
                                              for f in factors], lesson.TOKENS)
        st.altair_chart(lc.saturation_chart(frame, current=factor))
    st.caption("At 4×, 'damaged' gives essentially all its weight to 'arrival' and 'arrival' to 'damaged': "
               "one-hot rows, so almost no gradient flows back through softmax. 'on' has the query (0, 0), "
               "which stays 0 at any factor, so its weights stay equal.")


def ticket_head() -> None:
    pick = state.current()
    ins = ui.inspection_or_stop(pick)
    tokens = list(ins.tokens)
    n_blocks, n_heads = int(ins.patterns.shape[0]), int(ins.patterns.shape[1])
    reads = model.router()
    what = f"{reads.unit}s"
    st.markdown(md_escape(f"The same formula on {pick.label}, as the router reads it: {len(tokens)} {what}. Pick a "
                          "block, a head and a query row; each number below is computed here in float64 from the "
                          "head's own weights, and the last column is the router's own weight, from its forward "
                          "pass."))
    c1, c2, c3 = st.columns([2, 2, 3])
    block = c1.selectbox("Block", range(n_blocks), index=n_blocks - 1, format_func=lambda b: f"block {b + 1}",
                         key="formula_block")
    head = c2.selectbox("Head", range(n_heads), format_func=narrative.head_name, key="formula_head")
    row = c3.selectbox("Query row", range(len(tokens)), index=ui.default_query_row(tokens),
                       format_func=ui.token_choice_labels(tokens).__getitem__, key=f"formula_row_{pick.text_key}")
    steps = ticket.head_steps(pick.text, block, head, pick.whole_thread)
    st.latex(rf"w_{{{row}}} = \mathrm{{softmax}}\!\left(\frac{{q_{{{row}}} K^\top}}{{\sqrt{{{steps.d_k}}}}} + "
             rf"M_{{{row}}}\right), \quad o_{{{row}}} = w_{{{row}}} V")
    m = st.container(horizontal=True, gap="medium")
    m.metric("d_k", steps.d_k, help=f"{n_heads} heads share the width {steps.X.shape[1]}: each reads "
             f"{steps.d_k} columns of Q, K and V.", width="content")
    m.metric("√d_k", f"{steps.d_k ** 0.5:.3f}", width="content")
    m.metric("largest weight of the row", f"{float(steps.weights[row].max()):.3f}", width="content")
    m.metric("|here − the router|, whole head", f"{steps.difference:.1e}", width="content",
             help="The largest difference, over every row of this head, between the weights worked out here in "
                  "float64 and the router's own float32 ones: rounding, where the copy is right.")
    frame = lc.head_row_frame(steps, tokens, row)
    st.dataframe(frame, hide_index=True, key=f"formula_row_table_{pick.text_key}", column_config={
        c: st.column_config.NumberColumn(format="%.4f") for c in frame.columns if c != "key"})
    st.caption("M is 0 for every key here: one ticket has no padding and the router reads every position both ways. "
               "Q, K and V are the head's columns of X·W + b, X being what the block's attention reads ("
               + ("the block's input after its LayerNorm: this router normalises first" if reads.norm_first
                  else "the block's input itself: this router normalises after attention") + ").")
    o = steps.out[row].numpy()
    st.markdown(md_escape(f"o_{row}, the head's output for {narrative.quote(tokens[row])} ({steps.d_k} numbers, "
                          "the weighted mean of the value rows, before the heads are joined and W_O): "
                          + ", ".join(f"{v:.3f}" for v in o[:8]) + (" …" if len(o) > 8 else "")))


st.title("The formula")
st.latex(r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}} + M\right)V")
section = st.segmented_control("Section", SECTIONS, default=SECTIONS[0], key="formula_section") or SECTIONS[0]
{"Two vectors": two_vectors, "Matrix form": matrix_form, "Why √d_k": why_sqrt_dk, "Masks": masks,
 "Bigger embeddings": bigger_embeddings, "Your ticket's head": ticket_head}[section]()
