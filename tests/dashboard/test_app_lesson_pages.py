"""The Formula, Verification and Cost pages driven through Streamlit's AppTest, widget by widget."""

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ticketnet import WEIGHTS

ROOT = Path(__file__).resolve().parents[2]
PAGES = ROOT / "pages"


def page(name: str, timeout: float = 120) -> AppTest:
    at = AppTest.from_file(str(PAGES / name), default_timeout=timeout)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def rerun(at):
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


# -- Formula -------------------------------------------------------------------------------------------------
def test_formula_two_vectors_sliders():
    at = page("formula.py")
    assert metrics(at)["Output O"] == "[1.340, 1.321]"
    at.slider(key="formula_q1").set_value(0.0)
    rerun(at)
    assert metrics(at)["Output O"] == "[1.000, 2.000]"
    at.slider(key="formula_q2").set_value(1.0)
    rerun(at)
    assert metrics(at)["Output O"] == "[0.660, 2.679]"
    assert len(at.get("vega_lite_chart")) == 1


def test_formula_matrix_steps_back_next_and_mask():
    at = page("formula.py")
    at.segmented_control(key="formula_section").set_value("Matrix form")
    rerun(at)
    assert metrics(at)["Shape of the result"] == "(3, 4)"
    assert at.button(key="formula_back").disabled
    for _ in range(5):
        at.button(key="formula_next").click()
        rerun(at)
    assert at.subheader[0].value.startswith("Step 6 of 7")
    assert metrics(at)["Weights of 'damaged'"] == "0.124, 0.148, 0.728"
    at.radio(key="formula_mask").set_value("causal")
    rerun(at)
    assert metrics(at)["Weights of 'damaged'"] == "1.000, 0.000, 0.000"
    at.button(key="formula_next").click()
    rerun(at)
    assert at.subheader[0].value.startswith("Step 7 of 7") and at.button(key="formula_next").disabled
    assert metrics(at)["Shape of the result"] == "(3, 2)"
    at.button(key="formula_goto_3").click()
    rerun(at)
    assert metrics(at)["Shape of the result"] == "(3, 3)" and metrics(at)["Weights of 'damaged'"] == "not yet"
    at.button(key="formula_back").click()
    rerun(at)
    assert at.subheader[0].value.startswith("Step 2 of 7")


def test_formula_why_sqrt_dk_slider():
    at = page("formula.py")
    at.segmented_control(key="formula_section").set_value("Why √d_k")
    rerun(at)
    m = metrics(at)
    assert m["Var(q·k)"] == "4.03" and m["Largest weight, unscaled → scaled"] == "0.335 → 0.152"
    at.select_slider(key="formula_dk").set_value(1024)
    rerun(at)
    m = metrics(at)
    assert m["Var(q·k)"] == "1,024.99"
    assert m["Largest weight, unscaled → scaled"] == "0.953 → 0.164"
    assert m["Rows with a weight above 0.99"] == "73.2% → 0.0%"
    assert m["Softmax Jacobian size"] == "0.057 → 0.240"
    assert len(at.get("vega_lite_chart")) == 2        # the two rows of bars and the log-log variance


def test_formula_masks_and_bigger_embeddings():
    at = page("formula.py")
    at.segmented_control(key="formula_section").set_value("Masks")
    rerun(at)
    assert any("pitfall" in s.value for s in at.subheader)
    assert len(at.dataframe) >= 6
    at.segmented_control(key="formula_section").set_value("Bigger embeddings")
    rerun(at)
    saturated = metrics(at)["Softmax Jacobian size of the 'damaged' row"]
    at.slider(key="formula_factor").set_value(1.0)
    rerun(at)
    assert float(metrics(at)["Softmax Jacobian size of the 'damaged' row"]) > 0.1 > float(saturated)


# -- Verification --------------------------------------------------------------------------------------------
needs_weights = pytest.mark.skipif(not WEIGHTS.is_file(), reason="the shipped router is not trained yet")


@needs_weights
def test_verification_page_shows_the_parity_rows():
    from ticketnet.lens.parity import formula_rows

    at = page("verification.py")
    tables = at.dataframe
    assert len(tables) == 3
    synthetic = tables[0].value
    assert len(synthetic) == len(formula_rows()) == 24          # one head: 4 cases × 2 dtypes; MultiHead: × 2 (output, weights)
    assert set(synthetic["result"]) == {"pass"}
    assert set(synthetic["case"]) == {"no mask", "causal", "padding 7/5/3", "causal + padding"}
    assert set(synthetic["dtype"]) == {"float32", "float64"}
    model = tables[1].value
    assert any("block 2 attention weights" in c for c in model["what was compared"]) and set(model["result"]) == {"pass"}
    batch = tables[2].value
    assert batch["what was compared"].iloc[-1].startswith("masked-token invariance")
    assert batch["result"].iloc[-1] == "pass" and batch["largest difference"].iloc[-1] == "0.0e+00"
    assert any("T-65052" in s.value for s in at.subheader)
    assert not at.error
    at.button(key="verification_rerun").click()
    rerun(at)
    assert len(at.dataframe) == 3 and len(at.success) == 3


