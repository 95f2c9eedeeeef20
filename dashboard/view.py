"""One way to keep a page's choices: in `st.session_state` for the session, mirrored in `st.query_params` for links."""

# A page declares its view, a few `Field`s, each with a session key (the widget's key), a URL name, a default and a
# `Codec` that writes the value into a link and reads it back. `View.restore` runs before the page's widgets and
# `View.remember` after them.
#
# - Streamlit forgets a widget's state when a run does not draw it, so a visit to another page would reset the
#   widget. `remember` keeps every value under a plain session key that survives, and `restore` works out the value
#   each widget starts at. A widget the session holds is set through the Session State API only when its value must
#   change (a new link, an option gone); one it does not hold is created with that value as its own default
#   (`start`, `start_index`), never through the API: a widget seeded through the API in the first run of a session
#   whose browser reconnected to a restarted server ignored every later pick. A widget is given a default only
#   when the session does not hold it, so the two never clash (Streamlit warns when they do).
# - The URL carries the values that differ from the defaults, in short names with readable values. A link is adopted
#   whole (the fields it does not name at their defaults) when its parameters differ from what this session last
#   wrote there: a pasted link, a new tab, the browser's back button. A page switch clears the query string, so a URL
#   with none of the view's parameters changes nothing.
# - A value a link holds that the page cannot open (a block the router does not have, a team it does not know) is
#   refused with a sentence that says so and what is shown instead; nothing is replaced without a word.
# - Values the page can no longer take (another split's pattern, another scan's team) are fitted back to the
#   options before the widget is drawn, since a widget given a value outside its options raises.

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Generic, NoReturn, TypeVar

import streamlit as st

T = TypeVar("T")

_KEPT = "_view_kept"             # {view name: {key: value}} of each view's last run
_WROTE = "_view_wrote"           # {view name: {url name: text}} each view last wrote to the URL
_SEEN = "_view_seen"             # {chart key: its selection on the previous run}
_START = "_view_start"           # {view name: {widget key: the value it is created with}}, replaced each restore


# -- codecs: a value as a link writes it, and back ---------------------------------------------------------------------
@dataclass(frozen=True)
class Codec(Generic[T]):
    """How a value rides in a URL. `decode` returns None for text it cannot read; `what` names what it accepts, for
    the sentence that refuses a link; `fit` turns a kept value into one the page can take now (None: the default)."""

    encode: Callable[[T], str | None]
    decode: Callable[[str], T | None]
    what: str
    fit: Callable[[Any], T | None] | None = None

    def fitted(self, value: Any) -> T | None:
        if self.fit is not None:
            return self.fit(value)
        text = self.encode(value) if value is not None else None
        return value if text is not None and self.decode(text) == value else None


def _listing(options: Iterable[object], most: int = 8) -> str:
    shown = [str(o) for o in options]
    return ", ".join(shown[:most]) + (f" … ({len(shown)} in all)" if len(shown) > most else "")


def choice(options: Sequence[str], what: str | None = None) -> Codec[str]:
    """One of `options` (team names, splits, methods), written as it is."""
    options = tuple(options)

    def decode(raw: str) -> str | None:
        raw = raw.strip()
        return raw if raw in options else None
    return Codec(str, decode, what or f"one of {_listing(options)}")


def team(teams: Sequence[str]) -> Codec[str]:
    """A team of the router, by name."""
    return choice(teams, f"a team of this router ({_listing(teams)})")


def team_index(teams: Sequence[str]) -> Codec[int]:
    """A team picked by its position among `teams`, written by its name (?target=payments)."""
    teams = tuple(teams)

    def decode(raw: str) -> int | None:
        raw = raw.strip()
        return teams.index(raw) if raw in teams else None
    return Codec(lambda i: teams[i] if isinstance(i, int) and 0 <= i < len(teams) else None, decode,
                 f"a team of this router ({_listing(teams)})")


def bounded_int(low: int, high: int, what: str | None = None, shift: int = 0) -> Codec[int]:
    """A whole number from `low` to `high`, written plus `shift` (a 0-based query row read as position 0)."""
    def decode(raw: str) -> int | None:
        raw = raw.strip()
        if not re.fullmatch(r"-?\d+", raw):
            return None
        value = int(raw) - shift
        return value if low <= value <= high else None

    def encode(value: int) -> str | None:
        return str(int(value) + shift) if isinstance(value, int) and not isinstance(value, bool) else None
    return Codec(encode, decode, what or f"a whole number from {low + shift} to {high + shift}")


