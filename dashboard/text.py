"""Safe text for Streamlit Markdown, and the one readable failure panel every page stops on."""

from __future__ import annotations

import re

import streamlit as st

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")
# Characters that are invisible or rearrange the text around them: C0/C1 controls but tab and line breaks (NUL,
# BEL, ESC…), DEL, and the bidirectional embedding/override/isolate marks (a typed U+202E flips what follows).
_INVISIBLE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match) -> str:
    c = ord(match.group())
    if c < 0x20:
        return chr(0x2400 + c)                    # Unicode control pictures: ␀ ␇ ␛ …
    return "␡" if c == 0x7F else f"‹U+{c:04X}›"


def md_escape(text: str) -> str:
    """Text safe to place inside Streamlit Markdown: every Markdown/HTML special character escaped, and control
    and bidirectional-override characters shown as visible symbols (␀, ␛, ‹U+202E›) instead of passed through."""
    return _INVISIBLE.sub(_visible, _MD_SPECIAL.sub(r"\\\1", str(text)))


def fail(title: str, message: str, what_to_do: str) -> None:
    """Show one error panel (what failed, the file's message, what to do) and stop this page's run: a missing or
    broken file ends there, never in a traceback."""
    st.error(f"**{title}**\n\n{md_escape(message)}\n\n{what_to_do}", icon=":material/error:")
    st.stop()
