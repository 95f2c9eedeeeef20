"""A long ticket's heads as images: the weights' pixels, the square-root scale and the framed query row."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dashboard.charts import raster


def test_pixels_follow_the_weights_on_the_heads_own_square_root_scale():
    w = np.zeros((128, 128))
    w[:, 0] = 0.64
    w[:, 1] = 0.16                                            # a quarter of the peak: half way on a square root scale
    image = raster.heatmap_pixels(w)
    c = raster.cell_px(128)
    assert image.shape == (128 * c, 128 * c, 3) and image.dtype == np.uint8 and c == 4
    assert tuple(image[0, 0]) == tuple(raster.DARK.astype(np.uint8))              # the peak: darkest
    assert tuple(image[0, 2 * c]) == tuple(raster.LIGHT.astype(np.uint8))         # a zero: white
    half = (raster.LIGHT + (raster.DARK - raster.LIGHT) * 0.5).round().astype(np.uint8)
    assert tuple(image[0, c]) == tuple(half)
    assert np.array_equal(raster.heatmap_pixels(torch.tensor(w)), image)          # tensors as arrays


def test_the_query_row_is_framed_and_a_bad_shape_or_row_is_refused():
    w = np.full((200, 200), 1 / 200)
    c = raster.cell_px(200)
    image = raster.heatmap_pixels(w, query_row=7)
    assert (image[7 * c] == raster.FRAME).all() and (image[8 * c - 1] == raster.FRAME).all()
    assert (image[7 * c:8 * c, 0] == raster.FRAME).all() and not (image[0] == raster.FRAME).all()
    with pytest.raises(ValueError, match="outside"):
        raster.heatmap_pixels(w, query_row=200)
    with pytest.raises(ValueError, match="must be"):
        raster.heatmap_pixels(np.ones((3, 4)))
    assert raster.heatmap_pixels(np.zeros((97, 97))).max() == 255                # all-zero head: white, no nan