def clamped_int(low: int, high: int) -> Codec[int]:
    """A whole number, clipped into `low`–`high` (a number input's value)."""
    def decode(raw: str) -> int | None:
        raw = raw.strip()
        return min(high, max(low, int(raw))) if raw.isdigit() else None

    def fit(value: Any) -> int | None:
        try:
            return min(high, max(low, int(value)))
        except (TypeError, ValueError):
            return None
    return Codec(lambda v: str(int(v)), decode, f"a whole number from {low} to {high}", fit)


def flag() -> Codec[bool]:
    """On or off, written as 1 (off is the default and never written)."""
    def decode(raw: str) -> bool | None:
        raw = raw.strip().lower()
        return True if raw in ("1", "true", "yes", "on") else False if raw in ("0", "false", "no", "off") else None
    return Codec(lambda v: "1" if v else "0", decode, "1 or 0", lambda v: bool(v) if isinstance(v, bool) else None)


def unit_range(low: float = 0.0, high: float = 1.0) -> Codec[tuple[float, float]]:
    """A range within `low`–`high`, to 2 decimals, written "0-0.6"; a reversed one is put in order."""
    def decode(raw: str) -> tuple[float, float] | None:
        try:
            ends = [float(x) for x in str(raw).split("-", 1)]
        except ValueError:
            return None
        if len(ends) != 2 or not all(math.isfinite(x) for x in ends):
            return None
        lo, hi = (round(min(high, max(low, x)), 2) for x in ends)
        return min(lo, hi), max(lo, hi)

    def fit(value: Any) -> tuple[float, float] | None:
        try:
            lo, hi = (float(v) for v in value)
        except (TypeError, ValueError):
            return None
        return (lo, hi) if low <= lo <= hi <= high else None
    return Codec(lambda v: f"{v[0]:g}-{v[1]:g}", decode, f"a range such as {low:g}-{high / 2:g}", fit)


def snapped(low: float, high: float, step: float) -> Codec[float]:
    """A number from `low` to `high`, snapped to `step` (a slider's value)."""
    decimals = max(0, -math.floor(math.log10(step)))

    def decode(raw: str) -> float | None:
        try:
            value = float(raw)
        except ValueError:
            return None
        if not math.isfinite(value) or not low - step / 2 <= value <= high + step / 2:
            return None
        return round(min(high, max(low, round(value / step) * step)), decimals)

    def fit(value: Any) -> float | None:
        try:
            return decode(str(float(value)))
        except (TypeError, ValueError):
            return None
    return Codec(lambda v: f"{float(v):g}", decode, f"a number from {low:g} to {high:g}", fit)


