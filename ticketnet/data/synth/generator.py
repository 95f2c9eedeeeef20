"""Deterministic synthetic Larkfield support tickets with labels, evidence spans and hard-case patterns."""

from __future__ import annotations

import argparse
import random
import re
from pathlib import Path

from ticketnet._runtime.atomic import write_atomic
from ticketnet.data.synth.noise import render
from ticketnet.data.synth.phrases import (
    AMBIGUOUS, ASIDES, ASIDE_LEADS, BURST_GREETINGS, BURST_THANKS, BURST_TURNS, CLOSINGS, CONTENT_FRAMES, DETAILS,
    FILLERS, FOLLOW_UP_LEADS, FRAMES, FRAME_KIND_WEIGHTS, GREETINGS, INTENTS, LATER_ASIDE_LEADS, MAIN_LEADS,
    MAIN_LEADS_AFTER, MINOR_LEADS_AFTER, MINOR_LEADS_BEFORE, MINOR_TAILS, NEGATIONS, NEG_AFTER, NEG_BEFORE, NEG_JOIN,
    NEG_JOINERS, NEG_WANTS, NEG_WANT_NOUN_FRAMES, NEG_WANT_VERB_FRAMES, ORDER_REFS, PAIRED_LEADS, PAIR_FRAMES,
    PAIR_WANT_FRAMES, SETTLED, SETTLED_AFTERTHOUGHTS, SETTLED_DONE_FRAMES, SETTLED_THANKS_FRAMES, SETTLED_TURNS, SHORT,
    SHORT_TAILS, SIGNOFFS, SUBINTENTS, TEAM_WORDS, TEAM_WORD_FRAMES, TOPICS,
)
from ticketnet.data.synth.slots import Segments, fill
from ticketnet.data.text import tokenize
from ticketnet.data.synth.teams import TEAMS
from ticketnet.data.tickets import TEAMS_FILE, rows_csv
from ticketnet.paths import SYNTH_SEED, data_dir

DEFAULT_SIZES = (60000, 1500, 1500)
SPLITS = ("train", "valid", "test")
COLUMNS = ("ticket_id", "text", "team", "evidence", "pattern", "distractor")
PATTERNS = ("plain", "negated", "two_topics", "ambiguous", "noisy", "settled")
MAX_TOKENS = 200
# Share of requests written from the sub-intent parts and frames (SUBINTENTS x FRAMES) rather than the
# whole-sentence templates of INTENTS; and of negated tickets that set a topic aside with TOPICS.
FRAMED_SHARE = 0.7
TOPIC_NEGATION_SHARE = 0.6
# Share of two-topic tickets whose second topic is a real request of the other team, marked as the minor one.
SECONDARY_SHARE = 0.7

# Pattern shares: about 34.5 % hard rows (negated + two_topics + ambiguous) and 2.5 % deliberately
# mislabelled ones; the rest are plain single-topic tickets. Negations get the largest hard share: twenty
# ordered pairs of teams, each with the request before, after or joined to the topic set aside.
PATTERN_WEIGHTS = (("plain", 0.63), ("negated", 0.155), ("two_topics", 0.15), ("ambiguous", 0.04),
                   ("noisy", 0.025))
# `settled`: a reply that closes an earlier, settled matter of another team ("Thanks, the refund arrived.") before or
# after a new request, or in a chat burst of short lines. Its share is an argument of `generate` (the other patterns
# keep their proportions), 0 by default: the shipped splits were generated without it, so a share of 0 draws exactly
# the rows it drew before. SETTLED_WHERE: where the settled matter stands, by weight.
SETTLED_WHERE = (("before", 6), ("after", 3), ("burst", 1))
# Share of settled sentences that thank for what the other team did ("Thanks for chasing the courier."), the rest say
# how it ended ("The parcel turned up this morning, thanks.").
SETTLED_THANKS_SHARE = 0.45
# Share of ambiguous rows whose label is a coin flip between the two plausible teams instead of the
# routing convention (the template's first team).
AMBIGUOUS_COIN = 0.10

