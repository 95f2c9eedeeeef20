"""`cached_on_weights`: one cache per computation, hit by the same arguments, recomputed once the weights change."""

import os
import shutil

import pytest


@pytest.fixture
def own_weights(artifacts, tmp_path, monkeypatch):
    """A copy of the router's files that the test may touch, with $TICKETNET_WEIGHTS pointing at it."""
    from ticketnet import predictions

    for p in predictions.weights_files(artifacts.weights):
        shutil.copy(p, tmp_path / p.name)
    weights = tmp_path / artifacts.weights.name
    monkeypatch.setenv("TICKETNET_WEIGHTS", str(weights))
    return weights


def test_a_cached_computation_is_reused_for_the_same_arguments_and_redone_for_new_weights(own_weights):
    from dashboard.data.model import cached_on_weights, router

    calls = []

    @cached_on_weights(max_entries=8)
    def teams_of(text: str, upper: bool = False) -> list[str]:
        calls.append(text)
        teams = list(router().teams)
        return [t.upper() for t in teams] if upper else teams

    first = teams_of("a ticket")
    assert teams_of("a ticket") == first and calls == ["a ticket"], "the same arguments hit the cache"
    teams_of("a ticket", upper=True)
    teams_of("another")
    assert calls == ["a ticket", "a ticket", "another"], "other arguments, another entry"

    for name in ("router.json", own_weights.name):                  # any of the weights' files counts
        stat = (own_weights.parent / name).stat()
        os.utime(own_weights.parent / name, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        assert teams_of("a ticket") == first
        assert calls[-1] == "a ticket" and len(calls) == 3 + (name == own_weights.name) + 1
        teams_of("a ticket")
        assert len(calls) == 3 + (name == own_weights.name) + 1, "cached again under the new stamp"
    teams_of.clear()
    teams_of("a ticket")
    assert len(calls) == 6, "cleared"


def test_two_computations_with_the_same_body_keep_their_own_caches(own_weights):
    from dashboard.data.model import cached_on_weights

    @cached_on_weights()
    def one(x: int) -> int:
        return x + 1

    @cached_on_weights()
    def other(x: int) -> int:
        return x + 2

    assert (one(1), other(1), one(1), other(1)) == (2, 3, 2, 3)
    assert one.__name__ == "one" and other.__doc__ is None


def test_the_router_is_loaded_first_so_broken_weights_stop_before_the_computation(own_weights, monkeypatch):
    from dashboard.data import model

    calls = []
    monkeypatch.setattr(model, "router", lambda: calls.append("router"))

    @model.cached_on_weights()
    def compute(x: int) -> int:
        calls.append(x)
        return x

    assert compute(3) == 3 and compute(3) == 3
    assert calls == ["router", 3, "router"]


def test_loading_the_router_leaves_the_launcher_s_heap_settings_alone(own_weights, monkeypatch):
    # python -m dashboard sets the heap's thresholds once, for the whole server; a mallopt on the router's first load
    # would override them for every session (it did: the launcher's choice never held once a page had loaded it).
    import ticketnet._runtime.allocator as allocator
    from dashboard.data import model

    calls = []
    monkeypatch.setattr(allocator, "_mallopt", lambda param, value: calls.append((param, value)) or True)
    model._load_router.clear()
    loaded = model.router()
    assert loaded.teams and calls == []
    model._load_router.clear()


def test_a_split_s_key_hashes_are_computed_once_per_file_stamp(own_weights, monkeypatch):
    # Every Interpretation run asks for them several times (head importance, the split-wide run, which splits are
    # computed); they are read from the split store, and hashed again only when the weights file changes.
    from dashboard.data import splits
    from ticketnet import predictions

    splits._split_store.clear()
    calls = []
    real = predictions.key_hashes
    monkeypatch.setattr(predictions, "key_hashes", lambda w, c: calls.append(c.name) or real(w, c))
    first = splits.key_hashes("valid")
    assert splits.key_hashes("valid") == first == real(own_weights, splits.split_path("valid"))
    assert calls == ["valid.csv"]
    splits.key_hashes("test")
    assert calls == ["valid.csv", "test.csv"]
    with open(own_weights, "ab") as f:                 # new weights: new hashes
        f.write(b"\0")
    os.utime(own_weights, (1, 1))
    changed = splits.key_hashes("valid")
    assert calls[-1] == "valid.csv" and len(calls) == 3 and changed[0] != first[0]
    splits._split_store.clear()
