"""Shared page pieces: the picked-ticket header, notices about how the model read it, probability bars."""

# A ticket's text is user text: it is shown with `st.text`/`st.code` or inside a chart, never as Markdown or
# HTML. Every Markdown string built here passes ticket-derived values through `text.md_escape`.

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import narrative, state, view, views
from dashboard.charts import quality, theme
from dashboard.data import model, splits, ticket
from dashboard.render import chart
from dashboard.text import md_escape
from ticketnet.card import shown_below
from ticketnet.paths import ROOT


def sidebar() -> None:
    """The picked ticket in the sidebar of every page, with a link back to the table to pick another."""
    with st.sidebar:
        pick = state.current()
        st.caption("PICKED TICKET")
        st.markdown(_who(pick))
        st.text(_shorten(pick.text, 220))
        st.page_link(str(ROOT / "pages" / "tickets.py"), label="Pick another ticket",
                     icon=":material/table_rows:")


def _who(pick: state.Pick, detail: bool = False) -> str:
    """The ticket's name as Markdown: its id and split and true team, or "Your ticket"; `detail` adds a corpus
    ticket's team and a split ticket's pattern (the page header has room for them, the sidebar has not)."""
    if pick.custom and pick.corpus_id:
        team = f" · true team **{md_escape(pick.team)}**" if detail and pick.team else ""
        return f"**{md_escape(pick.corpus_id)}** · corpus ticket{team}"
    if pick.custom:
        return "**Your ticket** (typed)"
    extra = f" · pattern *{md_escape(pick.pattern)}*" if detail and pick.pattern else ""
    return (f"**{md_escape(pick.ticket_id)}** · {md_escape(pick.split)} split · true team **{md_escape(pick.team)}**"
            f"{extra}")


def explain_links(pick: state.Pick, row: dict | None = None) -> None:
    """Right beside the Tickets table: the picked ticket in one line and links to its Heads and Interpretation
    pages, so a click on a row changes something where the reader is looking (the card is far up the page)."""
    root = ROOT / "pages"
    name = pick.label
    # One row that wraps, each piece as wide as its words (columns cut the links to "Heads of T-" at 1000 px), the
    # line first: the table's hover toolbar floats over the right end of the row above the table, where it covered
    # the line when the line was the row's last column.
    row_box = st.container(horizontal=True, gap="small", vertical_alignment="center")
    if row is not None:
        verdict = "correct" if row["correct"] else "misrouted"
        row_box.markdown(f"Picked **{md_escape(name)}** · true {md_escape(row['team'])} → predicted "
                         f"{md_escape(row['predicted'])} ({narrative.fmt(row['confidence'])}, {verdict})", width="content")
    else:
        row_box.markdown(f"Picked **{md_escape(name)}**" + ("" if pick.custom else f" ({md_escape(pick.split)} split)"),
                         width="content")
    row_box.page_link(str(root / "heads.py"), label=f"Heads of {name}", icon=":material/grid_on:", width="content")
    row_box.page_link(str(root / "interpretation.py"), label=f"Interpretation of {name}",
                      icon=":material/troubleshoot:", width="content")


TEXT_SHOWN = 3_000               # characters of a ticket shown in the page header; a pasted novel is clipped


def show_text(text: str) -> None:
    """The ticket as plain text (never Markdown or HTML); a very long one is clipped, and says so."""
    if len(text) <= TEXT_SHOWN:
        st.text(text)
        return
    st.text(text[:TEXT_SHOWN] + " …")
    st.caption(f"Showing the first {TEXT_SHOWN:,} of {len(text):,} characters.")


THREAD_TOGGLE = "Read the quoted part too"


def thread_note(split, whole: bool) -> str:
    """The one line under an e-mail ticket (Markdown, escaped): what the router set aside and how much of it, or
    that it is read at the analyst's request."""
    what = split.reason.rstrip(".")
    what = what[:1].lower() + what[1:]
    if whole:
        return md_escape(f"Reading the whole thread, as asked: the router would have {what} "
                         f"({split.set_aside_chars:,} characters); here it reads them too.")
    return md_escape(f"{what[:1].upper() + what[1:]} ({split.set_aside_chars:,} characters): the router read the "
                     "new message above only.")


