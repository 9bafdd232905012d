"""Regenerate the figures committed under ``docs/_static/``.

The documentation build never reads ``../shared/data``; the figures that need
the real logit sets are made by this script, run by hand, and committed::

    python tools/make_docs_figures.py            # writes docs/_static/*.png
    python tools/make_docs_figures.py --data /path/to/shared/data

Figures
-------
``reliability_cifar10_densenet40.png``
    Top-label reliability diagram (15 equal-width bins) of DenseNet-40 on the
    CIFAR-10 test split of ``cifar10_densenet40_guo.npz``, before and after a
    :class:`skcal.TemperatureScaler` fitted on the validation split, with the
    fraction of samples per bin below each diagram. The script prints the
    temperature and the test ECE / NLL it measured; the captions in
    ``docs/index.rst`` and ``docs/user_guide/temperature.rst`` quote them.
``reliability_intervals_lenet5.png``
    LeNet-5 on the CIFAR-10 test split of ``cifar10_lenet5_netcal.npz``,
    before and after temperature scaling: left, the binned diagram with
    Clopper-Pearson per-bin bands and the bin counts; right, the smoothed
    diagram of Błasiok & Nakkiran with the smooth ECE. Quoted in
    ``docs/user_guide/metrics.rst``.
"""

import argparse
import os
import sys
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = Path(
    os.environ.get("SKCAL_SHARED_DATA", REPO_ROOT.parent / "shared" / "data")
)
DEFAULT_OUTPUT = REPO_ROOT / "docs" / "_static"


