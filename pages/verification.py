"""Verification: the parity suite run live, the very rows `tests/nn/test_parity.py` asserts on."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import narrative, state, ui, view
from dashboard.data import model, parity, splits
from dashboard.text import md_escape

COMPANIONS = 15          # valid tickets padded together with the picked one (as CI pads the first 16)


def table(rows: list[parity.ParityRow]) -> pd.DataFrame:
    return pd.DataFrame({
        "what was compared": [narrative.parity_label(r.check) for r in rows],
        "case": [r.case for r in rows],
        "dtype": [r.dtype for r in rows],
        "largest difference": [f"{r.max_diff:.1e}" for r in rows],
        "tolerance": [f"{r.tolerance:.0e}" if r.tolerance else "0 (exact)" for r in rows],
        "result": ["pass" if r.passed else "FAIL" for r in rows],
    })


def show(rows: list[parity.ParityRow], title: str) -> None:
    passed = sum(r.passed for r in rows)
    st.subheader(title)
    (st.success if passed == len(rows) else st.error)(f"{passed} of {len(rows)} checks pass")
    st.dataframe(table(rows), hide_index=True, width="stretch")


st.title("Verification")
st.markdown("Every row below is computed now, on this machine, by `ticketnet.lens.parity`: the same functions the "
            "pytest suite asserts on, so this page and CI cannot disagree. Each row names what was compared, "
            "the largest absolute difference, and the tolerance it must stay within.")
run = st.session_state.setdefault("verification_run", 0)
if st.button("Run the suite again", key="verification_rerun", icon=":material/refresh:"):
    run = st.session_state["verification_run"] = run + 1

rows, seconds = parity.formula_rows(run)
show(rows, "The formula against PyTorch")
st.caption(f"One head: `attention()` against `F.scaled_dot_product_attention`. Multi-head: `MultiHead` against "
           f"`nn.MultiheadAttention` holding the same weights, outputs and per-head weights. Three sequences padded "
           f"to lengths {', '.join(map(str, parity.LENGTHS))}; no mask, causal, padding, both; float32 and float64. "
           f"Ran in {seconds * 1000:.0f} ms.")

pick = state.current()
label = pick.label                # an id, a corpus ticket's id, or "your ticket"
if model.is_encoder_router():
    valid = splits.split_rows("valid")
    others = [t for t in valid["text"].tolist() if t != pick.text][:7]
    try:
        rows = parity.encoder_rows(tuple([pick.text, *others]), run)
    except ValueError as exc:
        ui.cannot_route(exc)
    show(rows, f"The encoder router on {label}, against transformers")
    st.caption("Every block's attention runs through the project's own `MultiHead`, its copy of the encoder's query, "
               "key, value and output weights; embeddings, post-norm layers, GELU and the router's head are re-run "
               "from scratch. transformers' own model (eager attention, a second copy loaded for this page only) "
               "reads the same pieces: the embeddings, every layer's attention probabilities and hidden states, and "
               f"the logits are compared over the real pieces, on {label} alone and padded with "
               f"{len(others)} valid tickets.")
    view.end_page()
try:
    show(parity.model_rows(pick.text, run), f"The shipped model on {label}")
except ValueError as exc:
    ui.cannot_route(exc)
st.caption("Both blocks: from-scratch `MultiHead` weights, attention outputs and block outputs against "
           "PyTorch's own trained layers fed the same inputs, and the logits.")

valid = splits.split_rows("valid")
others = [t for t in valid["text"].tolist() if t != pick.text][:COMPANIONS]
try:
    batch = parity.padded_rows(tuple([pick.text, *others]), run)
except ValueError as exc:
    st.info(f"The padded-batch check could not run: {md_escape(exc)}")
else:
    show(batch, f"A padded batch: {label} with {len(others)} valid tickets")
    st.caption("The tickets are padded to the longest one. The last row changes every padded token to a real "
               "word and reruns the model: nothing at an unmasked position, and no logit, may move at all.")