def set_aside_text(split) -> None:
    """What the router set aside, greyed out under the new message: escaped plain text, line by line."""
    shown = split.set_aside if len(split.set_aside) <= TEXT_SHOWN else split.set_aside[:TEXT_SHOWN] + " …"
    # Grey by Markdown's colour directive: a caption alone draws in the body text's colour in this theme.
    st.caption("  \n".join(f":gray[{md_escape(line)}]" for line in shown.splitlines() if line.strip()) or " ")


def _thread_switched(on_toggle: Callable[[bool], None], toggle_key: str) -> None:
    on_toggle(bool(st.session_state[toggle_key]))


def thread_view(text: str, whole: bool = False, toggle_key: str | None = None,
                on_toggle: Callable[[bool], None] | None = None, elsewhere: str = "") -> bool:
    """An e-mail ticket as the router reads it: the new message as the ticket, what was set aside greyed out below
    it, a one-line note and the switch that reads the quoted part too (`whole`: it is on; no switch without a
    `toggle_key`, the note then ends with `elsewhere`, where to switch it). A ticket with nothing set aside is shown
    whole, as before. Returns whether it has a part set aside."""
    split = ticket.thread(text)
    if not split.set_aside:
        show_text(text)
        return False
    if whole:
        show_text(text)
    else:
        show_text(split.new)
        set_aside_text(split)
    st.caption(thread_note(split, whole) + (" " + md_escape(elsewhere) if elsewhere else ""),
               help="The router reads an e-mail's new message, not the quoted history, forwarded chain or signature "
                    "below it. Switch the quoted part on to see how the router reads the whole text, for this ticket "
                    "only.")
    if toggle_key is None:
        return True
    st.session_state[toggle_key] = whole            # the analyst's choice as remembered, whichever page set it
    st.toggle(THREAD_TOGGLE, key=toggle_key, on_change=None if on_toggle is None else _thread_switched,
              args=(on_toggle, toggle_key),
              help="Route and interpret this ticket on its whole text, quoted history and signature included. "
                   "Kept in the link (?thread=whole) until another ticket is picked.")
    return True


def thread_part(pick: state.Pick) -> None:
    """The picked ticket's text for its header (`thread_view`), the switch tied to the picked ticket and the URL."""
    thread_view(pick.text, pick.whole_thread, f"whole_thread_{pick.digest}",
                partial(state.read_whole_thread, pick))
    state.write_choice(state.THREAD, state.WHOLE if pick.whole_thread else None)


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def notices(encoded) -> None:
    """What the model could not read: truncation, words never seen in training."""
    unit = "pieces" if getattr(encoded, "word_ids", None) is not None else "tokens"
    if encoded.truncated:
        st.warning(f"Truncated: the ticket has {encoded.n_total:,} {unit}; the router reads only the first "
                   f"{len(encoded.ids):,}. Everything shown is about those {len(encoded.ids):,}.",
                   icon=":material/content_cut:")
    if unit == "pieces":
        return
    if encoded.unknown == len(encoded.ids):
        st.warning("None of these words were seen in training: every token reads as `<unk>`, so the model never "
                   "saw these words and its prediction is a guess from length and position alone.",
                   icon=":material/help:")
    elif encoded.unknown:
        st.caption(md_escape(narrative.unknown_sentence(encoded)))


def cannot_route(exc: Exception) -> None:
    """The one message every page shows for a ticket the router cannot read, then the page stops."""
    st.warning(f"This ticket cannot be routed: {md_escape(exc)}")
    view.end_page()


def inspection_or_stop(pick: state.Pick):
    """The picked ticket's inspection (cached per text and `whole_thread`), or the refusal and the end of the
    page's run."""
    try:
        return ticket.inspection(pick.text, pick.whole_thread)
    except ValueError as exc:                    # e.g. a typed ticket with nothing the tokenizer keeps
        cannot_route(exc)


