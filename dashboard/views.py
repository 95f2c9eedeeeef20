"""Each page's view: its choices, their names in the URL, defaults and codecs, declared once (see dashboard/view.py)."""

# A page builds its view on each run with the options at hand, calls `restore()` before its widgets and `remember()`
# after them. The Heads and Interpretation pages share one effect unit (`UNIT_KEY`), so the unit picked on one is the
# unit of the other. A choice that belongs to a ticket (a query row, a target team) is keyed by the ticket's text, so
# another ticket starts at its own default.

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import streamlit as st

from dashboard import filters, narrative, view
from dashboard.data import corpus as corpus_data
from dashboard.data import policy as policy_data

UNIT_KEY = "effect_unit"         # the effect unit of Heads and Interpretation, one for both pages (a plain key)
UNIT_DEFAULT = "logit_diff"
HEADS_UNIT, INTERPRETATION_UNIT = "heads_unit", "interp_unit"      # each page's own unit widget
PHRASES_KEY = "phrase_signals"   # the phrase signals' switch ("on" / "off"), ?phrases=1
PHRASES_ON = "on"
CORPUS_FOLDER_KEY = "corpus_folder"  # the scan shown on the Corpus page (its folder's path)
CORPUS_CELL_TRUE, CORPUS_CELL_PRED = "corpus_cell_true", "corpus_cell_pred"   # the cell that filters its tickets


def _unit(widget_key: str) -> view.Field:
    return view.Field(widget_key, "unit", UNIT_DEFAULT, view.choice(tuple(narrative.UNIT_NAMES),
                                                                   "logit_diff or probability"), shared=UNIT_KEY)


def _block(n_blocks: int, key: str = "block") -> view.Field:
    return view.Field(key, "block", 1, view.bounded_int(1, n_blocks, f"a block of this router (1 to {n_blocks})"))


def _query_row(key: str, n_tokens: int, first_row: int) -> view.Field:
    return view.Field(key, "row", first_row, view.bounded_int(0, n_tokens - 1, f"a token position of this ticket "
                                                                                f"(0 to {n_tokens - 1})"))


# -- Tickets -----------------------------------------------------------------------------------------------------------
def tickets(splits: Sequence[str], teams: Sequence[str]) -> view.View:
    """The Tickets page's split, filters, sort and confusion cell (?split=test&misrouted=1&conf=0-0.6
    &sort=confidence-lowest-first&cell=delivery,payments). The patterns and sorts a split offers are fitted once the
    split is drawn (`view.allow`)."""
    any_team = view.choice(["any", *teams], f"a team of this router ({', '.join(teams)})")
    split = "valid" if "valid" in splits else (splits[0] if splits else "valid")
    # Links written before sorts were named give their position (?sort=1).
    by_position = {str(i): s for i, s in enumerate(filters.SORTS)}
    return view.View("tickets", (
        view.Field("split", "split", split, view.choice(splits)),
        view.Field("true_filter", "true", "any", any_team),
        view.Field("pred_filter", "pred", "any", any_team),
        view.Field("pattern_filter", "pattern", [], view.subset()),
        view.Field("misrouted", "misrouted", False, view.flag()),
        view.Field("confidence_range", "conf", (0.0, 1.0), view.unit_range()),
        view.Field("ticket_search", "q", "", view.text(filters.SEARCH_URL_LIMIT)),
        view.Field("sort_by", "sort", filters.SORTS[0], view.slugged(filters.SORTS, by_position)),
        view.Field(filters.CELL_KEY, "cell", None, view.cell(teams), widget=False),
    ))


# -- Heads and Interpretation ------------------------------------------------------------------------------------------
def heads(text_key: str, n_blocks: int, n_heads: int, n_tokens: int, first_row: int) -> view.View:
    """Block, query row (0-based, as the picker lists it), the head to cut and the unit
    (?block=2&row=3&head=4&unit=probability). The head is None until picked: the page offers the head that puts the
    largest weight on one token of the row."""
    return view.View("heads", (
        _block(n_blocks),
        _query_row(f"query_row_{text_key}", n_tokens, first_row),
        view.Field("ko_head", "head", None, view.bounded_int(0, n_heads - 1, f"a head (1 to {n_heads})", shift=1),
                   widget=False),
        _unit(HEADS_UNIT),
    ))


LEVELS = ("words", "pieces")       # an encoder router's heatmaps: a word view for analysts, the pieces it reads


def encoder_heads(n_blocks: int, n_heads: int) -> view.View:
    """An encoder router's Heads: layer, level (words or pieces) and the head drawn alone for long tickets
    (?block=3&level=pieces&one_head=7)."""
    return view.View("encoder_heads", (
        _block(n_blocks),
        view.Field("heads_level", "level", LEVELS[0], view.choice(LEVELS)),
        view.Field("one_head", "one_head", 0, view.bounded_int(0, n_heads - 1, f"a head (1 to {n_heads})", shift=1)),
    ))


