"""Shared page pieces: the picked-ticket header, notices about how the model read it, probability bars.

A ticket's text is user text: it is shown with `st.text`/`st.code` or inside a chart, never as Markdown or
HTML. Every Markdown string built here passes ticket-derived values through `loading.md_escape`.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import loading, state
from dashboard.loading import md_escape


def sidebar() -> None:
    """The picked ticket in the sidebar of every page, with a link back to the table to pick another."""
    with st.sidebar:
        pick = state.current()
        st.caption("PICKED TICKET")
        if pick.custom:
            st.markdown("**Your ticket** (typed)")
        else:
            st.markdown(f"**{md_escape(pick.ticket_id)}** · {md_escape(pick.split)} split · "
                        f"true team **{md_escape(pick.team)}**")
        st.text(_shorten(pick.text, 220))
        st.page_link(str(loading_root() / "pages" / "tickets.py"), label="Pick another ticket",
                     icon=":material/table_rows:")


def loading_root():
    from pathlib import Path

    return Path(__file__).resolve().parent.parent


TEXT_SHOWN = 3_000               # characters of a ticket shown in the page header; a pasted novel is clipped


def show_text(text: str) -> None:
    """The ticket as plain text (never Markdown or HTML); a very long one is clipped, and says so."""
    if len(text) <= TEXT_SHOWN:
        st.text(text)
        return
    st.text(text[:TEXT_SHOWN] + " …")
    st.caption(f"Showing the first {TEXT_SHOWN:,} of {len(text):,} characters.")


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def notices(encoded) -> None:
    """What the model could not read: truncation, words never seen in training."""
    if encoded.truncated:
        st.warning(f"Truncated: the ticket has {encoded.n_total} tokens; the router reads only the first "
                   f"{len(encoded.ids)}. Everything shown is about those {len(encoded.ids)}.",
                   icon=":material/content_cut:")
    if encoded.unknown == len(encoded.ids):
        st.warning("None of these words were seen in training: every token reads as `<unk>`, so the model never "
                   "saw these words and its prediction is a guess from length and position alone.",
                   icon=":material/help:")
    elif encoded.unknown:
        st.caption(f"{encoded.unknown} of {len(encoded.ids)} tokens were never seen in training and read as "
                   "`<unk>`.")


def ticket_header(pick: state.Pick, probs, teams: Sequence[str], tokens: Sequence[str] | None = None) -> None:
    """Who the ticket is, its text as plain text, and the router's prediction with all team probabilities."""
    p = [float(x) for x in probs]
    k = max(range(len(p)), key=p.__getitem__)
    left, right = st.columns([3, 2], gap="large")
    with left:
        if pick.custom:
            st.markdown("**Your ticket** (typed)")
        else:
            extra = f" · pattern *{md_escape(pick.pattern)}*" if pick.pattern else ""
            st.markdown(f"**{md_escape(pick.ticket_id)}** · {md_escape(pick.split)} split · true team "
                        f"**{md_escape(pick.team)}**{extra}")
        show_text(pick.text)
        if tokens is not None:
            st.caption(f"{len(tokens)} tokens read")
    with right:
        verdict = ""
        if pick.team:
            verdict = " ✓ correct" if teams[k] == pick.team else f" ✗ misrouted (true: {pick.team})"
        st.metric("prediction", f"{teams[k]}", delta=f"confidence {p[k]:.2f}{verdict}", delta_color="off")
        st.altair_chart(probability_chart(p, teams, pick.team), width="stretch")


def probability_chart(probs: Sequence[float], teams: Sequence[str], true_team: str | None = None) -> alt.Chart:
    df = pd.DataFrame({"team": list(teams), "probability": [float(x) for x in probs]})
    df["true team"] = df["team"].eq(true_team) if true_team else False
    return alt.Chart(df).mark_bar().encode(
        y=alt.Y("team:N", sort=list(teams), title=None, axis=alt.Axis(labelOverlap=False)),
        x=alt.X("probability:Q", scale=alt.Scale(domain=[0, 1]), title="probability", axis=alt.Axis(format=".0%")),
        color=alt.condition("datum['true team']", alt.value("#2e7d32"), alt.value("#4c78a8")),
        tooltip=["team:N", alt.Tooltip("probability:Q", format=".3f"), "true team:N"],
    ).properties(height=alt.Step(20), title=alt.Title("team probabilities (green: true team)", fontSize=11,
                                                      fontWeight="normal", anchor="start"))


def parity_badge(max_difference: float, differences: dict[str, float] | None = None) -> None:
    """"from-scratch = PyTorch within 4.8e-07": the largest difference on this ticket, weights and outputs."""
    ok = max_difference <= 1e-5
    text = f"from-scratch = PyTorch within {max_difference:.1e}" if ok else \
        f"from-scratch differs from PyTorch by {max_difference:.1e}"
    st.badge(text, icon=":material/check_circle:" if ok else ":material/warning:", color="green" if ok else "red",
             help="Largest absolute difference, on this ticket, between the from-scratch MultiHead and PyTorch's own "
                  "layers fed the same inputs: attention weights, attention outputs and block outputs of both "
                  "blocks, and the logits." + ("" if differences is None else " Per part: " + ", ".join(
                      f"{k} {v:.1e}" for k, v in differences.items())))


def token_choice_labels(tokens: Sequence[str]) -> list[str]:
    """Selectbox labels for token positions: "3 · not"."""
    return [f"{i} · {t}" for i, t in enumerate(tokens)]


def default_query_row(tokens: Sequence[str]) -> int:
    """The first 'not' if the ticket has one (negations are where routing is hard), else the first token."""
    return next((i for i, t in enumerate(tokens) if t == "not"), 0)


def csv_download(df: pd.DataFrame, label: str, file_name: str, key: str) -> None:
    st.download_button(label, df.to_csv(index=False).encode("utf-8"), file_name=file_name, mime="text/csv",
                       icon=":material/download:", key=key, on_click="ignore")
