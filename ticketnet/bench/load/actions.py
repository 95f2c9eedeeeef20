"""The virtual analyst: a seeded script of the actions users take on the dashboard, each checked to have really run."""

# One loop of the script, on one session (one browser tab): open Tickets with a ticket of its own in the URL, filter
# the table, pick a row, open Heads, move the query row, open Interpretation, switch the target team, go back to
# Tickets, route a typed ticket, open Corpus, filter its tickets. Every action is one rerun request, timed from the
# message sent to its script_finished, and checked: no exception element or error panel, and the action's own
# outcome on the page or in the URL the app wrote (the filtered count, the picked ticket, the row's heading…). The
# checks read the dashboard's own wording, so a change of wording shows here as a failed check, not as a fast page.

from __future__ import annotations

import csv
import random
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qs

from ticketnet.bench.load.protocol import Run, Session, table_frame
from ticketnet.paths import data_dir

PAGES = ("Tickets", "Heads", "Interpretation", "Corpus")
TYPED = (
    "my card was charged twice for order {n}, please refund one of the payments",
    "the parcel for order {n} never arrived and tracking has said in transit for nine days",
    "I want to send back the lamp from order {n}, it does not fit; how do I return it?",
    "cannot log in since the password reset, the app says my account {n} is locked",
    "the discount code was not applied to order {n} and I paid full price",
)
CORPUS_WORDS = ("refund", "order", "card", "password", "parcel", "return", "charged", "account")
PAGE_MARKS = {"Tickets": "Confusion matrix", "Heads": "Block 1: the", "Interpretation": "What each token does",
              "Corpus": "What the router relies on, per team"}
COUNT = re.compile(r"^([\d,]+) of ([\d,]+) tickets")


class ActionFailed(Exception):
    """An action ran but did not do what it should: `kind` is what the report counts."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail = kind, detail


@dataclass
class Outcome:
    """One timed action: seconds from the message sent to script_finished."""

    action: str
    page: str
    seconds: float
    started: float                              # time.monotonic() when it was sent
    reruns: int = 0


@dataclass
class Action:
    name: str
    page: str
    run: Callable[[Analyst], Awaitable[Run]]


def split_tickets(min_chars: int = 30) -> dict[str, str]:
    """Id -> text of the valid split's tickets long enough to read (the tickets analysts open)."""
    with open(data_dir() / "valid.csv", encoding="utf-8") as fh:
        return {r["ticket_id"]: r["text"] for r in csv.DictReader(fh) if len(r["text"]) >= min_chars}


def query(run_or_session) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(run_or_session.query_string or "").items()}


def _count(run: Run) -> tuple[int, int]:
    for t in run.texts():
        m = COUNT.match(t)
        if m:
            return int(m.group(1).replace(",", "")), int(m.group(2).replace(",", ""))
    raise ActionFailed("expected element missing", "no 'N of M tickets' caption")


def _expect(ok: bool, what: str) -> None:
    if not ok:
        raise ActionFailed("expected element missing", what)


def _lookup(run: Run, kind: str, label: str = "", key: str = ""):
    try:
        return run.widget(kind, label, key)
    except LookupError as exc:
        raise ActionFailed("expected element missing", str(exc)) from None


class FreshTickets:
    """The tickets no analyst of a run has opened yet, handed out in a seeded order: with it, every ticket an action
    opens is new to the server, so no per-ticket cache helps (the cost of a ticket seen for the first time)."""

    def __init__(self, tickets: list[str], seed: int) -> None:
        self._left = sorted(tickets)
        random.Random(seed).shuffle(self._left)
        self.seen: set[str] = set()

    def take(self) -> str:
        while self._left:
            ticket = self._left.pop()
            if ticket not in self.seen:
                self.seen.add(ticket)
                return ticket
        raise ActionFailed("tickets used up", "every ticket of the split has been opened once")

    def take_row(self, ids: list[str], rng: random.Random) -> int:
        """A row of `ids` whose ticket nobody has opened (ActionFailed when none is left in the table)."""
        rows = [i for i, t in enumerate(ids) if t not in self.seen]
        if not rows:
            raise ActionFailed("tickets used up", "every ticket of the table has been opened once")
        row = rng.choice(rows)
        self.seen.add(ids[row])
        return row


