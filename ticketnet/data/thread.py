"""The new message of an e-mail ticket, split from its quoted history, forwarded chain and signature."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from mailparser_reply.constants import MAIL_LANGUAGES
from mailparser_reply.parser import EmailMessage

from ticketnet.data.text import tokenize

# A new message shorter than this many words ("Any news?") cannot be routed by itself: the quoted request is then
# what the customer asks about, so the whole thread is read. A forward is sent for what it passes on: a cover note
# ("See below, sent this a week ago and no reply yet.") under MIN_FORWARD_NOTE_WORDS is read with it. Both chosen
# on handwritten_dev, where cover notes run to 11 words and notes with their own request from 43.
MIN_NEW_WORDS = 4
MIN_FORWARD_NOTE_WORDS = 12
# A signature is a sign-off line and at most this many short lines (name, role, phone) below it.
SIGNATURE_LINES = 3
SIGNATURE_LINE_WORDS = 6

_WEEKDAY_OR_DATE = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun|\d{1,4}[./-]|\d{1,2}\s|[A-Z][a-z]+,?\s\d)"
# Cheap tests first (most tickets have no thread): quoted or forwarded history needs one of these cues, and a
# signature needs a line of its own.
_HISTORY_WORDS = ("wrote:", "forwarded", "original message", "from:")
_QUOTE_START = re.compile(r"(?:^|\s)>")
# Headers as mail clients write them, found anywhere in a line: where a helpdesk export flattened the line
# breaks (to " / " or to nothing), the header no longer starts a line, so a break is put back before it.
_INLINE_HEADERS = re.compile(
    r"(?:(?<=\s)|^)(?:"
    rf"On\s{_WEEKDAY_OR_DATE}[^\n]{{0,120}}?\bwrote:"          # Apple / Gmail: On Tue, 11 Jun 2024, X wrote:
    r"|-{2,}\s?(?:Forwarded message|Original Message)\s?-{2,}"  # Gmail forward, old Outlook
    r"|Begin forwarded message:"                                 # Apple Mail forward
    r"|From:\s[^\n]{1,120}?\s(?:Sent|Date):"                     # Outlook: From: … Sent: … To: … Subject:
    r")", re.I)
_FORWARD = re.compile(r"^(?:-{2,}\s?Forwarded message\s?-{2,}|Begin forwarded message:)", re.I | re.M)
_OUTLOOK_FIELDS = re.compile(r"(?<=\s)(?=(?:Sent|Date|To|Cc|Subject):\s)")
_WROTE_END = re.compile(r"(?<=wrote:)[ \t]+(?=\S)", re.I)


@dataclass(frozen=True)
class ThreadSplit:
    """A ticket cut into what the router reads (the new message) and what it sets aside."""

    text: str              # the ticket as it came
    new: str               # the new message: a prefix of `text`, and `text` itself when nothing is set aside
    set_aside: str         # quoted history, forwarded chain and signature; "" when none
    reason: str            # one line naming what was set aside; "" when nothing was

    @property
    def set_aside_chars(self) -> int:
        return len(self.set_aside)


@lru_cache(maxsize=1)
def _sign_offs() -> re.Pattern:
    """A line that is only a sign-off ("Kind regards,", "Thanks!", "Sent from my iPhone"), from the library's own
    English signature words and a few it lacks; a sign-off that goes on ("Thanks, the refund came") is not one."""
    en = MAIL_LANGUAGES["en"]
    words = [re.escape(w.rstrip(",")) for w in en["signatures"]]
    words += ["Many thanks", "Thanks again", "Thanks in advance", "Cheers", "Best wishes", "Warm regards",
              "Yours sincerely", "Yours faithfully", "Yours", "Ta"]
    sent_from = en["sent_from"]
    return re.compile(rf"^(?:(?:{'|'.join(words)})[\s,.!]*(?:\w+[\s,.!]*)?|(?:{sent_from})\b.*|--\s?)$", re.I)


@lru_cache(maxsize=1)
def _header_regex() -> re.Pattern:
    """The library's header pattern (reply headers, Outlook header blocks, "Original Message") for English."""
    return EmailMessage(text="", languages=["en"]).HEADER_REGEX


def _unflatten(text: str) -> str:
    """`text` with line breaks put back where an export flattened them, every change one character for one,
    so that offsets in the result are offsets in `text`."""
    work = text.replace("\r", " ")
    if " / " in work and _INLINE_HEADERS.search(work.replace(" / ", " \n ")):
        work = work.replace(" / ", " \n ")
    chars = list(work)
    for m in _INLINE_HEADERS.finditer(work):
        start = m.start()
        if start > 0 and chars[start - 1] in " \t":
            chars[start - 1] = "\n"
        header = m.group(0)
        if header[:5].lower() == "from:":
            for f in _OUTLOOK_FIELDS.finditer(work, m.start(), min(len(work), m.end() + 240)):
                if chars[f.start() - 1] in " \t":
                    chars[f.start() - 1] = "\n"
    work = "".join(chars)
    # "wrote: > Dear Ms Shah, > your refund …" on one line: the quoted lines start after the header.
    work = _WROTE_END.sub(lambda m: "\n" + m.group(0)[1:], work)
    first_header = _INLINE_HEADERS.search(work)
    if first_header:
        tail = work[first_header.start():]
        tail = "".join("\n" if c in " \t" and i + 1 < len(tail) and tail[i + 1] == ">" else c
                       for i, c in enumerate(tail))
        work = work[:first_header.start()] + tail
    return work