def encoder_heads_row(text_key: str, level: str, n_rows: int) -> view.View:
    """The query row of an encoder router's Heads (?row=5), kept per level: a word's position is not a piece's.
    It starts on the first word, after [CLS]."""
    return view.View(f"encoder_heads_row_{level}", (_query_row(f"query_row_{text_key}_{level}", n_rows,
                                                                  1 if n_rows > 1 else 0),))


def _phrases() -> view.Field:
    return view.Field(PHRASES_KEY, "phrases", "off",
                      view.Codec(lambda v: "1" if v == PHRASES_ON else None,
                                 lambda raw: PHRASES_ON if raw.strip() == "1" else "off" if raw.strip() == "0" else None,
                                 "1 or 0", lambda v: v if v in ("off", PHRASES_ON) else None))


def encoder_interpretation(text_key: str, teams: Sequence[str], predicted: int) -> view.View:
    """An encoder router's Interpretation: the target team, the unit and the phrase signals
    (?target=delivery&unit=prob&phrases=1)."""
    return view.View("encoder_interpretation", (
        view.Field(f"target_{text_key}", "target", predicted, view.team_index(teams)),
        _unit(INTERPRETATION_UNIT),
        _phrases(),
    ))


def interpretation(text_key: str, teams: Sequence[str], predicted: int, signal_defaults: dict[str, list[str]],
                   focus_default: str) -> view.View:
    """Target team (by name; the predicted team by default), unit and phrase signals (?target=delivery&unit=
    probability&phrases=1). The signals picked for the charts and tables are kept for the session, not linked."""
    session_only = lambda values: False                                                    # noqa: E731
    return view.View("interpretation", (
        view.Field(f"target_{text_key}", "target", predicted, view.team_index(teams)),
        _unit(INTERPRETATION_UNIT),
        _phrases(),
        *(view.Field(key, f"_{key}", default, view.subset(), session_only) for key, default in signal_defaults.items()),
        view.Field("focus_signal", "_focus", focus_default, view.text(200), session_only),
    ))


# -- Compare routers ---------------------------------------------------------------------------------------------------
def compare_routers(available: Sequence[str], default_a: str, default_b: str) -> view.View:
    """Router A and B, by name (?a=larkfield&b=retrain)."""
    routers = view.choice(available, f"a router on this server ({', '.join(available)})")
    return view.View("compare_routers", (view.Field("cmp_a", "a", default_a, routers, always=True),
                                         view.Field("cmp_b", "b", default_b, routers, always=True)))


def compare_split(shared: Sequence[str]) -> view.View:
    """The split both routers are read on (?split=test)."""
    default = "test" if "test" in shared else shared[0]
    return view.View("compare_split", (view.Field("cmp_split", "split", default, view.choice(shared), always=True),))


def compare_ticket(teams: Sequence[str], kinds: Sequence[str], every_team: str) -> view.View:
    """The flip table's filters and the ticket picked in it (?ticket=T-65052). Any id is taken from a link: whether
    the split holds it is the page's to say."""
    ticket = view.Codec(str, lambda raw: raw.strip() or None, "a ticket id")
    return view.View("compare_ticket", (
        view.Field("cmp_kinds", "kinds", list(kinds), view.subset(kinds)),
        view.Field("cmp_team", "team", every_team, view.choice([every_team, *teams])),
        view.Field("cmp_ticket", "ticket", None, ticket, widget=False),
    ))


def compare_heads(ticket_id: str, n_blocks: int, n_heads: int, n_tokens: int, first_row: int) -> view.View:
    """Block, head, query row, unit and scale of the side-by-side ticket (?block=2&head=3&row=5)."""
    return view.View("compare_heads", (
        _block(n_blocks, "cmp_block"),
        view.Field("cmp_head", "head", 1, view.bounded_int(1, n_heads, f"a head (1 to {n_heads})")),
        _query_row(f"cmp_row_{ticket_id}", n_tokens, first_row),
        view.Field("cmp_unit", "unit", UNIT_DEFAULT, view.choice(tuple(narrative.UNIT_NAMES))),
        view.Field("cmp_own_scale", "own_scale", False, view.flag()),
    ))


