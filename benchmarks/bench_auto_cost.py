"""Cost of AutoCalibrator.fit against the sum of its candidates' fold fits.

The target (issue 25): the whole fit -- folds, every candidate's fold fits and
scores, the refit of the chosen one -- takes at most 1.5 times the sum of the
candidates' fold fits (``cv_results_["mean_fit_time"] * n_splits_``, summed).

Usage::

    python benchmarks/bench_auto_cost.py            # the three bundled sets
"""

import time
import warnings

import numpy as np

from skcal import AutoCalibrator
from skcal.datasets import list_datasets, load_logits


def main():
    print(f"{'set':28s} {'chosen':12s} {'fit s':>8s} {'fold fits s':>12s} {'ratio':>6s}")
    for name in list_datasets():
        d = load_logits(name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            AutoCalibrator().fit(d.logits_val[:200], d.y_val[:200])  # warm-up
            t0 = time.perf_counter()
            auto = AutoCalibrator().fit(d.logits_val, d.y_val)
            total = time.perf_counter() - t0
        folds = float(np.sum(auto.cv_results_["mean_fit_time"]) * auto.n_splits_)
        print(f"{name:28s} {auto.best_name_:12s} {total:8.2f} {folds:12.2f} "
              f"{total / folds:6.2f}")


if __name__ == "__main__":
    main()
