"""Every number the Formula page shows, against the course's reference values."""

import math

import pytest
import torch

from ticketnet.lesson import explorers as lesson


def r3(xs):
    return tuple(round(float(x), 3) for x in xs)


# -- two vectors ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("q, weights, output", [
    ((1, 0), (0.67, 0.33), (1.34, 1.32)),
    ((0, 0), (0.5, 0.5), (1.0, 2.0)),
    ((0, 1), (0.33, 0.67), (0.66, 2.68)),
])
def test_two_vectors_reference_points(q, weights, output):
    r = lesson.two_vectors(*q)
    assert tuple(round(w, 2) for w in r.weights) == weights
    assert tuple(round(o, 2) for o in r.output) == output
    assert sum(r.weights) == pytest.approx(1.0)


def test_two_vectors_scores_are_scaled_dot_products():
    r = lesson.two_vectors(1, 0)
    assert r3(r.scores) == (0.707, 0.0)
    assert r3(r.output) == (1.34, 1.321)


def test_output_stays_on_the_segment_between_the_values():
    for q1, q2 in [(-3, 2.5), (3, -3), (0.3, 0.7), (-1, -1)]:
        o = lesson.two_vectors(q1, q2).output
        # the segment from [2, 0] to [0, 4]: y = 4 − 2x, with 0 ≤ x ≤ 2
        assert o[1] == pytest.approx(4 - 2 * o[0])
        assert 0 <= o[0] <= 2


# -- matrix form ---------------------------------------------------------------------------------------------
def _step(mask, k, name=None):
    step = lesson.matrix_steps(mask)[k - 1]
    if name is None:
        return step
    return next(m for m in step.matrices if m.name == name).values


def test_seven_steps_with_the_lesson_shapes():
    steps = lesson.matrix_steps()
    assert [s.number for s in steps] == list(range(1, 8))
    assert [s.shape for s in steps] == [(3, 4), (3, 2), (3, 3), (3, 3), (3, 3), (3, 3), (3, 2)]
    assert [m.shape for m in steps[0].matrices] == [(3, 4), (4, 2), (4, 2), (4, 2)]
    assert all(m.marked_row == lesson.DAMAGED for s in steps[1:] for m in s.matrices)
    assert steps[0].matrices[0].rows == ("damaged", "on", "arrival")


def test_queries_keys_values_and_scores():
    assert _step("no mask", 2, "Q").tolist() == [[0.5, 1.5], [0, 0], [1, 0]]
    assert _step("no mask", 2, "K").tolist() == [[1, 0], [0, 0.5], [0, 2]]
    assert _step("no mask", 2, "V").tolist() == [[2, 0], [0, 0], [0, 1]]
    assert _step("no mask", 3, "S").tolist() == [[0.5, 0.75, 3.0], [0, 0, 0], [1, 0, 0]]
    assert [r3(r) for r in _step("no mask", 4, "S/√d_k")] == [(0.354, 0.53, 2.121), (0, 0, 0), (0.707, 0, 0)]


def test_softmax_and_output_without_mask():
    A = _step("no mask", 6, "A")
    assert [r3(r) for r in A] == [(0.124, 0.148, 0.728), (0.333, 0.333, 0.333), (0.503, 0.248, 0.248)]
    assert torch.allclose(A.sum(-1), torch.ones(3, dtype=A.dtype))
    O = _step("no mask", 7, "O")
    assert [r3(r) for r in O] == [(0.248, 0.728), (0.667, 0.333), (1.007, 0.248)]
    assert lesson.matrix_steps()[5].damaged_weights is not None
    assert r3(lesson.matrix_steps()[5].damaged_weights) == (0.124, 0.148, 0.728)


def test_causal_mask_steps():
    M = _step("causal", 5, "M")
    assert torch.isneginf(M).tolist() == [[False, True, True], [False, False, True], [False, False, False]]
    assert [r3(r) for r in _step("causal", 6, "A")] == [(1, 0, 0), (0.5, 0.5, 0), (0.503, 0.248, 0.248)]
    assert [r3(r) for r in _step("causal", 7, "O")] == [(2, 0), (1, 0), (1.007, 0.248)]
    assert _step("no mask", 5, "M").abs().sum() == 0


def test_unknown_mask_is_refused():
    with pytest.raises(ValueError):
        lesson.matrix_steps("sliding")


def test_matrix_form_equals_ticketnet_attention():
    from ticketnet.nn.attention import attention

    Q, K, V = lesson.qkv()
    out, w = attention(Q, K, V)
    assert torch.allclose(out, _step("no mask", 7, "O")) and torch.allclose(w, _step("no mask", 6, "A"))


# -- why √d_k (seeded: the course's draws reproduce exactly) ------------------------------------------------
@pytest.fixture(scope="module")
def table():
    return {r.d_k: r for r in lesson.scaling_table()}


