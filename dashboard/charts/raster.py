"""A head's n × n attention as an image, for tickets too long for a chart of n² marks (pure: arrays in, pixels out)."""

# A 256-token ticket's four heatmaps are 262,144 rectangles, which the browser is slow to parse and draw
# (docs/performance.md, "Settings measured in the code"). An image of the same weights is one element to draw.
# Colour follows the charts: the square root of each weight over the head's own largest, on Vega's "blues" ends.

from __future__ import annotations

import numpy as np

RASTER_FROM_TOKENS = 97              # above the model view's 96 tokens, the Heads page draws images
LIGHT, DARK = np.array([247, 251, 255], dtype=np.float64), np.array([8, 48, 107], dtype=np.float64)
FRAME = np.array([228, 87, 86], dtype=np.uint8)           # the query row's frame, the charts' red
IMAGE_PX = 512                       # an image's side, about: cells of 2 px at 256 tokens


def cell_px(n: int, side: int = IMAGE_PX) -> int:
    """Pixels per token in an image of about `side` pixels (2 at least)."""
    return max(2, side // max(n, 1))


def heatmap_pixels(weights, query_row: int | None = None, side: int = IMAGE_PX) -> np.ndarray:
    """(n·c, n·c, 3) uint8 RGB of one head's (n, n) weights, c = `cell_px(n)`: row i is what token i reads, white
    at 0 to dark blue at the head's largest weight (square-root scale); the `query_row` framed in red."""
    w = np.asarray(weights.detach().cpu().numpy() if hasattr(weights, "detach") else weights, dtype=np.float64)
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ValueError(f"weights must be (n, n), got {w.shape}")
    n = w.shape[0]
    peak = float(w.max()) if w.size else 0.0
    t = np.sqrt(np.clip(w / peak, 0.0, 1.0)) if peak > 0 else np.zeros_like(w)
    rgb = (LIGHT + (DARK - LIGHT) * t[..., None]).round().astype(np.uint8)             # (n, n, 3)
    c = cell_px(n, side)
    image = np.repeat(np.repeat(rgb, c, axis=0), c, axis=1)
    if query_row is not None:
        if not 0 <= query_row < n:
            raise ValueError(f"query_row {query_row} is outside 0..{n - 1}")
        top, bottom = query_row * c, (query_row + 1) * c - 1
        image[top, :], image[bottom, :] = FRAME, FRAME
        image[top:bottom + 1, 0], image[top:bottom + 1, -1] = FRAME, FRAME
    return image
