"""skcal.llm: option log-probabilities from a causal LM, contextual and batch calibration."""

import numpy as np
import pytest
from scipy.special import log_softmax, softmax

from skcal.llm import BatchCalibrator, ContextualCalibrator, option_log_probs, score_options
# The common estimator checks run on both calibrators through the registry
# (tests/test_common.py: skcal.utils.discovery.all_calibrators finds skcal.llm).


def test_llm_calibrators_are_in_the_registry():
    from skcal.utils.discovery import all_calibrators

    found = dict(all_calibrators("other"))
    assert found["ContextualCalibrator"] is ContextualCalibrator
    assert found["BatchCalibrator"] is BatchCalibrator


# ------------------------------------------------------------ option log-probs
def test_option_log_probs_single_token_matches_scipy():
    rng = np.random.default_rng(0)
    L = rng.normal(size=(7, 30)) * 3
    out = option_log_probs(L, [4, [9], np.int64(17)])
    np.testing.assert_allclose(out, log_softmax(L, axis=1)[:, [4, 9, 17]], rtol=1e-13)


def test_option_log_probs_multi_token_sums_teacher_forced_tokens():
    rng = np.random.default_rng(1)
    L = rng.normal(size=(5, 2, 3, 11))
    opts = [[3, 7, 1], [2]]
    ref0 = sum(log_softmax(L[:, 0, j], axis=1)[:, t] for j, t in enumerate(opts[0]))
    ref1 = log_softmax(L[:, 1, 0], axis=1)[:, 2]  # positions past the option ignored
    np.testing.assert_allclose(option_log_probs(L, opts), np.column_stack([ref0, ref1]),
                               rtol=1e-12)


def test_option_log_probs_torch_input_gives_tensor():
    torch = pytest.importorskip("torch")
    L = torch.randn(4, 12, dtype=torch.float16)
    out = option_log_probs(L, [1, 5])
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float32
    ref = log_softmax(L.float().numpy().astype(np.float64), axis=1)[:, [1, 5]]
    np.testing.assert_allclose(out.numpy(), ref, atol=1e-5)


@pytest.mark.parametrize(
    "logits, options, match",
    [
        (np.zeros((3, 10)), [1], "At least 2"),
        (np.zeros((3, 10)), [1, 10], "outside the vocabulary"),
        (np.zeros((3, 10)), [1, [2, 3]], "several tokens"),
        (np.zeros((3, 10)), [1, []], "no token ids"),
        (np.zeros((3, 10)), [1, 2.5], "integer"),
        (np.zeros(10), [1, 2], "2-D"),
        (np.zeros((3, 3, 2, 10)), [1, 2], "do not match"),
        (np.full((3, 10), np.nan), [1, 2], "NaN"),
    ],
)
def test_option_log_probs_errors(logits, options, match):
    with pytest.raises(ValueError, match=match):
        option_log_probs(logits, options)


def test_score_options_refuses_empty_options_before_running_the_model():
    calls = []

    def model(input_ids):
        calls.append(input_ids)
        raise AssertionError("the model must not run")

    with pytest.raises(ValueError, match=r"At least 2 answer options are needed, got 0"):
        score_options(model, [[1, 2]], [])
    assert calls == []


def _tiny_lm():
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    config = transformers.GPT2Config(vocab_size=40, n_positions=32, n_embd=16, n_layer=2,
                                     n_head=2)
    gen_state = torch.random.get_rng_state()
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(config).eval()
    torch.random.set_rng_state(gen_state)
    return torch, model


def _reference_option_logprob(torch, model, prompt, option):
    """Token by token: run the model on each prefix, read the next token's log-prob."""
    total = 0.0
    seq = list(prompt)
    for t in option:
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([seq])).logits[0, -1].double().numpy()
        total += log_softmax(logits)[t]
        seq.append(t)
    return total


def test_score_options_tiny_causal_lm_matches_token_by_token_reference():
    torch, model = _tiny_lm()
    prompts = [[1, 5, 7, 2], [3], [9, 9, 4, 12, 30, 8]]
    options = [[11], [20, 21, 22], [5, 6]]
    out = score_options(model, prompts, options)
    assert out.shape == (3, 3) and out.dtype == np.float64
    ref = np.array([[_reference_option_logprob(torch, model, p, o) for o in options]
                    for p in prompts])
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    # single-token options: one forward pass, the last position's distribution
    single = score_options(model, prompts, [11, 20, 5])
    np.testing.assert_allclose(single[:, 0], ref[:, 0], rtol=1e-5, atol=1e-5)
    with torch.no_grad():
        last = torch.stack([model(input_ids=torch.tensor([p])).logits[0, -1] for p in prompts])
    np.testing.assert_allclose(single, option_log_probs(last, [11, 20, 5]).double().numpy(),
                               rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="empty"):
        score_options(model, [[]], options)
    with pytest.raises(ValueError, match="prompts is empty"):
        score_options(model, [], options)
    # a token id past the vocabulary (40) or negative: named, not torch's IndexError
    with pytest.raises(ValueError, match=r"Prompt 1: the model could not embed .* to 45"):
        score_options(model, [[1, 2], [3, 45]], options)
    with pytest.raises(ValueError, match=r"Prompt 0 has negative token ids \[-2\]"):
        score_options(model, [[1, -2]], [11, 20])