def prediction_or_stop(pick: state.Pick):
    """(team probabilities, encoded ticket) for the picked ticket's card. A split ticket's come from its split's
    stored routing when that is at hand, with no model run (the Tickets page then draws before torch has even
    loaded); any other ticket's, and one read with its whole thread, from its inspection. Stops the page for a
    ticket the router cannot read."""
    if not pick.custom and not pick.whole_thread:
        probs = splits.routed_probs(pick.split, pick.ticket_id)
        if probs is not None:
            try:
                return probs, model.card().encode(pick.text)
            except ValueError as exc:
                cannot_route(exc)
    ins = inspection_or_stop(pick)
    return [float(x) for x in ins.probs], ins.encoded


def ticket_header(pick: state.Pick, probs, teams: Sequence[str], tokens: Sequence[str] | None = None) -> None:
    """Who the ticket is, its text as plain text, and the router's prediction with all team probabilities. `tokens`
    are counted as pieces on an encoder router ([CLS] and [SEP] among them)."""
    p = [float(x) for x in probs]
    k = max(range(len(p)), key=p.__getitem__)
    left, right = st.columns([3, 2], gap="large")
    with left:
        st.markdown(_who(pick, detail=True))
        thread_part(pick)
        if tokens is not None:
            unit = "piece" if model.is_encoder_router() else "token"
            st.caption(f"{narrative.count(len(tokens), unit)} read")
    with right:
        verdict = ""
        if pick.team:
            verdict = " · ✓ correct" if teams[k] == pick.team else f" · ✗ misrouted (true: {md_escape(pick.team)})"
        # The confidence and verdict as a line of text under the metric: as the metric's delta they were cut to
        # "confidence 0.96 ✓ corr…" in a laptop's narrow column, and a delta drew an up arrow beside them.
        found = assessment(pick.text, p, pick.whole_thread)
        # A confidence under the threshold is shown with the digits the flag below uses (0.897, not 0.90).
        shown = shown_below(p[k], found.min_confidence)[0] if found and found.low_confidence else f"{p[k]:.2f}"
        st.metric("prediction", f"{teams[k]}")
        st.markdown(f"confidence **{shown}**{verdict}")
        chart(probability_chart, p, list(teams), pick.team, width="stretch")
    if found and found.flagged:
        st.warning(md_escape(found.message), icon=":material/report:")
    elif found:
        st.caption(md_escape(narrative.trust_sentence(found, teams[k])))


def assessment(text: str, probs: Sequence[float], whole_thread: bool = False):
    """The flags of any ticket, typed or from a split or a scan (`RouterCard.assess`): too many unknown words, or a
    confidence below the calibrated threshold in router.json. From the card alone, so a split ticket's page still
    draws without torch; None for a ticket with nothing to read (the page says so elsewhere)."""
    card = model.card()
    if whole_thread:
        card = replace(card, whole_thread=True)
    try:
        return card.assess(card.encode(text), probs)
    except ValueError:
        return None


PROBABILITY_TOP = 12               # more teams than this: the most probable ones (and the true team) are drawn