# -- Cost ----------------------------------------------------------------------------------------------------
def test_cost_page_calculators():
    at = page("cost.py")
    sizes = at.dataframe[0].value
    assert sizes.loc[sizes["n"] == 128, "score matrix (MB)"].item() == 0.07
    assert sizes.loc[sizes["n"] == 8192, "score matrix (MB)"].item() == 268.44
    m = metrics(at)
    assert m["Attention parameters"] == "16,640"
    assert m["Score memory a block"] == "230.4 kB"           # 4 heads × 120² × 4 bytes
    assert m["KV cache (GQA)"] == "1.074 GB"                            # 2·32·8·128·8192·2 bytes
    at.select_slider(key="cost_kv_heads").set_value(1)
    rerun(at)
    assert "KV cache (MQA)" in metrics(at)
    at.select_slider(key="cost_kv_heads").set_value(32)
    rerun(at)
    assert metrics(at)["KV cache (MHA)"] == "4.295 GB"
    at.number_input(key="cost_window").set_value(4096)
    rerun(at)
    assert metrics(at)["KV cache (MHA + sliding window)"] == "2.147 GB"
    at.slider(key="cost_ticket_tokens").set_value(30)
    rerun(at)
    assert metrics(at)["Attention parameters"] == "16,640"


def test_cost_page_measures_with_progress_and_caches():
    at = page("cost.py")
    assert any("Nothing measured yet" in i.value for i in at.info)
    at.select_slider(key="cost_max_n").set_value(256)
    at.number_input(key="cost_repeats").set_value(1)
    rerun(at)
    at.button(key="cost_measure").click()
    rerun(at)
    assert len(at.get("vega_lite_chart")) == 2                   # time and memory, log-log
    assert any("blocked_attention equals" in s.value for s in at.success)
    assert at.button(key="cost_measure").label == "Measure again"
    rerun(at)                                                           # kept: no re-measuring on rerun
    assert len(at.get("vega_lite_chart")) == 2


# -- the app lists the three pages ---------------------------------------------------------------------------
def test_app_navigation_has_the_formula_section():
    src = (ROOT / "dashboard" / "app.py").read_text()
    for name in ("formula.py", "verification.py", "cost.py"):
        assert f'"pages" / "{name}"' in src
    assert '"How attention works": FORMULA_PAGES' in src


# -- issue 23 item 14 ------------------------------------------------------------------------------------------------
def test_a_smaller_kv_cache_reads_as_a_saving_with_a_down_arrow():
    # "↑ −75 % against MHA": the unicode minus read as positive and drew an up arrow on a saving.
    at = page("cost.py")
    kv = next(m for m in at.metric if m.label.startswith("KV cache"))
    assert kv.label == "KV cache (GQA)" and kv.proto.delta == "-75% against MHA"
    assert kv.proto.direction == kv.proto.MetricDirection.DOWN and kv.proto.color == kv.proto.MetricColor.GREEN
    at.select_slider(key="cost_kv_heads").set_value(32)
    rerun(at)
    mha = next(m for m in at.metric if m.label.startswith("KV cache"))
    assert mha.proto.delta == "same as MHA" and mha.proto.direction == mha.proto.MetricDirection.NONE


def test_the_measuring_time_is_said_as_measured():
    # "about a minute" for what took 6.7 s: the estimate is the measured one, and a measurement says how long it took.
    at = page("cost.py")
    hint = next(i.value for i in at.info if "Nothing measured yet" in i.value)
    assert "about a minute" not in hint and "7 s on two idle cores" in hint
    at.select_slider(key="cost_max_n").set_value(128)
    at.number_input(key="cost_repeats").set_value(1)
    rerun(at)
    at.button(key="cost_measure").click()
    rerun(at)
    assert any(re.fullmatch(r"Measured in \d+\.\d s, 1 repeat per point\.", c.value) for c in at.caption)


def test_formula_works_the_picked_head_of_the_ticket_through_beside_the_router():
    from tests.conftest import app_test

    at = app_test(timeout=120, ticket="T-65052")
    at.switch_page("../pages/formula.py")
    rerun(at)
    at.segmented_control(key="formula_section").set_value("Your ticket's head")
    rerun(at)
    assert metrics(at)["d_k"] == "16" and metrics(at)["√d_k"] == "4.000"
    assert float(metrics(at)["|here − the router|, whole head"]) < 1e-5
    table = at.dataframe[0].value
    assert len(table) == 30 and (table["weight"] - table["router's weight"]).abs().max() < 1e-6
    assert abs(table["weight"].sum() - 1) < 1e-9
    at.selectbox(key="formula_head").set_value(2)
    rerun(at)
    assert (at.dataframe[0].value["weight"] - table["weight"]).abs().max() > 1e-3   # another head reads otherwise