def test_chunked_draws_equal_one_big_draw():
    g1, g2 = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    whole = torch.randn(1000, 4, 8, generator=g1, dtype=torch.float64)
    parts = torch.cat(list(lesson._randn_chunks(g2, 1000, (4, 8), 77)))
    assert torch.equal(whole, parts)


SMALL = dict(d_ks=(4, 64), seed=5, grad_seed=6, pairs=1000, queries=120, keys=8, chunk=96)


def _serial_reference(d_ks, seed, grad_seed, pairs, queries, keys, chunk):
    """The course's procedure as plainly as it reads: whole tensors, one stream after the other."""
    g, gg = torch.Generator().manual_seed(seed), torch.Generator().manual_seed(grad_seed)
    out = []
    for d_k in d_ks:
        q = torch.randn(pairs, d_k, generator=g, dtype=torch.float64)
        k = torch.randn(pairs, d_k, generator=g, dtype=torch.float64)
        Q = torch.randn(queries, d_k, generator=g, dtype=torch.float64)
        K = torch.randn(queries, keys, d_k, generator=g, dtype=torch.float64)
        Qg = torch.randn(queries, d_k, generator=gg, dtype=torch.float64)
        Kg = torch.randn(queries, keys, d_k, generator=gg, dtype=torch.float64)
        out.append(((q * k).sum(1), torch.einsum("nd,nkd->nk", Q, K), torch.einsum("nd,nkd->nk", Qg, Kg)))
    return out


def test_two_stream_drawing_equals_the_serial_procedure():
    ref = _serial_reference(**SMALL)
    for row, (dots, raw, graw) in zip(lesson.draw_scaling_table(**SMALL), ref):
        root = math.sqrt(row.d_k)
        assert row.var_unscaled == pytest.approx(dots.var().item(), rel=1e-12)
        assert row.top_unscaled == pytest.approx(torch.softmax(raw, -1).amax(-1).mean().item(), rel=1e-12)
        assert row.grad_scaled == pytest.approx(lesson.softmax_jacobian_size(graw / root).mean().item(), rel=1e-12)


@pytest.fixture
def small_table_drawn(monkeypatch):
    """Counts the drawings `scaling_table` makes, starting from an empty per-process cache."""
    lesson._kept_table.cache_clear()
    drawn = []
    real = lesson.draw_scaling_table

    def counting(*args):
        drawn.append(args)
        return real(*args)

    monkeypatch.setattr(lesson, "draw_scaling_table", counting)
    yield drawn
    lesson._kept_table.cache_clear()


def test_table_is_kept_on_disk_and_read_back_without_drawing(small_table_drawn):
    first = lesson.scaling_table(**SMALL)
    assert len(small_table_drawn) == 1 and lesson.stored_table_path(*SMALL.values()).is_file()
    lesson._kept_table.cache_clear()                   # as in a restarted server
    assert lesson.scaling_table(**SMALL) == first and len(small_table_drawn) == 1


def test_a_stored_table_of_other_arguments_or_a_broken_file_is_drawn_again(small_table_drawn):
    first = lesson.scaling_table(**SMALL)
    path = lesson.stored_table_path(*SMALL.values())
    for broken in ("{not json", '{"args": [], "torch": "0", "rows": []}', path.read_text().replace(
            '"var_unscaled"', '"variance"')):
        path.write_text(broken)
        lesson._kept_table.cache_clear()
        assert lesson.scaling_table(**SMALL) == first
    assert len(small_table_drawn) == 4


