"""Safe text for Streamlit Markdown, numbers with the digits they need, and the one failure panel pages stop on."""

from __future__ import annotations

import re

import numpy as np
import streamlit as st

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:@])")   # "@": an e-mail address is no mailto link
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


def fmt(x: float, decimals: int = 2) -> str:
    """A number with the digits it needs: `decimals` places, more for small values so that two significant digits
    show (0.45, 0.017, 0.0031; below 1e-4 as 3.1e-06), never "0.00" for a non-zero value, never a negative zero."""
    x = float(x)
    if not np.isfinite(x):
        return str(x)
    if x == 0:
        return f"{0:.{decimals}f}"
    if abs(x) < 1e-4:
        return f"{x:.1e}"                                      # 3.1e-06, not a row of zeros
    places = max(decimals, 1 - int(np.floor(np.log10(abs(x)))))
    text = f"{x:.{places}f}"
    while places > decimals and text.endswith("0"):             # 0.050 → 0.05: significant digits only
        text, places = text[:-1], places - 1
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def fail(title: str, message: str, what_to_do: str) -> None:
    """Show one error panel (what failed, the file's message, what to do) and stop this page's run: a missing or
    broken file ends there, never in a traceback."""
    st.error(f"**{title}**\n\n{md_escape(message)}\n\n{what_to_do}", icon=":material/error:")
    st.stop()