# -- Routing policy ----------------------------------------------------------------------------------------------------
def policy(eval_splits: Sequence[str]) -> view.View:
    """Target kind and value, α, set method, the split shown and the guarantee (?target=precision&precision=0.98
    &alpha=0.05&method=lac&on=handwritten&vouch=0.05). A target's value rides only while that target is chosen."""
    p = policy_data
    is_precision = lambda values: values.get("policy_target") == p.PRECISION            # noqa: E731
    d = p.DEFAULTS
    return view.View("policy", (
        view.Field("policy_target", "target", d["policy_target"], view.choice(tuple(p.TARGETS)), always=True),
        view.Field("policy_precision", "precision", d["policy_precision"], view.snapped(*p.PRECISION_RANGE),
                   is_precision, always=True),
        view.Field("policy_automation", "automation", d["policy_automation"], view.snapped(*p.AUTOMATION_RANGE),
                   lambda values: values.get("policy_target") == p.AUTOMATION, always=True),
        view.Field("policy_alpha", "alpha", d["policy_alpha"], view.snapped(*p.ALPHA_RANGE), always=True),
        view.Field("policy_method", "method", d["policy_method"], view.choice(tuple(p.METHODS)), always=True),
        view.Field("policy_on", "on", d["policy_on"] if d["policy_on"] in eval_splits else eval_splits[0],
                   view.choice(eval_splits)),
        view.Field("policy_vouch", "vouch", d["policy_vouch"], view.choice(tuple(p.GUARANTEES)), is_precision),
    ))


def adopt_stored_policy(stored) -> None:
    """A button's callback: set the policy view's choices to those the stored policy (a `ticketnet.policy.Policy`)
    was fitted with; values outside a slider's range are left as they are."""
    p, ss = policy_data, st.session_state
    target = dict(stored.thresholds.target)
    if "precision" in target and (value := view.snapped(*p.PRECISION_RANGE).decode(str(target["precision"]))):
        ss["policy_target"], ss["policy_precision"] = p.PRECISION, value
    elif "coverage" in target and (value := view.snapped(*p.AUTOMATION_RANGE).decode(str(target["coverage"]))):
        ss["policy_target"], ss["policy_automation"] = p.AUTOMATION, value
    alpha = view.snapped(*p.ALPHA_RANGE).decode(str(stored.conformal.alpha))
    if alpha is not None:
        ss["policy_alpha"] = alpha
    if stored.conformal.method in p.METHODS:
        ss["policy_method"] = stored.conformal.method
    delta = target.get("guarantee")
    ss["policy_vouch"] = next((k for k, v in p.GUARANTEES.items() if v == delta), p.DEFAULTS["policy_vouch"])


# -- Corpus ------------------------------------------------------------------------------------------------------------
def corpus_scan(scans: Sequence[str]) -> view.View:
    """The scan, by its folder's name (?scan=shipped); the folder's full path is the selectbox's value."""
    by_name = {Path(s).name: s for s in scans}
    codec = view.Codec(lambda path: Path(str(path)).name, lambda raw: by_name.get(raw.strip()),
                       f"a scan on this server ({', '.join(by_name)})", lambda v: v if v in scans else None)
    return view.View("corpus_scan", (view.Field(CORPUS_FOLDER_KEY, "scan", scans[0], codec),))


def corpus(teams: Sequence[str], sorts: Sequence[str]) -> view.View:
    """The reliance view's team and threshold, the ticket filters and the confusion cell (?team=delivery&pred=
    payments&misrouted=1&conf=0-0.6&sort=least-confident-first&cell_true=delivery&cell_pred=payments)."""
    any_team = view.choice([corpus_data.ANY, *teams], f"a team of this scan ({', '.join(teams)})")
    cell_team = view.Codec(str, lambda raw: raw.strip() if raw.strip() in teams else None,
                           f"a team of this scan ({', '.join(teams)})")
    return view.View("corpus", (
        view.Field("corpus_team", "team", teams[0], view.team(teams)),
        view.Field("corpus_min_tickets", "min", corpus_data.MIN_TICKETS,
                   view.clamped_int(1, corpus_data.MIN_TICKETS_MAX)),
        view.Field("corpus_token", "word", "", view.text(corpus_data.WORD_URL_LIMIT)),
        view.Field("corpus_pred", "pred", corpus_data.ANY, any_team),
        view.Field("corpus_true", "true", corpus_data.ANY, any_team),
        view.Field("corpus_misrouted", "misrouted", False, view.flag()),
        view.Field("corpus_conf", "conf", (0.0, 1.0), view.unit_range()),
        view.Field("corpus_disagree", "disagree", (0.0, 1.0), view.unit_range()),
        view.Field("corpus_doubt", "doubt", 1.0, view.snapped(0.0, 1.0, 0.01)),
        view.Field("corpus_sort", "sort", sorts[0], view.slugged(sorts)),
        view.Field(CORPUS_CELL_TRUE, "cell_true", None, cell_team, widget=False),
        view.Field(CORPUS_CELL_PRED, "cell_pred", None, cell_team, widget=False),
    ))