def probability_chart(probs: Sequence[float], teams: Sequence[str], true_team: str | None = None) -> alt.Chart:
    df = pd.DataFrame({"team": list(teams), "probability": [float(x) for x in probs]})
    df["true team"] = df["team"].eq(true_team) if true_team else False
    title = ["team probabilities"]
    if len(df) > PROBABILITY_TOP:
        top = set(df.nlargest(PROBABILITY_TOP - 1, "probability", keep="first").index) | set(df.index[df["true team"]])
        df = df.loc[sorted(top)]
        title = [f"the {len(df)} most probable of {len(teams)} teams"]
    # Three ticks, the outer labels kept inside the plot: in a narrow column Vega-Lite's default ticks ran the labels
    # together ("0%100%"). Sizes and title in the constructor, not a `.properties` copy.
    return alt.Chart(df, height=alt.Step(20), title=alt.Title([*title, *(["green: true team"] if true_team else [])],
                                                              fontSize=11, fontWeight="normal", anchor="start")
                     ).mark_bar().encode(
        y=alt.Y("team:N", sort=list(df["team"]), title=None, axis=alt.Axis(labelOverlap=False, labelLimit=110)),
        x=alt.X("probability:Q", scale=alt.Scale(domain=[0, 1]), title="probability",
                axis=alt.Axis(format=".0%", values=[0, 0.5, 1], labelFlush=True)),
        color=theme.when("datum['true team']", "#2e7d32", "#4c78a8"),
        tooltip=[alt.Tooltip("team:N"), alt.Tooltip("probability:Q", format=".3f"), alt.Tooltip("true team:N")],
    )


def parity_badge(max_difference: float | None, differences: dict[str, float] | None = None) -> None:
    """"from-scratch = PyTorch within 4.8e-07": the largest difference on this ticket, weights and outputs. None: an
    encoder router, whose reference (transformers, a second copy of the model) the Verification page loads."""
    if max_difference is None:
        st.badge("from-scratch copy of the encoder: parity with transformers on the Verification page",
                 icon=":material/info:", color="gray",
                 help="Every block of this router runs through the project's own MultiHead. Checking it against "
                      "transformers' own forward needs a second copy of the model in memory, so that check is made "
                      "on the Verification page, on demand.")
        return
    ok = max_difference <= 1e-5
    text = f"from-scratch = PyTorch within {max_difference:.1e}" if ok else \
        f"from-scratch differs from PyTorch by {max_difference:.1e}"
    st.badge(text, icon=":material/check_circle:" if ok else ":material/warning:", color="green" if ok else "red",
             help="Largest absolute difference, on this ticket, between the from-scratch MultiHead and PyTorch's own "
                  "layers fed the same inputs: attention weights, attention outputs and block outputs of both "
                  "blocks, and the logits." + ("" if differences is None else " Per part: " + ", ".join(
                      f"{narrative.part_name(k)} {v:.1e}" for k, v in differences.items())))


def token_choice_labels(tokens: Sequence[str]) -> list[str]:
    """Selectbox labels for token positions: "3 · not"."""
    return [f"{i} · {t}" for i, t in enumerate(tokens)]


def default_query_row(tokens: Sequence[str]) -> int:
    """The first 'not' if the ticket has one (negations are where routing is hard), else the first token."""
    return next((i for i, t in enumerate(tokens) if t == "not"), 0)


def selection(event, part: str) -> list:
    """What a table's or chart's selection event holds under `part` (a table's "rows", a chart's parameter name);
    [] when there is no event or nothing is selected."""
    try:
        return list(event["selection"].get(part) or [])
    except (KeyError, TypeError, AttributeError):
        return []


def chart_cell(chart_key: str, event, fresh: bool, cell_key: str | Mapping[str, str]) -> None:
    """Set the view's confusion cell from a click on the matrix drawn under `chart_key`: under `cell_key` as
    {true, predicted}, or with a mapping {"true": key, "predicted": key}, each part under its own key (a view whose
    links name them apart). A matrix drawn afresh keeps the view's cell (`view.selection_changed`)."""
    picked = selection(event, quality.CONFUSION_PARAM)
    chosen = {"true": picked[0].get("true"), "predicted": picked[0].get("predicted")} if picked else None
    if not view.selection_changed(chart_key, chosen, fresh):
        return
    if isinstance(cell_key, str):
        st.session_state[cell_key] = chosen
    else:
        for part, key in cell_key.items():
            st.session_state[key] = chosen[part] if chosen else None


