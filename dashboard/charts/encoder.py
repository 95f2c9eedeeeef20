"""Charts of an encoder router's words: what removing each word does, beside the attention the classifier reads."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from dashboard.charts.theme import _cell_step, _np, support_scale, token_labels, value_format
from ticketnet.interpret import signals as sig

ROLLOUT, LAST_LAYER, IG = sig.ROLLOUT.name, sig.LAST_LAYER.name, sig.INTEGRATED_GRADIENTS.name
EFFECT_TITLES = {"removed": "word removed", "replaced": "word replaced"}


def word_frame(words: Sequence[str], removed, replaced, rollout, last_layer, integrated_gradients) -> pd.DataFrame:
    """One row per word: its label (position · word), both effects, its rollout share, last-layer attention and
    integrated gradients."""
    arrays = [_np(x) for x in (removed, replaced, rollout, last_layer, integrated_gradients)]
    if any(a.shape != (len(words),) for a in arrays):
        raise ValueError(f"need one value per word ({len(words)}), got {[a.shape for a in arrays]}")
    return pd.DataFrame({"position": range(len(words)), "word": token_labels(words), "removed": arrays[0],
                         "replaced": arrays[1], ROLLOUT: arrays[2], LAST_LAYER: arrays[3], IG: arrays[4]})


def word_effects_chart(frame: pd.DataFrame, unit_title: str, replacement: str) -> alt.HConcatChart:
    """Per word, top to bottom in ticket order: the effect of removing it and of replacing its pieces (a bar for
    each, coloured by the change), beside its rollout share (what the attention says the classifier reads)."""
    labels = list(frame["word"])
    # Both panels get the same height in pixels, so a word's two bars and its share sit on one line.
    height = int(2 * _cell_step(len(labels), room=520, lo=7, hi=10) * len(labels))
    long = frame.melt(id_vars=["position", "word"], value_vars=["removed", "replaced"], var_name="change",
                      value_name="effect")
    long["change"] = long["change"].map({"removed": "removed", "replaced": f"pieces → {replacement}"})
    long["effect"] = long["effect"].astype(float)
    scale = support_scale(long["effect"], "prob")
    tip = value_format(long["effect"], 3, trim=False)
    y = alt.Y("word:N", sort=labels, title=None, axis=alt.Axis(labelLimit=110, labelOverlap=False))
    effects = alt.Chart(long).mark_bar().encode(
        y=y, yOffset=alt.YOffset("change:N"),
        x=alt.X("effect:Q", title=unit_title, scale=alt.Scale(domain=list(scale.domain)),
                axis=alt.Axis(format=value_format(scale.domain), tickCount=4)),
        color=alt.Color("change:N", legend=alt.Legend(title=None, orient="bottom")),
        tooltip=[alt.Tooltip("word:N"), alt.Tooltip("change:N"), alt.Tooltip("effect:Q", format=tip)],
    ).properties(width=260, height=height)
    share = alt.Chart(frame).mark_bar(color="#16a085").encode(
        y=alt.Y("word:N", sort=labels, title=None, axis=alt.Axis(labels=False, ticks=False)),
        x=alt.X(f"{ROLLOUT}:Q", title=f"{ROLLOUT} share", axis=alt.Axis(format=".0%", tickCount=3)),
        tooltip=[alt.Tooltip("word:N"), alt.Tooltip(f"{ROLLOUT}:Q", format=".3f"),
                 alt.Tooltip(f"{LAST_LAYER}:Q", format=".3f"), alt.Tooltip(f"{IG}:Q", format=".3f")],
    ).properties(width=140, height=height)
    return alt.hconcat(effects, share, spacing=8).resolve_scale(y="independent")


def phrase_frame(phrases: Sequence, shapley, support) -> pd.DataFrame:
    """One row per phrase, in reading order: its text, its Shapley value and its deletion support (logit
    difference of the target)."""
    values, support = _np(shapley), _np(support)
    if values.shape != (len(phrases),) or support.shape != (len(phrases),):
        raise ValueError(f"need one value per phrase ({len(phrases)}), got {values.shape} and {support.shape}")
    return pd.DataFrame({"phrase": [p.text for p in phrases], "shapley value": values, "deletion support": support})