# ------------------------------------------------------------------ calibrators
def test_contextual_calibrator_matches_zhao_formula():
    rng = np.random.default_rng(2)
    cf = rng.normal(size=(3, 4))  # e.g. "N/A", "", "[MASK]"
    X = rng.normal(size=(50, 4)) * 2
    p_cf = softmax(cf, axis=1).mean(axis=0)  # Zhao et al.: mean over content-free inputs
    q = softmax(X, axis=1) / p_cf  # W = diag(p_cf)^-1, b = 0
    q /= q.sum(axis=1, keepdims=True)
    cc = ContextualCalibrator().fit(cf)
    np.testing.assert_allclose(cc.prior_, p_cf / p_cf.sum(), rtol=1e-12)
    np.testing.assert_allclose(cc.predict_proba(X), q, rtol=1e-10)
    # the same bias given as a parameter; fit on labelled data sets only classes_
    y = rng.integers(0, 4, size=50)
    cc2 = ContextualCalibrator(content_free_logits=cf).fit(X, y)
    np.testing.assert_allclose(cc2.predict_proba(X), q, rtol=1e-10)
    with pytest.raises(ValueError, match="content_free_logits has 3 columns"):
        ContextualCalibrator(content_free_logits=cf[:, :3]).fit(X, y)
    # one content-free input given as a vector: read as binary scores, said so
    with pytest.raises(ValueError, match=r"is 1-D, shape \(4,\).*\(n_content_free, 4\)"):
        ContextualCalibrator(content_free_logits=cf[0]).fit(X, y)
    np.testing.assert_allclose(
        ContextualCalibrator(content_free_logits=cf[:1]).fit(X, y).prior_,
        softmax(cf[0]), rtol=1e-12,
    )


def test_batch_calibrator_matches_zhou_formula_and_needs_no_labels():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 3)) * 2 + [1.5, 0, -1]
    w = rng.uniform(0.1, 2, size=80)
    P = softmax(X, axis=1)
    prior = (w[:, None] * P).sum(axis=0) / w.sum()  # Zhou et al.: batch mean (weighted)
    q = P / prior
    q /= q.sum(axis=1, keepdims=True)
    bc = BatchCalibrator().fit(X, sample_weight=w)
    np.testing.assert_array_equal(bc.classes_, [0, 1, 2])
    np.testing.assert_allclose(bc.prior_, prior, rtol=1e-12)
    np.testing.assert_allclose(bc.predict_proba(X), q, rtol=1e-10)
    # labels, if given, only name the classes
    lab = np.array(["a", "b", "c"])[rng.integers(0, 3, size=80)]
    bc2 = BatchCalibrator().fit(X, lab, sample_weight=w)
    np.testing.assert_array_equal(bc2.classes_, ["a", "b", "c"])
    np.testing.assert_allclose(bc2.predict_proba(X), q, rtol=1e-10)
    np.testing.assert_allclose(BatchCalibrator().fit_predict_proba(X),
                               BatchCalibrator().fit(X).predict_proba(X))
    with pytest.raises(ValueError, match="classes has 2 entries"):
        BatchCalibrator(classes=[0, 1]).fit(X)


def test_batch_calibrator_underflowing_class_keeps_a_finite_prior():
    X = np.array([[0.0, -2000.0], [0.0, -1990.0], [-5.0, 0.0]])
    bc = BatchCalibrator().fit(X[:2])
    assert np.isfinite(bc.log_prior_).all()  # prior_[1] itself underflows to 0
    P = bc.predict_proba(X)
    assert np.isfinite(P).all()


def test_prior_corrections_remove_label_bias_on_bundled_gpt2_sets():
    """On GPT-2 zero-shot SST-2 / AG News, removing the label bias raises accuracy."""
    from skcal.datasets import load_agnews_gpt2, load_sst2_gpt2

    for load in (load_sst2_gpt2, load_agnews_gpt2):
        d = load()
        acc0 = np.mean(d.logits_test.argmax(axis=1) == d.y_test)
        bc = BatchCalibrator().fit(d.logits_val)  # no labels used
        acc = np.mean(bc.predict(d.logits_test) == d.y_test)
        assert acc > acc0 + 0.05, (d.name, acc0, acc)


def test_duplicate_options_are_rejected():
    from skcal.llm import option_log_probs

    L = np.zeros((2, 5))
    with pytest.raises(ValueError, match="Options 0 and 1 have the same token ids"):
        option_log_probs(L, [3, 3])
    with pytest.raises(ValueError, match="Options 0 and 2 have the same token ids"):
        option_log_probs(np.zeros((2, 3, 2, 5)), [[1, 2], [2], [1, 2]])