def typed_placeholder() -> str:
    """The example in the "Write your own ticket" box: Larkfield's card charge on the default router, the start of a
    real ticket of the router's own valid split on a team's router (its teams are not Larkfield's)."""
    if model.router_name() == model.DEFAULT_ROUTER:
        return "e.g. My card was charged twice for one order. Can you refund one?"
    rows = splits.split_rows(splits.available()[0])
    if not len(rows):
        return "Paste a ticket as a customer wrote it."
    words = str(rows.iloc[0]["text"]).split()
    return "e.g. " + " ".join(words[:14]) + (" …" if len(words) > 14 else "")


def copy_choice(widget_key: str, key: str) -> None:
    """A widget's callback: keep its value under `key` too (a view's field that outlives the widget's own key)."""
    st.session_state[key] = st.session_state[widget_key]


def link_refusals(refused: Sequence[str], what: str = "the page") -> None:
    """Say which of a link's values the page could not open (`View.restore`'s refusals), once."""
    sentence = view.refused_sentence(refused, what)
    if sentence:
        st.warning(md_escape(sentence), icon=":material/link_off:")


def csv_bytes(df: pd.DataFrame) -> bytes:
    """The table as UTF-8 CSV, no index column."""
    return df.to_csv(index=False).encode("utf-8")


def csv_download(df: pd.DataFrame, label: str, file_name: str, key: str) -> None:
    """A button that downloads `df` as CSV, the file written only when it is clicked.

    Deferred (a callable for `data`): the button carries no /media URL, so the browser fetches nothing when it
    draws the button. With the bytes passed directly, every run stored a file and the browser checked its URL on
    mount; under load a slow client asked after Streamlit had already dropped that run's file (its page had moved
    on and two script runs, any session's, had finished): a 404 and "Download Button source error". It also
    spares every rerun a `to_csv` of the table. A click generates the file and fetches it at once.
    """
    frozen = df.copy(deep=False)                    # the table as shown on this run, whatever happens to `df` later
    st.download_button(label, partial(csv_bytes, frozen), file_name=file_name, mime="text/csv",
                       icon=":material/download:", key=key, on_click="ignore")


def split_status(split: str, kind: str, what: str) -> None:
    """Which split the results below are about, which others are computed, and that each is computed on its own."""
    done = splits.computed_splits(kind)
    others = [s for s in splits.available() if s != split]        # the splits this router's data has
    here = "computed" if split in done else "not computed yet"
    ready = [s for s in others if s in done]
    waiting = [s for s in others if s not in done]
    text = f"{what} of the **{split}** split: {here}."
    if ready:
        text += f" Also computed: {', '.join(ready)}."
    if waiting:
        text += (f" Each split is computed on its own: pick {' or '.join(waiting)} above to compute "
                 f"{'it' if len(waiting) == 1 else 'them'} too.")
    text += " Results are kept on disk and come back after a restart."
    st.caption(text)


def _run_with_progress(label: str, help: str, working: str, key: str,
                       compute: Callable[[Callable[[int, int], None]], object]) -> None:
    """A button that runs `compute(progress)` with a progress bar of tickets done, then reruns to show the result."""
    if not st.button(label, icon=":material/calculate:", key=key, help=help):
        return
    bar = st.progress(0.0, text=f"{working}…")

    def progress(done: int, total: int) -> None:
        bar.progress(done / max(total, 1), text=f"{working}: {done} of {total} tickets")

    compute(progress)
    bar.empty()
    st.rerun()


def head_importance_button(split: str, n_tickets: int, key: str) -> None:
    """The button that masks each head over a split, with a progress bar per chunk of tickets."""
    # The rate, tickets a second on two cores, is the measured one (docs/performance.md, "Settings measured in the
    # code").
    estimate = max(1, round(n_tickets / 115))
    _run_with_progress("Compute head importance",
                       f"Each of the 8 heads switched off in turn over the {n_tickets} tickets of the {split} split: "
                       f"about {estimate} s on two cores. Computed once, kept on disk.",
                       "Masking each head in turn", key, partial(splits.compute_head_importance, split))


