"""Tests of skcal._backend._sort: the radix-pass value sort against ``np.sort``."""

import numpy as np
import pytest

from skcal._backend._sort import RADIX_MIN, sort_values


def _cases():
    rng = np.random.default_rng(0)
    n = 4 * RADIX_MIN
    normal = rng.normal(scale=4.0, size=n)
    return {
        "normal": normal,
        "below_radix_min": normal[: RADIX_MIN // 2],
        "few_distinct": rng.integers(-3, 4, size=n).astype(np.float64),
        "all_equal": np.full(n, 2.5),
        # almost every value shares a key with others: the final sort does most
        "outlier": np.concatenate([normal, [1e12]]),
        "tight_cluster": 3.0 + 1e-9 * rng.normal(size=n),
        "overflowing_range": np.concatenate([normal, [1e308, -1e308]]),
        "signed_zeros_and_extremes": np.concatenate([
            normal, [-0.0, 0.0, -0.0, 1e308, -1e308, 5e-324, -5e-324, 1e-300, -2.2e-308]
        ]),
        "one_sign_wide": np.exp(rng.normal(scale=30.0, size=n)),
        "sorted": np.sort(normal),
        "reversed": np.sort(normal)[::-1].copy(),
    }


@pytest.mark.parametrize("case", list(_cases()))
def test_sort_values_matches_np_sort(case):
    s = _cases()[case]
    before = s.copy()
    xs = sort_values(s)
    np.testing.assert_array_equal(s, before)  # the input is not modified
    np.testing.assert_array_equal(xs, np.sort(s))
    assert np.all(xs[1:] >= xs[:-1])
    # the same values bit for bit (signed zeros included)
    np.testing.assert_array_equal(np.sort(xs.view(np.int64)), np.sort(s.view(np.int64)))
