"""Synthetic logits with labels, for examples and checks."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, validate_params

__all__ = ["make_logits"]


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "n_classes": [Interval(Integral, 2, None, closed="left")],
        "scale": [Interval(Real, 0, None, closed="neither")],
        "random_state": [
            Interval(Integral, 0, None, closed="left"), np.random.Generator, None
        ],
        "dtype": "no_validation",
    },
    prefer_skip_nested_validation=True,
)
def make_logits(n_samples=300, n_classes=3, *, scale=4.0, random_state=0, dtype=np.float64):
    """Over-confident synthetic logits of a classifier, with their labels.

    Each row is ``scale * (1.5 * onehot(y) + e)`` with ``e`` standard normal
    noise: the true class has the largest logit on average, and a ``scale``
    above about 1 makes ``softmax`` of the logits over-confident (a fitted
    temperature above 1). The labels are balanced: each class has
    ``n_samples // n_classes`` or one more rows, in random order.

    Parameters
    ----------
    n_samples : int, default=300
        Number of rows; at least ``n_classes``, so that every class is present.
    n_classes : int >= 2, default=3
        Number of classes (columns of the logits).
    scale : float > 0, default=4.0
        Multiplies signal and noise together: the larger, the more
        over-confident the logits.
    random_state : int, numpy.random.Generator or None, default=0
        Seed of :func:`numpy.random.default_rng` (or the generator itself),
        which shuffles the labels and draws the noise.
    dtype : numpy dtype, default=np.float64
        Dtype of the logits.

    Returns
    -------
    X : ndarray of shape (n_samples, n_classes)
        The logits.
    y : ndarray of shape (n_samples,), int64
        The labels, in ``0..n_classes-1``.

    Raises
    ------
    ValueError
        If ``n_samples < n_classes`` or a parameter is out of range.

    Examples
    --------
    >>> from skcal.datasets import make_logits
    >>> X, y = make_logits(1000, 3, scale=4.0, random_state=0)
    >>> X.shape, y.shape
    ((1000, 3), (1000,))
    >>> float((X.argmax(axis=1) == y).mean())  # accuracy of the logits
    0.757
    """
    if n_samples < n_classes:
        raise ValueError(
            f"make_logits needs n_samples >= n_classes so that every class is "
            f"present; got n_samples={n_samples} and n_classes={n_classes}."
        )
    rng = np.random.default_rng(random_state)
    y = np.arange(n_samples) % n_classes
    rng.shuffle(y)
    X = scale * (1.5 * np.eye(n_classes)[y] + rng.normal(size=(n_samples, n_classes)))
    return X.astype(dtype), y.astype(np.int64)