def slug(text: str) -> str:
    """A phrase as a URL writes it: "confidence, lowest first" → "confidence-lowest-first"."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def slugged(options: Sequence[str], aliases: Mapping[str, str] | None = None) -> Codec[str]:
    """One of `options` (phrases such as sort orders), written as its slug; `aliases` map older link values."""
    options = tuple(options)
    by_slug = {slug(o): o for o in options}
    older = dict(aliases or {})

    def decode(raw: str) -> str | None:
        raw = raw.strip().lower()
        found = by_slug.get(slug(raw)) or older.get(raw)
        return found if found in options else None
    return Codec(lambda v: slug(v) if v in options else None, decode, f"one of {_listing(by_slug)}")


def text(limit: int) -> Codec[str]:
    """Free text (a search); one longer than `limit` stays in the session only."""
    return Codec(lambda v: v if len(v) <= limit else None, lambda raw: raw[:limit], f"text up to {limit} characters",
                 lambda v: v if isinstance(v, str) else None)


def subset(options: Sequence[str] | None = None) -> Codec[list[str]]:
    """Some of `options` (any names, when None: options the page learns later), comma-separated; those not offered
    are dropped, not refused."""
    offered = None if options is None else tuple(options)

    def keep(values: Iterable[str]) -> list[str]:
        return [v for v in values if offered is None or v in offered]

    def decode(raw: str) -> list[str] | None:
        wanted = [p.strip() for p in dict.fromkeys(raw.split(",")) if p.strip()]
        return keep(wanted) if wanted else None

    def fit(value: Any) -> list[str] | None:
        return keep(value) if isinstance(value, (list, tuple)) else None
    what = "names, comma-separated" if offered is None else f"some of {_listing(offered)}, comma-separated"
    return Codec(lambda v: ",".join(v) if v else None, decode, what, fit)


def cell(teams: Sequence[str]) -> Codec[dict[str, str] | None]:
    """A confusion-matrix cell, "true,predicted", both teams of the router."""
    teams = tuple(teams)

    def decode(raw: str) -> dict[str, str] | None:
        parts = [p.strip() for p in (raw or "").split(",")]
        return {"true": parts[0], "predicted": parts[1]} if len(parts) == 2 and all(p in teams for p in parts) else None

    def encode(value: Mapping[str, str] | None) -> str | None:
        return f"{value['true']},{value['predicted']}" if value else None

    def fit(value: Any) -> dict[str, str] | None:
        return decode(encode(value)) if isinstance(value, Mapping) else None
    return Codec(encode, decode, "a cell of the confusion matrix: true team,predicted team", fit)


# -- fields and views --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Field(Generic[T]):
    """One choice of a page: its session key (the widget's), its name in the URL, its default and its codec.
    `in_url(values)` says whether the URL carries it for the view's current values (a policy's precision only while
    the target is precision). An `always` field is written at its default too: a link that names the routers it
    compares must not depend on the defaults of the session that opens it."""

    key: str
    url: str
    default: T
    codec: Codec[T]
    in_url: Callable[[Mapping[str, Any]], bool] | None = None
    always: bool = False
    widget: bool = True          # False: a plain session value (a chart's cell), set through the session always
    # A choice two pages share (the effect unit of Heads and Interpretation): each page has its own widget key (the
    # same key on two pages names two widgets, and the second starts empty), the value is kept under this plain key.
    shared: str | None = None

    def fit(self, value: Any) -> T:
        fitted = self.codec.fitted(value)
        return self.default if fitted is None else fitted


@dataclass
class View:
    """A page's choices. Build it each run with the options at hand (the router's teams, the ticket's tokens)."""

    name: str
    fields: Sequence[Field] = field(default_factory=tuple)

    @property
    def url_names(self) -> tuple[str, ...]:
        return tuple(f.url for f in self.fields)

    def to_query(self, values: Mapping[str, Any]) -> dict[str, str]:
        """The URL parameters for `values` (by key): only those that differ from their defaults."""
        out: dict[str, str] = {}
        for f in self.fields:
            value = values.get(f.key, f.default)
            if f.in_url is not None and not f.in_url(values):
                continue
            written = f.codec.encode(value) if value is not None else None
            default = f.codec.encode(f.default) if f.default is not None else None
            if written is not None and (f.always or written != default):
                out[f.url] = written
        return out

    def from_query(self, params: Mapping[str, str], refused: list[str] | None = None) -> dict[str, Any]:
        """The values a URL names (every other at its default); each value it cannot read is left at its default,
        with a sentence in `refused`."""
        values: dict[str, Any] = {}
        for f in self.fields:
            raw = params.get(f.url)
            value = None if raw is None else f.codec.decode(raw)
            if raw is not None and value is None and refused is not None:
                refused.append(f"{f.url}={raw!r} is not {f.codec.what}")
            values[f.key] = f.default if value is None else value
        return values

    def _url(self) -> dict[str, str]:
        return {name: st.query_params[name] for name in self.url_names if name in st.query_params}

    def restore(self) -> list[str]:
        """Before the widgets: adopt a new link whole, then give each field its value: the session's, else the
        kept one, else the default, fitted to what the page can take. Returns what the link held that could not be
        opened."""
        ss = st.session_state
        wrote = ss.setdefault(_WROTE, {})
        kept = ss.setdefault(_KEPT, {})
        url = self._url()
        refused: list[str] = []
        adopted: dict[str, Any] = {}
        if url and url != wrote.get(self.name):
            adopted = self.from_query(url, refused)
            kept[self.name] = adopted
            wrote[self.name] = url                   # adopted once, whatever the page writes back later
        mine = kept.get(self.name, {})
        start = ss.setdefault(_START, {})[self.name] = {}    # this run's keys only (a ticket's row key changes)
        for f in self.fields:
            held = f.key in ss
            kept_value = ss[f.shared] if f.shared and f.shared in ss else mine.get(f.key, f.default)
            value = adopted[f.key] if f.key in adopted else ss[f.key] if held else kept_value
            fitted = f.fit(value)
            if not f.widget or (held and (f.key in adopted or fitted != ss[f.key])):
                ss[f.key] = fitted
            start[f.key] = fitted
        return refused

    def remember(self) -> dict[str, Any]:
        """After the widgets: keep the values for the session and write those that differ from the defaults to the
        URL. Returns the values by key."""
        ss = st.session_state
        start = ss.get(_START, {}).get(self.name, {})  # a widget drawn after remember() starts at its restored value
        values = {f.key: f.fit(ss[f.key] if f.key in ss else start.get(f.key, f.default)) for f in self.fields}
        ss.setdefault(_KEPT, {})[self.name] = values
        for f in self.fields:
            if f.shared:
                ss[f.shared] = values[f.key]
        query = self.to_query(values)
        write_query(self.url_names, query)
        ss.setdefault(_WROTE, {})[self.name] = query
        return values


