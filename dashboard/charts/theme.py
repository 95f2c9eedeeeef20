"""What every chart module shares: colour schemes, sizes, number formats, token labels."""

# Conventions shared by every attention chart:
#
# * a token is labelled ``"position:token"`` (``"3:not"``) because tokens repeat in a ticket; axes keep the
#   reading order through an explicit sort list;
# * in an attention pattern the rows are the reading token (query) and the columns the token read (key);
# * colour is a square-root scale from 0 to the head's own largest weight, so weak but real structure stays
#   visible next to a head that puts nearly everything on one token;
# * every mark has a tooltip, and text from a ticket is only ever used as data (never as HTML, Markdown or
#   Vega expression).


from __future__ import annotations

import math
from collections.abc import Sequence

import altair as alt
import numpy as np

from ticketnet.interpret import signals as sig


HEATMAP_SCHEME = "blues"
FRAME_COLOR = "#d62728"
EFFECT_SCHEME = "redblue"            # diverging: red = removing the token lowers the target probability
SIGNAL_SCHEME = "purples"
RANDOM_SIGNAL = sig.RANDOM.name

# Widths are budgets for the narrowest layout the dashboard is laid out for: the main column of a 1000 px wide
# window with the sidebar open is 540 px (measured in Chromium), half of it (two st.columns) about 250 px. Charts sized in steps
# (one band per token) draw at their own size whatever the window, so their steps come from these budgets.
COLUMN_PX = 520
HALF_COLUMN_PX = 250
Y_LABELS_PX = 110                    # token labels (labelLimit 90) and the axis title beside them


def cell_text_color(dark_cell: str):
    """Text drawn on a coloured cell: white on a dark cell (the Vega expression `dark_cell`), near-black on a light
    one, in the light and the dark theme alike (the cell, not the page, is behind it). Text that is not on a
    cell sets no colour, so it takes the Streamlit theme's."""
    return when(dark_cell, "#ffffff", ON_LIGHT_CELL)


def when(test, if_true, if_false, channel: type = alt.ColorValue):
    """`alt.condition(test, alt.value(if_true), alt.value(if_false))` as a typed `channel` (alt.ColorValue,
    alt.OpacityValue...), which writes the same spec. Altair turns the plain dict that alt.condition returns into a
    channel with its from_dict, which first hashes every class of the Vega-Lite schema, as a shorthand string
    ("team:N") does where a typed channel (alt.Tooltip("team:N")) does not (docs/research-log.md, "Cutting the
    server's cost per action")."""
    return channel(**alt.condition(test, alt.value(if_true), alt.value(if_false)))


ON_LIGHT_CELL = "#1b1b1b"
# Text on the page's own background (a bar's value label, a subtitle): Streamlit's chart theme colours axes, legends
# and titles but not text marks or subtitles, which stay near-black on the dark theme. This grey reads on both
# backgrounds (contrast about 4.3:1 on white and 4.4:1 on Streamlit's dark #0e1117).
THEME_NEUTRAL_TEXT = "#7a7a7a"
ACCURACY_NEGLIGIBLE = 0.01           # one ticket in a hundred: an accuracy change under it is drawn near white


def value_format(values, digits: int = 2, trim: bool = True) -> str:
    """A d3 format string for legends, axis labels and tooltips, with the decimals the values need: `digits`
    significant digits of the largest |value| (0.33 → ".2f", 0.0023 → ".4f"), exponent notation below 1e-4, so a
    legend over effects of 0.002 never reads 0.00 / 0.00 / 0.00. `trim` drops trailing zeros (axis labels stay short)."""
    v = _np(values).ravel()
    v = v[np.isfinite(v)]
    peak = float(np.abs(v).max()) if v.size else 0.0
    tilde = "~" if trim else ""
    if peak == 0:
        return f".2{tilde}f"
    if peak < 1e-4:
        return f".{digits}{tilde}e"
    decimals = max(0, digits - 1 - math.floor(math.log10(peak)))
    return f".{decimals}{tilde}f"


def support_scale(values, unit: str | None = None, floor: float | None = None) -> alt.Scale:
    """The diverging colour scale of support (score with the part − without it), red where positive (the part helps
    the target), blue where negative, white at 0, as the per-token bars and text. Symmetric, and never narrower than
    the negligible effect of `unit` (or `floor`), so a 1e-4 logit effect is drawn near white, not saturated."""
    v = _np(values).ravel()
    v = v[np.isfinite(v)]
    peak = float(np.abs(v).max()) if v.size else 0.0
    least = floor if floor is not None else (sig.NEGLIGIBLE_EFFECT[unit] if unit is not None else 1e-12)
    peak = max(peak, least)
    return alt.Scale(scheme=EFFECT_SCHEME, domain=[-peak, peak], reverse=True)


def scale_peak(scale: alt.Scale) -> float:
    """The upper end of a symmetric scale made by `support_scale`."""
    return float(scale.domain[1])


def signal_scale(names: Sequence[str]) -> alt.Scale:
    """Colours of these signals from the registry (`signals.signal_color`): one colour per signal on every chart."""
    names = list(dict.fromkeys(names))
    return alt.Scale(domain=names, range=[sig.signal_color(n) for n in names])


def _np(x) -> np.ndarray:
    """A torch tensor, list or array as a float64 numpy array (no torch import needed here)."""
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=np.float64)


def token_labels(tokens: Sequence[str]) -> list[str]:
    """Unique axis labels for possibly repeated tokens: ``["0:it", "1:'", "2:s", ...]``."""
    return [f"{i}:{t}" for i, t in enumerate(tokens)]


def _sort_list(tokens: Sequence[str]) -> tuple[str, ...]:
    """`token_labels` as an axis's sort order: a tuple, which Altair keeps by reference where it copies a chart
    (it copies a list item by item at every layer, concat and resolve, a large part of building a long ticket's
    heatmaps: docs/research-log.md, "The slow paths a new user meets") and writes as the same JSON list."""
    return tuple(token_labels(tokens))


def _cell_step(n: int, room: float = 300.0, lo: float = 4.0, hi: float = 16.0) -> float:
    """Pixels per heatmap cell so that an n×n map fits about `room` pixels."""
    return float(min(hi, max(lo, room / max(n, 1))))