def test_concurrent_first_calls_draw_once(small_table_drawn):
    import threading

    got = []
    threads = [threading.Thread(target=lambda: got.append(lesson.scaling_table(**SMALL))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(small_table_drawn) == 1 and len(got) == 3 and got[0] == got[1] == got[2]


@pytest.mark.parametrize("d_k, var, var_scaled", [
    (4, 4.03, 1.006), (16, 15.84, 0.990), (64, 63.69, 0.995), (256, 256.00, 1.000), (1024, 1024.99, 1.001)])
def test_variance_matches_the_lesson(table, d_k, var, var_scaled):
    r = table[d_k]
    assert round(r.var_unscaled, 2) == var and round(r.var_scaled, 3) == var_scaled
    # and, whatever the seed, within sampling error of d_k: sd(var estimate) ≈ d_k·√(2/N) ... plus kurtosis
    assert abs(r.var_unscaled - d_k) < 5 * d_k * math.sqrt(3 / lesson.PAIRS)


@pytest.mark.parametrize("d_k, top, top_scaled, sat, grad, grad_scaled", [
    (4, 0.335, 0.152, 0.001, 0.2918, 0.2337),          # the course prints the gradient to 4 decimals
    (16, 0.637, 0.165, 0.030, 0.2875, 0.2388),
    (64, 0.822, 0.163, 0.235, 0.1948, 0.2395),
    (256, 0.903, 0.164, 0.511, 0.1129, 0.2405),
    (1024, 0.953, 0.164, 0.732, 0.0570, 0.2403),
])
def test_softmax_saturation_matches_the_lesson(table, d_k, top, top_scaled, sat, grad, grad_scaled):
    r = table[d_k]
    assert (round(r.top_unscaled, 3), round(r.top_scaled, 3)) == (top, top_scaled)
    assert round(r.saturated_unscaled, 3) == sat and r.saturated_scaled == 0.0
    assert (round(r.grad_unscaled, 4), round(r.grad_scaled, 4)) == (grad, grad_scaled)


def test_other_seeds_agree_within_sampling_error():
    r = {x.d_k: x for x in lesson.scaling_table((4, 64), seed=11, grad_seed=12, pairs=4000, queries=400)}
    assert abs(r[64].var_unscaled - 64) < 5 * 64 * math.sqrt(3 / 4000)
    assert abs(r[4].top_unscaled - 0.335) < 0.03 and abs(r[64].top_scaled - 0.163) < 0.02
    assert abs(r[64].grad_scaled - 0.240) < 0.02


def test_example_rows_are_sorted_distributions(table):
    for r in table.values():
        for ws in (r.example_unscaled, r.example_scaled):
            assert len(ws) == lesson.KEYS and list(ws) == sorted(ws, reverse=True)
            assert sum(ws) == pytest.approx(1.0)
    assert table[1024].example_unscaled[0] > 0.99


def test_jacobian_size_formula_equals_the_explicit_matrix():
    s = torch.randn(5, 7, dtype=torch.float64)
    p = torch.softmax(s, -1)
    J = torch.diag_embed(p) - p[..., :, None] * p[..., None, :]
    assert torch.allclose(lesson.softmax_jacobian_size(s), J.norm(dim=(-2, -1)))
    J_auto = torch.autograd.functional.jacobian(lambda x: torch.softmax(x, -1), s[0])
    assert torch.allclose(J_auto.norm(), lesson.softmax_jacobian_size(s[0]))


# -- masks ---------------------------------------------------------------------------------------------------
def test_minus_infinity_against_zero_against_after_softmax():
    c = lesson.mask_choices()
    assert r3(c["scores"]) == (0.354, 0.53, 2.121)
    assert r3(c["add −∞ before softmax"]) == (1, 0, 0)
    assert r3(c["set hidden scores to 0"]) == (0.416, 0.292, 0.292)
    assert r3(c["zero the weights after softmax"]) == (0.124, 0, 0)
    assert sum(c["zero the weights after softmax"]) < 0.2


def test_boolean_mask_pitfall_live():
    p = lesson.boolean_mask_pitfall()
    right = [(2, 0), (1, 0), (1.007, 0.248)]
    assert [r3(r) for r in p.sdpa_wrong] == [(0, 0.831), (0, 1), (0, 0)]
    assert [r3(r) for r in p.sdpa_right] == right
    assert [r3(r) for r in p.mha_right] == right
    assert [r3(r) for r in p.ours] == right
    assert torch.allclose(p.mha_wrong, p.sdpa_wrong, atol=1e-6)


def test_fully_masked_row_in_every_api():
    rows = lesson.fully_masked_rows()
    assert {r["API"] for r in rows} == {"ticketnet attention()", "F.scaled_dot_product_attention",
                                        "nn.MultiheadAttention"}
    ours = next(r for r in rows if r["API"].startswith("ticketnet"))
    assert ours["output of the fully masked row"] == (0.0, 0.0) and not ours["NaN"]
    assert all(r["other rows unchanged"] for r in rows)


# -- bigger embeddings and sizes -----------------------------------------------------------------------------
def test_four_times_bigger_embeddings_saturate():
    s = lesson.bigger_embeddings(4)
    assert [r3(r) for r in s.weights] == [(0, 0, 1), (0.333, 0.333, 0.333), (1, 0, 0)]
    assert r3(s.scores[0]) == (5.657, 8.485, 33.941)              # 16 × (0.354, 0.530, 2.121)
    assert s.jacobian[0] < 1e-9 < lesson.bigger_embeddings(1).jacobian[0]


def test_attention_parameters_do_not_depend_on_heads():
    from ticketnet.nn.attention import MultiHead

    assert lesson.attention_parameters(64) == 16_640 and lesson.attention_parameters(512) == 1_050_624
    assert lesson.attention_parameters(512, bias=False) == 1_048_576
    for h in (1, 4, 8):
        assert sum(p.numel() for p in MultiHead(64, h).parameters()) == lesson.attention_parameters(64)