def write_query(names: Iterable[str], params: Mapping[str, str], always: bool = False) -> None:
    """Set each of `names` in the URL to its value in `params`, and drop those `params` lacks; a parameter that
    already holds its value is not written again (each write is a message to the browser) unless `always`."""
    for name in names:
        if name in params:
            if always or st.query_params.get(name) != params[name]:
                st.query_params[name] = params[name]
        elif name in st.query_params:
            del st.query_params[name]


def allow(key: str, options: Sequence, default: Any = None) -> None:
    """Before drawing a widget whose options the page learns after `restore` (a split's patterns, the sorts once a
    split is interpreted): keep only the values that are still options, so the widget never receives an impossible
    value (in the session where it holds the widget, else in the value it starts at)."""
    ss = st.session_state
    held = key in ss
    starts = _starts_holding(key)
    value = ss[key] if held else starts.get(key, default)
    if isinstance(value, list):
        fitted = [v for v in value if v in options]
    elif value not in options:
        fitted = default if default in options else options[0]
    else:
        fitted = value
    if held and fitted != value:
        ss[key] = fitted
    starts[key] = fitted


def start(key: str) -> Any:
    """What a widget starts at: None where the session holds it (its value comes from there), else the value
    `restore` worked out, to pass as the widget's default (`default=` of a segmented control or a multiselect,
    `value=` of a slider, a toggle, a text or number input)."""
    return None if key in st.session_state else _starts_holding(key).get(key)


def _starts_holding(key: str) -> dict[str, Any]:
    """The start values of the view restored this run that has `key` (an empty dict to write to when none has)."""
    views = st.session_state.setdefault(_START, {})
    found = next((starts for starts in views.values() if key in starts), None)
    return found if found is not None else views.setdefault("", {})


def start_index(key: str, options: Sequence) -> int | None:
    """`start` as a selectbox's or radio's `index=`: the position of the value among `options` (None where the
    session holds the widget)."""
    value = start(key)
    if value is None:
        return None
    options = list(options)
    return options.index(value) if value in options else 0


def refused_sentence(refused: Sequence[str], what: str = "the page") -> str | None:
    """One sentence for the link values a view could not open, or None."""
    if not refused:
        return None
    return f"The link's {'; '.join(refused)}: {what} shows its default for {'these' if len(refused) > 1 else 'it'}."


# -- a cell picked on a selectable chart -------------------------------------------------------------------------------
def selection_changed(chart_key: str, selected: object, fresh: bool) -> bool:
    """Whether a selectable chart's selection changed since its last run: a click on a cell sets one, a click beside
    the cells clears it. A chart drawn afresh (`fresh`: after another page, or from a link) starts with no selection,
    which is no change, so the cell the view keeps (from a click or a link) stays."""
    seen = st.session_state.setdefault(_SEEN, {})
    last = None if fresh else seen.get(chart_key)
    seen[chart_key] = selected
    return selected != last


# -- ending a page early -----------------------------------------------------------------------------------------------
class PageEnd(BaseException):
    """A page has shown all it has for this run (`end_page`). A BaseException, so a page's own `except Exception`
    never swallows it."""


_PAGE_END_CAUGHT: ContextVar[bool] = ContextVar("page_end_caught", default=False)


def run_page(page) -> None:
    """Run the navigation's page; one that ends early with `end_page` returns here, so what the entry point draws
    after the page (the sidebar's picked ticket) and starts (the model's warm-up, the idle watch) still happens.
    `st.stop()` would end the whole script run instead."""
    token = _PAGE_END_CAUGHT.set(True)
    try:
        page.run()
    except PageEnd:
        pass
    finally:
        _PAGE_END_CAUGHT.reset(token)


def end_page() -> NoReturn:
    """End this page's run here: back to the entry point under `run_page`, else (a page run on its own) `st.stop()`."""
    if _PAGE_END_CAUGHT.get():
        raise PageEnd
    st.stop()
    raise PageEnd                     # not reached: st.stop() raises