# The one ticket every release must route correctly; it lives in valid.csv only.
FIXED_ID = "T-65052"
FIXED_ROW = {
    "ticket_id": FIXED_ID,
    "text": "It's not a delivery problem and I keep the leaf blower. My card was charged twice for one order. "
            "Can you remove the duplicate charge?",
    "team": "payments",
    "evidence": "My card was charged twice for one order|remove the duplicate charge",
    "pattern": "negated",
    "distractor": "delivery",
}

_I_WORDS = ("I", "I'm", "I've", "I'd", "I'll")
_A_VOWEL = re.compile(r"\b([Aa]) ([aeiou])")     # "a account question" -> "an account question"


# ---------------------------------------------------------------------------------------------------
# Ticket bodies per pattern. A ticket under construction is a list of (kind, segments): "request", "negation",
# "aside", "detail", ... each with the (text, is_evidence) segments of its filled template.
# ---------------------------------------------------------------------------------------------------

def _decap(template: str) -> str:
    """Lower-case the first letter so a request can follow ", but"; "I ..." and brand names stay."""
    m = re.match(r"(\[?)(\S+)", template)
    if not m or m.group(2)[0] == "{" or m.group(2).rstrip(",.?!") in _I_WORDS or m.group(2)[1:2].isupper():
        return template
    start = m.start(2)
    return template[:start] + template[start].lower() + template[start + 1:]


def _table(rows: tuple, team: str) -> tuple[str, ...]:
    return next(items for name, items in rows if name == team)


def _cap(text: str) -> str:
    """Upper-case the first letter (slots such as {product} are left alone)."""
    return text[:1].upper() + text[1:] if text[:1].isalpha() else text


def _framed(rng: random.Random, parts: dict, kind: str) -> str:
    """One request sentence: a part of `kind` put into a team-neutral frame, the part marked as evidence."""
    part = rng.choice(parts[kind])
    if kind == "direct":
        return part
    frame = rng.choice(FRAMES[kind])
    return frame.replace("^", "[" + _cap(part) + "]") if "^" in frame else frame.replace("@", "[" + part + "]")


def _request(rng: random.Random, team: str) -> tuple[str, tuple[str, ...]]:
    """One request template of `team` and other templates of its intent (for a follow-up)."""
    if rng.random() < FRAMED_SHARE:
        parts = rng.choice([p for t, _, p in SUBINTENTS if t == team])
        kinds = [(k, w) for k, w in FRAME_KIND_WEIGHTS if parts.get(k)]
        draw = lambda: _framed(rng, parts, rng.choices([k for k, _ in kinds], weights=[w for _, w in kinds])[0])
        template = draw()
        return template, (template, draw(), draw())
    intents = [templates for t, _, templates in INTENTS if t == team]
    templates = rng.choice(intents)
    return rng.choice(templates), templates


def _other_team(rng: random.Random, team: str) -> str:
    return rng.choice([t for t in TEAMS if t != team])


def _plain_core(rng, team, ctx) -> list[tuple[str, Segments]]:
    template, siblings = _request(rng, team)
    core = [("request", fill(template, ctx, rng))]
    # Some customers raise a second, related problem for the same team.
    others = [t for t in siblings if t != template]
    if rng.random() < 0.15 and others:
        other = rng.choice(others)
        core.append(("request", fill(rng.choice(FOLLOW_UP_LEADS) + _decap(other), ctx, rng)))
    return core


def _put(frame: str, name: str, phrase: str) -> str:
    """`frame` with `phrase` in its {name} ('^{name}': the phrase capitalised)."""
    return frame.replace(f"^{{{name}}}", _cap(phrase)).replace(f"{{{name}}}", phrase)


def _set_aside(frame: str, topic: str) -> str:
    """A NEG_* frame with the distractor's topic in it ('^{t}': the topic capitalised)."""
    return _put(frame, "t", topic)