def reliability_cifar10_densenet40(data_dir, output_dir):
    """Draw and save the before/after temperature scaling diagram.

    Parameters
    ----------
    data_dir : pathlib.Path
        Folder holding ``cifar10_densenet40_guo.npz``.
    output_dir : pathlib.Path
        Folder the PNG is written to.

    Returns
    -------
    figures : dict
        Temperature and test ECE / NLL before and after, for the captions.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from skcal import TemperatureScaler
    from skcal.display import ReliabilityDisplay
    from skcal.metrics import expected_calibration_error, negative_log_likelihood

    path = Path(data_dir) / "cifar10_densenet40_guo.npz"
    if not path.exists():
        raise SystemExit(f"error: {path} not found (pass --data DIR)")
    with np.load(path) as f:
        z_val, y_val = f["logits_val"], f["y_val"]
        z_test, y_test = f["logits_test"], f["y_test"]

    ts = TemperatureScaler().fit(z_val, y_val)
    figures = {
        "temperature": ts.temperature_,
        "ece_before": expected_calibration_error(
            y_test, z_test, n_bins=15, input_type="logits"
        ),
        "ece_after": expected_calibration_error(
            y_test, ts.predict_proba(z_test), n_bins=15
        ),
        "nll_before": negative_log_likelihood(y_test, z_test, input_type="logits"),
        "nll_after": negative_log_likelihood(y_test, ts.predict_proba(z_test)),
        "accuracy": float(np.mean(z_test.argmax(1) == y_test)),
    }

    fig, axes = plt.subplots(
        2, 2, figsize=(10, 6.4), height_ratios=(3, 1), sharex=True,
        layout="constrained",
    )
    (ax0, ax1), (hist0, hist1) = axes
    ReliabilityDisplay.from_predictions(
        y_test, z_test, input_type="logits", n_bins=15, ax=ax0,
        show_histogram=True, hist_ax=hist0, name="DenseNet-40", color="tab:red",
    )
    ReliabilityDisplay.from_estimator(
        ts, z_test, y_test, n_bins=15, ax=ax1, show_histogram=True, hist_ax=hist1,
        name=f"TemperatureScaler (T = {ts.temperature_:.2f})", color="tab:blue",
    )
    for ax, hist in ((ax0, hist0), (ax1, hist1)):
        ax.set_xlabel("")
        ax.tick_params(labelbottom=True)
        hist.set_ylim(0, 1)
        hist.set_xlabel("Confidence (mean top-label probability)")
    ax0.set_title(
        "Before: softmax of the logits\n"
        f"ECE {100 * figures['ece_before']:.2f} %, NLL {figures['nll_before']:.3f}"
    )
    ax1.set_title(
        "After temperature scaling (fitted on val)\n"
        f"ECE {100 * figures['ece_after']:.2f} %, NLL {figures['nll_after']:.3f}"
    )
    fig.suptitle(
        "CIFAR-10 test set (10000 images), DenseNet-40 (Guo et al. 2017): "
        "top-label, 15 equal-width bins"
    )
    output_dir.mkdir(parents=True, exist_ok=True)
    out = output_dir / "reliability_cifar10_densenet40.png"
    fig.savefig(out, dpi=100, metadata={"Software": None})
    plt.close(fig)
    print(f"wrote {out.relative_to(REPO_ROOT) if out.is_relative_to(REPO_ROOT) else out}")
    return figures


def reliability_intervals_lenet5(data_dir, output_dir):
    """Draw the per-bin interval and smooth diagrams of LeNet-5, before and after TS.

    Parameters
    ----------
    data_dir : pathlib.Path
        Folder holding ``cifar10_lenet5_netcal.npz``.
    output_dir : pathlib.Path
        Folder the PNG is written to.

    Returns
    -------
    figures : dict
        Temperature, test ECE and smooth ECE before and after.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from skcal import TemperatureScaler
    from skcal.display import ReliabilityDisplay
    from skcal.metrics import (
        expected_calibration_error,
        smooth_calibration_error,
        smooth_reliability_curve,
    )

    path = Path(data_dir) / "cifar10_lenet5_netcal.npz"
    if not path.exists():
        raise SystemExit(f"error: {path} not found (pass --data DIR)")
    with np.load(path) as f:
        z_val, y_val = f["logits_val"], f["y_val"]
        z_test, y_test = f["logits_test"], f["y_test"]
    ts = TemperatureScaler().fit(z_val, y_val)
    z_ts = np.asarray(ts.predict_log_proba(z_test), dtype=np.float64)
    figures = {"temperature": ts.temperature_}
    for key, z in (("before", z_test), ("after", z_ts)):
        figures[f"ece_{key}"] = expected_calibration_error(y_test, z, input_type="logits")
        figures[f"smece_{key}"] = smooth_calibration_error(y_test, z, input_type="logits")

    fig, axes = plt.subplots(
        2, 2, figsize=(11, 6.8), height_ratios=(3, 1), layout="constrained",
    )
    (ax0, ax1), (hist0, hist1) = axes
    hist0.sharex(ax0)
    first = ReliabilityDisplay.from_predictions(
        y_test, z_test, input_type="logits", ax=ax0, show_histogram=True,
        hist_ax=hist0, show_counts=True, interval="clopper-pearson",
        name="LeNet-5", color="tab:red",
    )
    ReliabilityDisplay.from_predictions(
        y_test, z_ts, input_type="logits", ax=ax0, show_histogram=True,
        hist_ax=first.hist_ax_, interval="clopper-pearson",
        name=f"TemperatureScaler (T = {ts.temperature_:.2f})", color="tab:blue",
    )
    ax0.set_title("Binned (15 bins), 95% Clopper-Pearson band per bin")
    ReliabilityDisplay.from_predictions(
        y_test, z_test, input_type="logits", ax=ax1, smooth=True,
        name="LeNet-5", color="tab:red",
    )
    ReliabilityDisplay.from_predictions(
        y_test, z_ts, input_type="logits", ax=ax1, smooth=True,
        name=f"TemperatureScaler (T = {ts.temperature_:.2f})", color="tab:blue",
    )
    ax1.set_title("Smoothed (Błasiok & Nakkiran), bandwidth = smooth ECE")
    hist1.sharex(ax1)
    for z, color in ((z_test, "tab:red"), (z_ts, "tab:blue")):
        sm = smooth_reliability_curve(y_test, z, input_type="logits")
        hist1.plot(sm.x, sm.density, color=color)
        hist1.fill_between(sm.x, sm.density, color=color, alpha=0.15, linewidth=0)
    hist1.set(xlabel="Confidence (mean top-label probability)",
              ylabel="Density of scores", ylim=(0, None))
    for ax in (ax0, ax1):
        ax.tick_params(labelbottom=False)
        ax.set_xlabel("")
    fig.suptitle("CIFAR-10 test split (5000 images), LeNet-5: top-label reliability")
    output_dir.mkdir(parents=True, exist_ok=True)
    out = output_dir / "reliability_intervals_lenet5.png"
    fig.savefig(out, dpi=90, metadata={"Software": None})
    plt.close(fig)
    print(f"wrote {out.relative_to(REPO_ROOT) if out.is_relative_to(REPO_ROOT) else out}")
    return figures


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA,
        help=f"folder with the shared logit sets (default: {DEFAULT_DATA})",
    )
    parser.add_argument(
        "--output", type=Path, default=DEFAULT_OUTPUT,
        help=f"output folder (default: {DEFAULT_OUTPUT})",
    )
    args = parser.parse_args(argv)
    f = reliability_cifar10_densenet40(args.data, args.output)
    print(
        f"cifar10_densenet40_guo test: accuracy {100 * f['accuracy']:.2f} %, "
        f"T = {f['temperature']:.4f}; ECE-15 {100 * f['ece_before']:.2f} % -> "
        f"{100 * f['ece_after']:.2f} %; NLL {f['nll_before']:.4f} -> "
        f"{f['nll_after']:.4f}"
    )
    g = reliability_intervals_lenet5(args.data, args.output)
    print(
        f"cifar10_lenet5_netcal test: T = {g['temperature']:.4f}; ECE-15 "
        f"{100 * g['ece_before']:.2f} % -> {100 * g['ece_after']:.2f} %; smooth ECE "
        f"{100 * g['smece_before']:.2f} % -> {100 * g['smece_after']:.2f} %"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
