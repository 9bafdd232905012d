"""Tests for skcal.datasets.make_logits, the synthetic logit generator."""

import numpy as np
import pytest
from scipy.special import log_softmax

from skcal.datasets import make_logits


def test_make_logits_is_the_documented_formula():
    X, y = make_logits(500, 4, scale=2.5, random_state=7)
    # the same draws, in the same order, from an independent generator
    rng = np.random.default_rng(7)
    labels = np.arange(500) % 4
    rng.shuffle(labels)
    noise = rng.normal(size=(500, 4))
    np.testing.assert_array_equal(y, labels)
    np.testing.assert_allclose(X, 2.5 * (1.5 * np.eye(4)[labels] + noise), rtol=0, atol=0)
    assert X.dtype == np.float64 and y.dtype == np.int64


def test_make_logits_balanced_labels_and_dtype():
    X, y = make_logits(10, 3, dtype=np.float32)
    assert X.shape == (10, 3) and X.dtype == np.float32
    assert np.bincount(y).tolist() == [4, 3, 3]


def test_make_logits_seeding():
    a, _ = make_logits(50, 2, random_state=3)
    b, _ = make_logits(50, 2, random_state=np.random.default_rng(3))
    c, _ = make_logits(50, 2, random_state=4)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_make_logits_scale_makes_over_confident_logits():
    # the NLL-optimal temperature, from a dense grid: above 1 for scale=4
    X, y = make_logits(4000, 3, scale=4.0)
    grid = np.linspace(0.5, 6.0, 1101)
    nll = [-log_softmax(X / t, axis=1)[np.arange(len(y)), y].mean() for t in grid]
    assert 2.0 < grid[int(np.argmin(nll))] < 4.0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_samples": 2, "n_classes": 3}, "n_samples >= n_classes"),
        ({"n_classes": 1}, "'n_classes' parameter"),
        ({"n_samples": 0}, "'n_samples' parameter"),
        ({"scale": 0.0}, "'scale' parameter"),
        ({"random_state": "a"}, "'random_state' parameter"),
    ],
)
def test_make_logits_rejects_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_logits(**kwargs)
