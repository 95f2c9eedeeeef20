"""Cost: the n × n score matrix measured on this machine, the KV-cache variants, and the router's own sizes."""

from __future__ import annotations

import os
import time

import pandas as pd
import streamlit as st

from dashboard.charts import lesson as lc
from dashboard.data import model
from ticketnet.card import WeightsError
from ticketnet.catalog import weights_in
from ticketnet.lesson import cost

NS = cost.DEFAULT_NS


@st.cache_resource(show_spinner=False)
def _measurements() -> dict:
    """Measurements kept for the life of this server process (one machine session), shared by every visitor."""
    return {}


def run_measurement(ns: tuple[int, ...], repeats: int) -> None:
    bar = st.progress(0.0, text="Starting the measuring process…")

    def progress(done: int, total: int, message: str) -> None:
        bar.progress(done / total, text=f"{done}/{total} · {message}")

    started = time.perf_counter()
    try:
        # The worker process measures on the machine's cores (up to 4), not with the server's one thread per
        # session (dashboard/data/model.py): it is timing attention, not serving pages.
        df, machine = cost.measure(ns, repeats=repeats, progress=progress,
                                   threads=max(1, min(4, os.cpu_count() or 1)))
    except (RuntimeError, OSError) as exc:
        bar.empty()
        st.error(f"The measurement failed: {exc}")
        return
    bar.empty()
    _measurements()[(ns, repeats)] = (df, machine, time.perf_counter() - started)


st.title("Cost")
st.markdown("One head, batch 1, d_k = 64, float32, measured on the machine running this dashboard: the readable "
            "`attention()` (stores the n × n scores and weights), PyTorch's fused "
            "`F.scaled_dot_product_attention`, and ticketnet's `blocked_attention`: exact, keys and queries in "
            "blocks with an online softmax, never storing the n × n matrix.")

c1, c2 = st.columns([3, 1])
largest = c1.select_slider("Measure up to n =", options=list(NS), value=NS[-1], key="cost_max_n")
repeats = c2.number_input("Repeats (median)", 1, 9, 3, key="cost_repeats")
ns = tuple(n for n in NS if n <= largest)
key = (ns, int(repeats))
have = _measurements().get(key)
label = "Measure again" if have else "Measure on this machine"
if st.button(label, key="cost_measure", type="primary" if not have else "secondary", icon=":material/speed:"):
    run_measurement(ns, int(repeats))
    if _measurements().get(key) is not None:
        st.rerun()                                    # redraw with the results and a "Measure again" button

if have is None:
    # The note's times are measured ones of `cost.measure` (docs/performance.md, "Settings measured in the code").
    st.info(f"Nothing measured yet for n up to {largest:,} with {int(repeats)} repeat{'s' if repeats != 1 else ''}. "
            "Measuring up to n = 8,192 with 3 repeats took 7 s on two idle cores, and up to about 35 s while other "
            "programs kept them busy; smaller n and fewer repeats take less. Results are kept until the dashboard "
            "restarts.")
else:
    df, machine, seconds = have
    st.caption(f"Measured in {seconds:.1f} s, {repeats} repeat{'s' if repeats != 1 else ''} per point.")
    lc_machine = cost.machine_label(machine)
    st.altair_chart(lc.cost_time_chart(df, lc_machine))
    if machine.get("memory_method") == "unavailable" or df["peak_mb"].isna().all():
        st.warning("Peak memory cannot be read on this operating system (it needs Linux's /proc).")
    else:
        st.altair_chart(lc.cost_memory_chart(df.dropna(subset=["peak_mb"]), lc_machine))
        st.caption("Peak memory: how much the measuring process's resident set grew during one call (the kernel's "
                   "high-water mark, reset just before), with every allocation above 64 KiB taken fresh from the "
                   "kernel so nothing hides in reused buffers. Smaller allocations are not counted: a call that grew "
                   "it by nothing measurable is drawn hollow on the chart's floor.")
    worst = df.loc[df["variant"] == cost.BLOCKED, "max_diff"].max()
    ok = worst <= cost.EQUAL_TOLERANCE
    (st.success if ok else st.error)(f"blocked_attention equals the readable attention() within {worst:.1e} "
                                     f"(required ≤ {cost.EQUAL_TOLERANCE:.0e}) at every n measured.")
    wide = df.pivot(index="n", columns="variant", values="ms").reset_index()
    st.dataframe(wide, hide_index=True, column_config={v: st.column_config.NumberColumn(f"{v} (ms)", format="%.3f")
                                                       for v in cost.VARIANT_NAMES})

st.subheader("The score matrix")
st.dataframe(cost.score_sizes(NS), hide_index=True, column_config={
    "n": st.column_config.NumberColumn(format="localized"), "scores": st.column_config.NumberColumn(format="localized")})
st.caption("One head, one sequence, float32: n² scores of 4 bytes. The softmax output is a second matrix of the "
           "same size. Q, K and V together grow only like n.")