def _negated_core(rng, team, distractor, ctx) -> list[tuple[str, Segments]]:
    template, _ = _request(rng, team)
    if rng.random() < TOPIC_NEGATION_SHARE:
        topic = rng.choice(_table(TOPICS, distractor))
        where = rng.choices(("before", "join", "after"), weights=(3, 2, 5))[0]
        kind = rng.choices(("topic", "want", "content", "team", "pair"), weights=(5, 3, 2, 2, 2))[0]
        if kind != "topic":
            # "I don't want to send it back." / "I'm happy with the delivery." / "Not a product question." /
            # "I'm happy with the price and the delivery." beside the request.
            if kind == "content":
                sentence = _set_aside(rng.choice(CONTENT_FRAMES), topic)
            elif kind == "team":
                words = next(w for t, w in TEAM_WORDS if t == distractor)
                sentence = _A_VOWEL.sub(r"\1n \2", rng.choice(TEAM_WORD_FRAMES).replace("{w}", rng.choice(words)))
            elif kind == "pair":
                third = rng.choice([t for t in TEAMS if t not in (team, distractor)])
                first, second = (distractor, third) if rng.random() < 0.5 else (third, distractor)
                if rng.random() < 0.6:
                    sentence = _set_aside(rng.choice(PAIR_FRAMES), rng.choice(_table(TOPICS, first)))
                    sentence = sentence.replace("{t2}", rng.choice(_table(TOPICS, second)))
                else:
                    wants = {t: n for t, n, _ in NEG_WANTS}
                    sentence = (rng.choice(PAIR_WANT_FRAMES).replace("{w}", rng.choice(wants[first]))
                                .replace("{w2}", rng.choice(wants[second])))
            else:
                nouns, verbs = next((n, v) for t, n, v in NEG_WANTS if t == distractor)
                frames, words = (NEG_WANT_NOUN_FRAMES, nouns) if rng.random() < 0.5 else (NEG_WANT_VERB_FRAMES, verbs)
                sentence = rng.choice(frames).replace("{w}", rng.choice(words))
            if where == "join":
                joiner = rng.choice((", but ", " - ", ". ", "; "))
                request = _decap(template) if joiner in (", but ", "; ") else template
                return [("request", fill(sentence.rstrip(".") + joiner + request, ctx, rng))]
            negation = ("negation", fill(sentence, ctx, rng))
            request = ("request", fill(template, ctx, rng))
            return [negation, request] if where == "before" else [request, negation]
        if where == "join":
            joiner = rng.choice(NEG_JOINERS)
            request = _decap(template) if joiner in (", but ", ", ", "; ") else template
            return [("request", fill(_set_aside(rng.choice(NEG_JOIN), topic) + joiner + request, ctx, rng))]
        negation = ("negation", fill(_set_aside(rng.choice(NEG_BEFORE if where == "before" else NEG_AFTER), topic),
                                      ctx, rng))
        request = ("request", fill(template, ctx, rng))
        return [negation, request] if where == "before" else [request, negation]
    before, after, joins = next((b, a, j) for t, b, a, j in NEGATIONS if t == distractor)
    where = rng.choices(("before", "join", "after"), weights=(3, 2, 5))[0]
    if where == "join":
        return [("request", fill(rng.choice(joins) + ", but " + _decap(template), ctx, rng))]
    request = ("request", fill(template, ctx, rng))
    if where == "before":
        return [("negation", fill(rng.choice(before), ctx, rng)), request]
    return [request, ("negation", fill(rng.choice(after), ctx, rng))]


def _soften(segments: Segments, tail: str) -> Segments:
    """`segments` with a softener put before their final punctuation ("..., but that can wait.")."""
    if not tail:
        return segments
    text, flag = segments[-1]
    body = text.rstrip(" .!?")
    end = "?" if text.rstrip().endswith("?") and not tail.startswith((",", " but", " -")) else "."
    return [*segments[:-1], (body + tail + end, flag)]


def _secondary_core(rng, team, distractor, ctx) -> list[tuple[str, Segments]]:
    """Two requests, the other team's one marked as minor and the label's one as the main (no evidence in the minor)."""
    template, _ = _request(rng, team)
    minor_template, _ = _request(rng, distractor)
    minor = _soften([(text, False) for text, _ in fill(minor_template, ctx, rng)], rng.choice(MINOR_TAILS))
    if rng.random() < 0.2:
        # "The big one: ... The small one: ...", in either order.
        main_lead, minor_lead = rng.choice(PAIRED_LEADS)
        main = ("request", fill(main_lead + _decap(template), ctx, rng))
        aside = ("aside", [(minor_lead + _decap(minor[0][0]), False), *minor[1:]])
        return [main, aside] if rng.random() < 0.7 else [aside, main]
    if rng.random() < 0.6:
        lead = rng.choice(MAIN_LEADS)
        main = fill(lead + _decap(template) if lead else template, ctx, rng)
        minor_lead = rng.choice(MINOR_LEADS_AFTER)
        return [("request", main), ("aside", [(minor_lead + _decap(minor[0][0]), False), *minor[1:]])]
    minor_lead = rng.choice(MINOR_LEADS_BEFORE)
    main = fill(rng.choice(MAIN_LEADS_AFTER) + _decap(template), ctx, rng)
    return [("aside", [(minor_lead + _decap(minor[0][0]), False), *minor[1:]]), ("request", main)]