class Analyst:
    """One virtual analyst on one session, following `SCRIPT` with a seeded random choice at each step; with
    `fresh`, every ticket it opens is one no analyst of the run has opened before."""

    def __init__(self, session: Session, seed: int, tickets: list[str], corpus: bool = True,
                 fresh: FreshTickets | None = None) -> None:
        self.session = session
        self.rng = random.Random(seed)
        self.tickets = tickets
        self.fresh = fresh
        self.corpus = corpus
        self.loop = 0
        self.seed = seed

    @property
    def script(self) -> list[Action]:
        return [a for a in SCRIPT if self.corpus or a.page != "Corpus"]

    def entry_points(self) -> list[int]:
        """Where in the script a session may start: each page change, entered by a new tab on that page."""
        return [k for k, a in enumerate(self.script) if k == 0 or a.page != self.script[k - 1].page]

    async def enter(self, page: str) -> Run:
        """A new tab opened at /<page>?ticket=<one of the analyst's tickets> (a shared link, a bookmark)."""
        ticket = self._ticket()
        run = await self.session.open("" if page == "Tickets" else page.lower(), f"ticket={ticket}")
        _expect(run.has_text(PAGE_MARKS[page]), f"the {page} page's first section")
        _expect(query(self.session).get("ticket") == ticket, f"?ticket={ticket} kept in the URL")
        return run

    # -- Tickets ---------------------------------------------------------------------------------------------
    def _ticket(self) -> str:
        return self.fresh.take() if self.fresh else self.rng.choice(self.tickets)

    async def open_tickets(self) -> Run:
        ticket = self._ticket()
        run = await self.session.open("", f"ticket={ticket}")
        _expect(run.has_text("Confusion matrix") and run.has_text("Find a ticket"), "the Tickets page's sections")
        _expect(query(self.session).get("ticket") == ticket, f"?ticket={ticket} kept in the URL")
        return run

    async def filter_tickets(self) -> Run:
        """Even loops flip "Misrouted only", odd loops pick another true team: one widget, one rerun, as a click."""
        before = query(self.session)
        if self.loop % 2 == 0:
            on = before.get("misrouted") != "1"
            run = await self.session.rerun((_lookup(self.session.last, "checkbox", "Misrouted only"), on))
            _expect((query(self.session).get("misrouted") == "1") == on, f"?misrouted={int(on)} written by the page")
        else:
            team = _lookup(self.session.last, "selectbox", "True team")
            choice = self.rng.choice([o for o in team.options[1:] if o != before.get("true")])
            run = await self.session.rerun((team, choice))
            _expect(query(self.session).get("true") == choice, f"?true={choice} written by the page")
        shown, total = _count(run)
        _expect(shown < total or self.loop % 2 == 0, f"the true-team filter narrowed the table ({shown} of {total})")
        return run

    async def pick_ticket(self) -> Run:
        table = next((w for w in self.session.last.widgets.values() if w.kind == "dataframe"
                      and w.id.endswith("-ticket_table")), None)
        _expect(table is not None, "the tickets table")
        ids = table_frame(table.proto).column("ticket_id").to_pylist()
        _expect(bool(ids), "a ticket in the filtered table")
        row = self.fresh.take_row(ids, self.rng) if self.fresh else self.rng.randrange(len(ids))
        run = await self.session.rerun((table, {"selection": {"rows": [row], "columns": []}}))
        _expect(query(self.session).get("ticket") == ids[row], f"the picked row's ticket {ids[row]} in the URL")
        return run

    async def back_to_tickets(self) -> Run:
        run = await self.session.switch_page("Tickets")
        _expect(run.has_text("Confusion matrix"), "the Tickets page's sections")
        return run

    async def type_ticket(self) -> Run:
        text = self.rng.choice(TYPED).format(n=f"{self.seed % 1000:03d}{self.loop:03d}")
        box = _lookup(self.session.last, "text_area", "Ticket text")
        submit = _lookup(self.session.last, "button", "Route this ticket")
        _expect(box.form_id and box.form_id == submit.form_id, "the text box and its button in one form")
        run = await self.session.rerun((box, text), (submit, True))
        _expect(query(self.session).get("ticket") == "custom", "?ticket=custom after routing the typed ticket")
        _expect(any(text in t for t in run.texts()), "the typed ticket shown as the picked ticket")
        return run

    # -- Heads -----------------------------------------------------------------------------------------------
    async def open_heads(self) -> Run:
        ticket = query(self.session).get("ticket")
        run = await self.session.switch_page("Heads")
        _expect(any(re.match(r"Block 1: the \d+ heads", t) for t in run.texts()), "the heads' heading")
        _expect(query(self.session).get("ticket") == ticket, f"the picked ticket {ticket} followed to Heads")
        return run

    async def move_query_row(self) -> Run:
        rows = _lookup(self.session.last, "selectbox", "Query row")
        row = self.rng.choice([i for i in range(len(rows.options)) if rows.proto.default != i] or [0])
        run = await self.session.rerun((rows, row))
        _expect(run.has_text(f"(position {row})"), f"the heading of query row {row}")
        return run

    # -- Interpretation --------------------------------------------------------------------------------------
    async def open_interpretation(self) -> Run:
        run = await self.session.switch_page("Interpretation")
        _expect(run.has_text("What each token does"), "the Interpretation page's first section")
        return run

    async def switch_target(self) -> Run:
        target = _lookup(self.session.last, "selectbox", "Target team")
        others = [o for o in target.options if not o.endswith("(predicted)")]
        team = self.rng.choice(others)
        run = await self.session.rerun((target, team))
        _expect(query(self.session).get("target") == team, f"?target={team} written by the page")
        return run

    # -- Corpus ----------------------------------------------------------------------------------------------
    async def open_corpus(self) -> Run:
        run = await self.session.switch_page("Corpus")
        _expect(run.has_text("What the router relies on, per team"), "an open scan (make corpus-demo makes one)")
        return run

    async def filter_corpus(self) -> Run:
        word = self.rng.choice([w for w in CORPUS_WORDS if w != query(self.session).get("word")])
        run = await self.session.rerun((_lookup(self.session.last, "text_input", "Contains the word"), word))
        shown, total = _count(run)
        _expect(shown < total, f"'{word}' narrowed the tickets ({shown} of {total})")
        _expect(query(self.session).get("word") == word, f"?word={word} written by the page")
        return run

SCRIPT = (
    Action("open Tickets", "Tickets", Analyst.open_tickets),
    Action("filter Tickets", "Tickets", Analyst.filter_tickets),
    Action("pick a ticket", "Tickets", Analyst.pick_ticket),
    Action("open Heads", "Heads", Analyst.open_heads),
    Action("move the query row", "Heads", Analyst.move_query_row),
    Action("open Interpretation", "Interpretation", Analyst.open_interpretation),
    Action("switch target team", "Interpretation", Analyst.switch_target),
    Action("back to Tickets", "Tickets", Analyst.back_to_tickets),
    Action("type a ticket", "Tickets", Analyst.type_ticket),
    Action("open Corpus", "Corpus", Analyst.open_corpus),
    Action("filter Corpus", "Corpus", Analyst.filter_corpus),
)


@dataclass
class Tally:
    """Every outcome and error of a run, shared by its analysts."""

    outcomes: list[Outcome] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    samples: list[str] = field(default_factory=list)

    def error(self, kind: str, detail: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1
        if len(self.samples) < 40:
            self.samples.append(f"{kind}: {detail[:300]}")