st.subheader("Variants: what the KV cache and the scores cost")
c = st.columns(4)
q_heads = c[0].number_input("Query heads", 1, 256, 32, key="cost_q_heads")
divisors = [k for k in range(1, int(q_heads) + 1) if q_heads % k == 0]
kv_heads = c[1].select_slider("K/V heads", options=divisors, value=divisors[-1] if 8 not in divisors else 8,
                              key="cost_kv_heads")
head_dim = c[2].number_input("Head dimension", 8, 512, 128, step=8, key="cost_head_dim")
dtype = c[3].selectbox("dtype", list(cost.DTYPE_BYTES), index=1, key="cost_dtype")
c = st.columns(3)
context = c[0].number_input("Context length (tokens)", 1, 1_048_576, 8192, step=1024, key="cost_context")
layers = c[1].number_input("Layers", 1, 256, 32, key="cost_layers")
window = c[2].number_input("Sliding window (0 = none)", 0, 1_048_576, 0, step=512, key="cost_window")
v = cost.variant_costs(int(q_heads), int(kv_heads), int(head_dim), int(window) or None, dtype, int(context),
                       int(layers))
m = st.columns(3)
# A saving is a smaller cache: a down arrow, in green (delta_color "inverse": down is good). The delta starts with an
# ASCII minus, the sign Streamlit reads to choose the arrow (a "−" read as positive and drew an up arrow).
saved = v["cache_saving"] > 0
m[0].metric(f"KV cache ({v['kind']})", f"{v['kv_cache_bytes'] / 1e9:,.3f} GB",
            delta=f"-{v['cache_saving']:.0%} against MHA" if saved else "same as MHA",
            delta_color="inverse" if saved else "off", delta_arrow="auto" if saved else "off")
m[1].metric("Scores per layer", f"{v['score_matrix_bytes_per_layer'] / 1e9:,.3f} GB",
            help="The score matrices of one layer, every query head's.")
m[2].metric("Query heads per K/V head", str(v["query_heads_per_kv_head"]))
st.caption("KV cache = 2 (keys and values) × layers × K/V heads × head dimension × tokens kept × bytes. Sharing "
           "K/V heads shrinks the cache, not the scores: every query head still forms its own score matrix.")
st.table(cost.ATTENTION_DESIGNS.set_index("design"))   # whole sentences, wrapped (a data grid cut them off)

st.subheader("The Tiny router's shape, head by head")
n_tok = st.slider("Tokens in the ticket", 1, 256, 120, key="cost_ticket_tokens")
t = cost.tiny_transformer_costs(int(n_tok))
m = st.columns(3)
m[0].metric("Scores per block", f"{t['scores_per_block']:,}", help="4 heads × n².")
m[1].metric("Score memory a block", f"{t['score_bytes_per_block'] / 1e3:,.1f} kB", help="float32: 4 bytes a score.")
m[2].metric("Attention parameters", f"{t['parameters_per_block']:,}", help="Per block: 4d² + 4d with d = 64: "
            "W_Q, W_K, W_V, W_O and their biases. The number of heads does not appear: more heads cut the same "
            "d columns into more, smaller slices.")
st.dataframe(pd.DataFrame({"heads h": [1, 2, 4, 8, 16], "d_k = d / h": [64, 32, 16, 8, 4],
                           "parameters (4d² + 4d)": [t["parameters_per_block"]] * 5,
                           "score memory per block (kB)": [h * n_tok * n_tok * 4 / 1e3 for h in (1, 2, 4, 8, 16)]}),
             hide_index=True)

st.subheader("The routers side by side")
st.caption(f"Every router the sidebar lists, on one ticket of {n_tok} tokens (pieces, for an encoder): its shape from "
           "its router.json, the weights its blocks multiply by (embeddings left out), and the multiply-adds of one "
           "forward pass. An encoder's ticket is usually longer in pieces than in words.")
sizes = []
for name, folder in model.routers().items():
    try:
        config = model.card_at(weights_in(folder)).meta.get("config") or {}
        shape = {k: int(config[k]) for k in ("d", "h", "n_blocks", "d_ff")}
    except (WeightsError, KeyError, TypeError, ValueError):
        continue                                           # a router that cannot be read is named on its own pages
    c = cost.router_costs(int(n_tok), **shape)
    sizes.append({"router": name, "kind": "encoder" if model.is_encoder(weights_in(folder)) else "tiny",
                  "blocks × heads": f"{shape['n_blocks']} × {shape['h']}", "width d": shape["d"],
                  "block weights": c["block_weights"], "scores (all blocks)": c["scores_per_block"] * shape["n_blocks"],
                  "score memory (kB)": round(c["score_bytes_all_blocks"] / 1e3, 1),
                  "GFLOP per ticket": round(c["gflop_per_ticket"], 3)})
st.dataframe(pd.DataFrame(sizes), hide_index=True, column_config={
    c: st.column_config.NumberColumn(format="localized") for c in ("block weights", "scores (all blocks)")})
