"""Tests of skcal._backend._sort: the radix-pass value sort against ``np.sort``."""

import numpy as np
import pytest

from skcal._backend._sort import RADIX_MIN, radix_pays, radix_sort, sort_values


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


@pytest.mark.parametrize("sort", [radix_sort, sort_values])
@pytest.mark.parametrize("case", list(_cases()))
def test_sort_values_matches_np_sort(case, sort):
    s = _cases()[case]
    before = s.copy()
    xs = sort(s)
    np.testing.assert_array_equal(s, before)  # the input is not modified
    np.testing.assert_array_equal(xs, np.sort(s))
    assert np.all(xs[1:] >= xs[:-1])
    # the same values bit for bit (signed zeros included)
    np.testing.assert_array_equal(np.sort(xs.view(np.int64)), np.sort(s.view(np.int64)))


@pytest.mark.parametrize("case", ["normal", "few_distinct", "outlier", "one_sign_wide"])
def test_radix_sort_of_int64_keys_matches_np_sort(case):
    # the order-preserving int64 keys of the CIR fit: the float bits, the low
    # 63 flipped for negatives, shifted to span up to 2**64 - 1 (mod 2**64)
    s = _cases()[case]
    b = s.view(np.int64)
    k = (b >> 63) & np.int64(2**63 - 1) ^ b
    for keys in (k, k - k.min() + np.iinfo(np.int64).min, np.array([5, -3, 5] * RADIX_MIN)):
        before = keys.copy()
        np.testing.assert_array_equal(radix_sort(keys), np.sort(keys))
        np.testing.assert_array_equal(keys, before)
    wide = np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, 0, -1, 1] * RADIX_MIN)
    np.testing.assert_array_equal(radix_sort(wide), np.sort(wide))


def test_radix_pays_is_a_cached_bool():
    assert radix_pays() is radix_pays() and isinstance(radix_pays(), bool)