def split_interpretation_button(split: str, n_tickets: int, key: str) -> None:
    """The button that interprets a whole split once (progress bar, then a rerun that shows the results)."""
    # The rate, tickets a second on two cores, is the bench's (docs/performance.md, "The whole valid split").
    estimate = max(1, round(n_tickets / 100))
    _run_with_progress("Compute interpretation for this split",
                       f"For every ticket: Kendall τ of each attention signal against the deletion effect, and ERASER "
                       f"scores. About {estimate} s for the {n_tickets} tickets of the {split} split on two cores; "
                       "computed once, kept on disk and shared by the Tickets and Interpretation pages.",
                       "Interpreting the split", key, partial(splits.compute_split_interpretation, split))


# -- route interventions: one unit toggle per page, effects printed without "0.00" -------------------------------------
PHRASE_SIGNALS_KEY = views.PHRASES_KEY    # the switch's key; ?phrases=1 in the URL (the Interpretation view)
PHRASE_SIGNALS_ON = views.PHRASES_ON


def _phrase_signals_switched(joining: Sequence[str], leaving: Sequence[str], single: Sequence[str]) -> None:
    """The phrase signals join the `joining` multiselects when switched on; switched off, they leave those and
    `leaving`, and a `single` select holding one falls back to its default (a widget keeps its value when its
    options change, and a value outside them is an error)."""
    from ticketnet.interpret.signals import PHRASE_SIGNALS

    on = st.session_state.get(PHRASE_SIGNALS_KEY) == PHRASE_SIGNALS_ON
    for key in (*joining, *leaving):
        if key in st.session_state:
            kept = [s for s in st.session_state[key] if s not in PHRASE_SIGNALS]
            st.session_state[key] = kept + (list(PHRASE_SIGNALS) if on and key in joining else [])
    for key in single:
        if not on and st.session_state.get(key) in PHRASE_SIGNALS:
            del st.session_state[key]


def phrase_signals_toggle(joining: Sequence[str] = (), leaving: Sequence[str] = (),
                          single: Sequence[str] = ()) -> bool:
    """Whether to compute the phrase signals (phrase deletion, phrase Shapley), mirrored in the URL as ?phrases=1.

    They delete every phrase and, up to 10 phrases, every coalition of them (1,024 passes): on a long ticket more
    than the rest of the Interpretation page together, so they are computed when asked for. The keys name the
    widgets whose choices follow the switch (`_phrase_signals_switched`)."""
    # A segmented control, like the page's unit: a toggle's frontend module is fetched the first time one is drawn,
    # and a server that dies in that moment leaves "Failed to fetch dynamically imported module" in its place.
    choice = st.segmented_control(
        "Phrase signals", ("off", PHRASE_SIGNALS_ON), key=PHRASE_SIGNALS_KEY, required=True,
        default=view.start(PHRASE_SIGNALS_KEY),
        on_change=_phrase_signals_switched, args=(tuple(joining), tuple(leaving), tuple(single)),
        help="Add two signals that score each token by its phrase: the phrase deleted, and its Shapley value over "
             "phrase coalitions (exact up to 10 phrases, else sampled). They join the charts and the agreement, "
             "ERASER and evidence tables.")
    return choice == PHRASE_SIGNALS_ON


def unit_toggle(team: str, key: str, parts: str = "token, phrase, edge, head", coloured: bool = True,
                margin: bool = False) -> str:
    """The effect unit of every intervention view below it (logit difference by default, or probability), and a
    caption saying which one the page shows (`parts`, `coloured`, `margin`: `narrative.unit_sentence`). Heads and
    Interpretation share one unit (their views' `UNIT_KEY`)."""
    unit = st.segmented_control("Effect unit", tuple(narrative.UNIT_NAMES), key=key, required=True,
                                default=view.start(key),
                                format_func=narrative.UNIT_NAMES.__getitem__,
                                help="Logit difference: log(p / (1 − p)) of the target team, which does not saturate "
                                     "near 0 or 1. Probability: p(team) itself.") or views.UNIT_DEFAULT
    st.caption(md_escape(narrative.unit_sentence(unit, team, parts, coloured, margin)))
    return unit