def _lines(work: str) -> list[tuple[int, int]]:
    """(start, end) of each line's stripped content in `work`."""
    spans, pos = [], 0
    for line in work.split("\n"):
        lead = len(line) - len(line.lstrip())
        spans.append((pos + lead, pos + len(line.rstrip())))
        pos += len(line) + 1
    return spans


def _history_start(work: str, lines: list[tuple[int, int]]) -> tuple[int, str] | None:
    """(offset, what) of the first line that opens the quoted or forwarded part, found by the library's header
    pattern on the stripped lines, a forward separator, or the first quoted ("> ") line after the new text."""
    stripped = "\n".join(work[a:b] for a, b in lines)
    offsets = []                          # offset in `work` of each char of `stripped`, line by line
    for a, b in lines:
        offsets.extend(range(a, b))
        offsets.append(b)
    found: list[tuple[int, str]] = []
    m = _header_regex().search(stripped)
    if m:
        i = m.start()
        while i < len(stripped) and stripped[i] in "\n *":
            i += 1
        found.append((i, _first_line(stripped[i:])))
    m = _FORWARD.search(stripped)
    if m:
        found.append((m.start(), _first_line(m.group(0))))
    m = re.search(r"^>", stripped, re.M)
    if m:
        found.append((m.start(), "> …"))
    if not found:
        return None
    i, what = min(found)
    return (offsets[i] if i < len(offsets) else len(work)), what


def _first_line(text: str) -> str:
    line = text.split("\n", 1)[0].strip()
    return line if len(line) <= 70 else line[:67].rstrip() + "…"


def _signature_start(work: str, lines: list[tuple[int, int]], end: int) -> int | None:
    """Offset of a trailing signature in work[:end]: a sign-off line followed by at most SIGNATURE_LINES short
    lines, never the first line (a ticket that opens with "Thanks," is thanking, not signing)."""
    body = [(a, b) for a, b in lines if b <= end and b > a]
    for k in range(len(body) - 1, max(0, len(body) - 1 - SIGNATURE_LINES) - 1, -1):
        if k == 0:
            return None
        a, b = body[k]
        if _sign_offs().match(work[a:b]):
            below = body[k + 1:]
            if all(len(work[x:y].split()) <= SIGNATURE_LINE_WORDS for x, y in below):
                return a
    return None


def _has_history_cue(text: str) -> bool:
    """Whether a one-line ticket may hold quoted or forwarded history: plain substring tests (a regex with
    IGNORECASE took 70 µs a ticket), as most tickets have none."""
    if ">" in text and _QUOTE_START.search(text):
        return True
    low = text.lower()
    return any(w in low for w in _HISTORY_WORDS)


def _words(text: str) -> int:
    return sum(any(c.isalnum() for c in t) for t in tokenize(text))


def split_thread(text: str) -> ThreadSplit:
    """Split an e-mail ticket into its new message and the quoted history, forwarded chain and signature below it.

    The new message is a prefix of the ticket, so the router reads the customer's own words unchanged. A ticket
    with nothing to set aside, or whose new message is under MIN_NEW_WORDS words, is read whole."""
    if not isinstance(text, str):
        raise TypeError(f"a ticket must be text, got {type(text).__name__}")
    whole = ThreadSplit(text, text, "", "")
    if not ("\n" in text or " / " in text or _has_history_cue(text)):
        return whole
    work = _unflatten(text)
    lines = _lines(work)
    history = _history_start(work, lines)
    end = history[0] if history else len(work)
    signature = _signature_start(work, lines, end)
    cut = signature if signature is not None else end
    new = text[:cut].rstrip(" \t\r\n/")
    forward = history is not None and bool(_FORWARD.match(history[1]))
    if cut >= len(text) or _words(new) < (MIN_FORWARD_NOTE_WORDS if forward else MIN_NEW_WORDS):
        return whole
    parts = []
    if signature is not None:
        parts.append("the signature")
    if history is not None:
        what = history[1]
        parts.append("the quoted lines" if what == "> …" else
                     f"the forwarded message below “{what}”" if forward else
                     f"the quoted history below “{what}”")
    return ThreadSplit(text, new, text[len(new):].strip(" \t\r\n/"), "Set aside " + " and ".join(parts) + ".")