def _two_topics_core(rng, team, distractor, ctx) -> list[tuple[str, Segments]]:
    if rng.random() < SECONDARY_SHARE:
        return _secondary_core(rng, team, distractor, ctx)
    template, _ = _request(rng, team)
    request_segments = fill(template, ctx, rng)
    aside = ("aside", fill(rng.choice(_table(ASIDES, distractor)), ctx, rng))
    if rng.random() < 0.5:
        lead = rng.choice(ASIDE_LEADS)
        if lead:
            request_segments = fill(lead + _decap(template), ctx, rng)
        return [aside, ("request", request_segments)]
    lead = rng.choice(LATER_ASIDE_LEADS)
    aside_segments = _soften([(lead + _decap(aside[1][0][0]), False)], rng.choice(MINOR_TAILS))
    return [("request", request_segments), ("aside", aside_segments)]


def _settled_matters(team: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What `team` did for a customer ("chasing the courier") and how its matters ended ("the parcel turned up")."""
    return next((thanks, done) for t, thanks, done in SETTLED if t == team)


def _settled_sentence(rng: random.Random, settled_team: str) -> str:
    """One sentence closing an earlier matter of `settled_team`: thanks for what it did, or how it ended."""
    thanks, done = _settled_matters(settled_team)
    if rng.random() < SETTLED_THANKS_SHARE:
        return _put(rng.choice(SETTLED_THANKS_FRAMES), "a", rng.choice(thanks))
    return _put(rng.choice(SETTLED_DONE_FRAMES), "s", rng.choice(done))


def _settled_core(rng, team, settled_team, ctx) -> list[tuple[str, Segments]]:
    """A request of `team` with an earlier, settled matter of `settled_team` closed before or after it, or a chat
    burst ("hi again / the refund came through thanks / but / <request>") as one part of kind "burst"."""
    template, _ = _request(rng, team)
    where = rng.choices([w for w, _ in SETTLED_WHERE], weights=[n for _, n in SETTLED_WHERE])[0]
    if where == "burst":
        _, done = _settled_matters(settled_team)
        lines = [rng.choice(BURST_GREETINGS), (rng.choice(done) + rng.choice(BURST_THANKS)).lower(),
                 rng.choice(BURST_TURNS), _decap(template)]
        return [("burst", fill("\n".join(line for line in lines if line), ctx, rng))]
    settled = _settled_sentence(rng, settled_team)
    if where == "before":
        turn = rng.choice(SETTLED_TURNS)
        request = fill(turn + _decap(template) if turn else template, ctx, rng)
        return [("settled", fill(settled, ctx, rng)), ("request", request)]
    lead = rng.choice(SETTLED_AFTERTHOUGHTS)
    return [("request", fill(template, ctx, rng)),
            ("settled", fill(lead + _decap(settled) if lead else settled, ctx, rng))]


def _ambiguous_core(rng, ctx) -> tuple[str, str, list[tuple[str, Segments]]]:
    """The routing convention's team, the other plausible team, and the request."""
    convention, other, template = rng.choice(AMBIGUOUS)
    return convention, other, [("request", fill(template, ctx, rng))]


def _draw_pattern(rng: random.Random, settled_share: float = 0.0) -> str:
    names = [name for name, _ in PATTERN_WEIGHTS] + ["settled"]
    return rng.choices(names, weights=[w * (1 - settled_share) for _, w in PATTERN_WEIGHTS] + [settled_share])[0]


def _short_ticket(rng, team, ctx) -> list[tuple[str, Segments]]:
    if rng.random() < 0.5:
        template = rng.choice(_table(SHORT, team))
    else:
        # A bare part of a sub-intent: "update my phone number", "the {tool} cuts out after a minute".
        parts = rng.choice([p for t, _, p in SUBINTENTS if t == team])
        kind = rng.choice([k for k in ("you", "me", "state", "direct") if parts.get(k)])
        part = rng.choice(parts[kind])
        template = part if kind == "direct" else "[" + (_cap(part) if rng.random() < 0.5 else part) + "]"
    return [("request", fill(template + rng.choice(SHORT_TAILS), ctx, rng))]


def _wrap(rng, team, core, ctx, rambling: bool) -> list[tuple[str, Segments]]:
    """Greeting, irrelevant context, details, order number, closing and sign-off around the core."""
    def sentence(kind: str, template: str) -> tuple[str, Segments]:
        return kind, fill(template, ctx, rng)

    n_fill = rng.randint(3, 9) if rambling else int(rng.random() < 0.2)
    fillers = [sentence("filler", t) for t in rng.sample(FILLERS, n_fill)]
    split = rng.randint(0, n_fill) if rambling else n_fill
    n_details = rng.choices((0, 1, 2), weights=(45, 40, 15))[0] + (1 if rambling else 0)
    details = [sentence("detail", t) for t in rng.sample(_table(DETAILS, team), n_details)]
    if rng.random() < 0.3:
        details.insert(rng.randint(0, len(details)), sentence("detail", rng.choice(ORDER_REFS)))
    parts = []
    if rng.random() < 0.6:
        parts.append(sentence("greeting", rng.choice(GREETINGS)))
    # Details (team-leaning context, no evidence) mostly follow the request, sometimes lead up to it: were they always
    # last, the end of a ticket would tell its team, and a router learns to trust whatever comes last.
    if rng.random() < 0.35:
        parts += fillers[:split] + details + core + fillers[split:]
    else:
        parts += fillers[:split] + core + details + fillers[split:]
    if rng.random() < 0.35:
        parts.append(sentence("closing", rng.choice(CLOSINGS)))
    if rng.random() < 0.5:
        parts.append(sentence("signoff", rng.choice(SIGNOFFS)))
    return parts


def _n_tokens(parts: list[tuple[str, Segments]]) -> int:
    return len(tokenize(" ".join(text for _, segs in parts for text, _ in segs)))


def _fit(parts: list[tuple[str, Segments]]) -> list[tuple[str, Segments]]:
    """Drop context sentences, last first, until the ticket has at most MAX_TOKENS tokens."""
    for kind in ("filler", "detail", "closing"):
        while _n_tokens(parts) > MAX_TOKENS and any(k == kind for k, _ in parts):
            last = max(i for i, (k, _) in enumerate(parts) if k == kind)
            parts = parts[:last] + parts[last + 1:]
    return parts


# ---------------------------------------------------------------------------------------------------
# Rows and splits
# ---------------------------------------------------------------------------------------------------

def _ticket(rng: random.Random, settled_share: float = 0.0) -> dict[str, str]:
    """One ticket without an id: text, team, evidence, pattern, distractor (for `settled`: the settled matter's team)."""
    pattern = _draw_pattern(rng, settled_share)
    ctx: dict[str, str] = {}
    team, distractor, parts = rng.choice(TEAMS), "", []
    if pattern == "ambiguous":
        team, distractor, core = _ambiguous_core(rng, ctx)
    elif pattern == "negated":
        # Payment requests behind a negated delivery/returns topic (the shape of the fixed ticket
        # T-65052) get extra weight so the model sees plenty of them.
        others = [t for t in TEAMS if t != team]
        weights = [2 if team == "payments" and t in ("delivery", "returns") else 1 for t in others]
        distractor = rng.choices(others, weights=weights)[0]
        core = _negated_core(rng, team, distractor, ctx)
    elif pattern == "two_topics":
        distractor = _other_team(rng, team)
        core = _two_topics_core(rng, team, distractor, ctx)
    elif pattern == "settled":
        distractor = _other_team(rng, team)
        core = _settled_core(rng, team, distractor, ctx)
        if core[0][0] == "burst":        # a chat burst comes bare: no greeting, details or sign-off around it
            parts = core
    elif rng.random() < 0.1:
        core = _short_ticket(rng, team, ctx)
        # One-liners mostly come bare: no greeting, no sign-off.
        parts = core if rng.random() < 0.8 else _wrap(rng, team, core, ctx, rambling=False)
    else:
        core = _plain_core(rng, team, ctx)
    if not parts:
        parts = _wrap(rng, team, core, ctx, rambling=rng.random() < 0.09)
    text, evidence = render(_fit(parts), rng)
    if pattern == "ambiguous" and rng.random() < AMBIGUOUS_COIN:
        # Context was written for the convention team; the coin only decides the label.
        team, distractor = rng.choice(((team, distractor), (distractor, team)))
    if pattern == "noisy":
        # A mislabelled ticket: the text is a plain ticket of `team`, the label another team.
        team, evidence = _other_team(rng, team), ""
    return {"text": text, "team": team, "evidence": evidence, "pattern": pattern, "distractor": distractor}


def _new_id(rng: random.Random, used: set[str]) -> str:
    while True:
        tid = f"T-{rng.randint(10000, 99999)}"
        if tid not in used:
            used.add(tid)
            return tid


def generate(seed: int = SYNTH_SEED, sizes: tuple[int, int, int] = DEFAULT_SIZES,
             settled_share: float = 0.0) -> dict[str, list[dict]]:
    """Train/valid/test rows (dicts with COLUMNS) from `seed`, a `settled_share` of them of the `settled` pattern;
    the same arguments give the same rows."""
    if len(sizes) != 3 or any(int(n) != n or n < 0 for n in sizes):
        raise ValueError(f"sizes must be three non-negative integers (train, valid, test), got {sizes!r}")
    if not 0 <= settled_share < 1:
        raise ValueError(f"the settled share must be at least 0 and under 1, got {settled_share!r}")
    rng = random.Random(seed)
    # The fixed ticket's id and text are reserved so no generated row can take either.
    used_ids, seen_texts = {FIXED_ID}, {FIXED_ROW["text"]}
    splits: dict[str, list[dict]] = {}
    for split, size in zip(SPLITS, sizes):
        n_generated = size - 1 if split == "valid" and size > 0 else size
        rows = []
        while len(rows) < n_generated:
            row = _ticket(rng, settled_share)
            if row["text"] in seen_texts:
                continue
            seen_texts.add(row["text"])
            rows.append({"ticket_id": _new_id(rng, used_ids), **row})
        if split == "valid" and size > 0:
            rows.insert(rng.randint(0, len(rows)), dict(FIXED_ROW))
        splits[split] = rows
    return splits


def to_csv(rows: list[dict]) -> bytes:
    """Rows as UTF-8 CSV bytes with a header, `\\n` line endings and minimal quoting."""
    return rows_csv(rows, COLUMNS)


def write_splits(out_dir: Path | None = None, seed: int = SYNTH_SEED,
                 sizes: tuple[int, int, int] = DEFAULT_SIZES, settled_share: float = 0.0) -> dict[str, Path]:
    """Write train.csv, valid.csv and test.csv atomically into `out_dir` (default: the shipped data/), with
    teams.txt naming the teams in the order a router trained on them keeps."""
    out_dir = Path(out_dir) if out_dir is not None else data_dir()
    paths = {}
    for split, rows in generate(seed, sizes, settled_share).items():
        paths[split] = out_dir / f"{split}.csv"
        write_atomic(paths[split], to_csv(rows))
    write_atomic(out_dir / TEAMS_FILE, ("\n".join(TEAMS) + "\n").encode("utf-8"))
    return paths


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=None, help="folder to write to (default: the shipped data/)")
    parser.add_argument("--seed", type=int, default=SYNTH_SEED)
    parser.add_argument("--settled-share", type=float, default=0.0, metavar="P",
                        help="share of replies that close an earlier, settled matter of another team before or after "
                             "the request (default 0: the shipped splits have none)")


def run(args: argparse.Namespace) -> int:
    for split, path in write_splits(args.out, seed=args.seed, settled_share=args.settled_share).items():
        print(f"{split}: {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ticketnet synth", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))
