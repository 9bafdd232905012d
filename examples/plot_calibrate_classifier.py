"""
=====================================================
Calibrating a fitted scikit-learn classifier
=====================================================

A Gaussian naive Bayes classifier on the digits dataset is accurate but
grossly over-confident: it treats the 64 pixels as independent, so its
evidence is counted many times over and almost every prediction gets a
probability near 1.

This example calibrates the *already fitted* model, without retraining it:

1. :class:`~skcal.ClassifierLogits` turns the frozen classifier into its
   logits (here the log of ``predict_proba``), and a skcal calibrator after it
   in a :class:`~sklearn.pipeline.Pipeline` makes the pair a calibrated
   classifier;
2. :class:`~sklearn.model_selection.GridSearchCV` picks the calibration method
   and its hyper-parameter on the calibration set;
3. reliability diagrams and the test negative log-likelihood (NLL) compare
   the model before and after.

The data is split three ways: the classifier is trained on one part, the
calibrator is fitted (and chosen) on a second part, and everything is measured
on a third part used for neither.
"""

# %%
# Data and an over-confident model
# --------------------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import GridSearchCV, StratifiedKFold, train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import Pipeline

from skcal import (
    CalibratedClassifier,
    ClassifierLogits,
    IsotonicScaler,
    PlattScaler,
    TemperatureScaler,
    VectorScaler,
)
from skcal.display import ReliabilityDisplay
from skcal.metrics import expected_calibration_error, negative_log_likelihood

X, y = load_digits(return_X_y=True)
X_train, X_rest, y_train, y_rest = train_test_split(
    X, y, test_size=0.6, stratify=y, random_state=0
)
X_cal, X_test, y_cal, y_test = train_test_split(
    X_rest, y_rest, test_size=0.5, stratify=y_rest, random_state=0
)
print(f"train {len(y_train)}, calibration {len(y_cal)}, test {len(y_test)} images")

model = GaussianNB().fit(X_train, y_train)


def report(name, estimator):
    """Print accuracy, NLL and top-label ECE (15 bins) on the test set."""
    P = estimator.predict_proba(X_test)
    acc = np.mean(estimator.classes_[P.argmax(axis=1)] == y_test)
    nll = negative_log_likelihood(y_test, P)
    ece = expected_calibration_error(y_test, P)
    print(f"{name:32s} accuracy {acc:.3f}  NLL {nll:.3f}  ECE {100 * ece:.1f} %")


report("naive Bayes (uncalibrated)", model)

# %%
# The NLL is infinite: some test images get probability exactly 0 for their
# true class (``exp`` of a very negative log-likelihood underflows).

# %%
# Calibrate the fitted model inside a Pipeline
# --------------------------------------------
# :class:`~sklearn.frozen.FrozenEstimator` keeps the classifier as it is:
# fitting the pipeline on the calibration set fits the calibrator only.
# ``ClassifierLogits`` uses the classifier's ``decision_function`` when it has
# one; naive Bayes has only ``predict_proba``, so the step outputs
# log-probabilities (exact zeros become ``log(finfo.tiny)`` = -708.4).
calibrated = Pipeline(
    [
        ("logits", ClassifierLogits(FrozenEstimator(model))),
        ("calibrator", TemperatureScaler()),
    ]
).fit(X_cal, y_cal)
print(f"temperature T = {calibrated['calibrator'].temperature_:.1f}")
report("naive Bayes + temperature", calibrated)

# %%
# Temperature scaling removes the infinite NLL but is a poor fit here: the
# log-probabilities of naive Bayes range from about -700 to 0, and the one
# temperature (about 58) that tames the most extreme of them flattens every
# moderate prediction, so the model becomes *under*-confident and its
# calibration error grows. One parameter is not enough for this model; the
# next section lets the data choose among the methods.

# %%
# The pipeline is a classifier: ``predict_proba``, ``predict`` and ``score``
# (the mean log-likelihood) work on raw images.
print(calibrated.predict(X_test[:5]), y_test[:5])

# %%
# Choose the method with GridSearchCV
# -----------------------------------
# The calibrator is an ordinary pipeline step, so the grid can list
# calibrator *instances* and their hyper-parameters (``calibrator__alpha``,
# the L2 strength of vector scaling). The candidates are scored by
# cross-validation on the calibration set only, with the log loss.
param_grid = [
    {"calibrator": [TemperatureScaler(), PlattScaler(), IsotonicScaler()]},
    {"calibrator": [VectorScaler()], "calibrator__alpha": [1e-4, 1e-2, 1.0]},
]
search = GridSearchCV(
    calibrated,
    param_grid,
    scoring="neg_log_loss",
    cv=StratifiedKFold(5, shuffle=True, random_state=0),
).fit(X_cal, y_cal)

for params, score in zip(
    search.cv_results_["params"], search.cv_results_["mean_test_score"]
):
    alpha = params.get("calibrator__alpha")
    label = type(params["calibrator"]).__name__ + (
        f"(alpha={alpha:g})" if alpha is not None else ""
    )
    print(f"{label:28s} cross-validated NLL {-score:.3f}")
print("best:", search.best_params_)
best = search.best_estimator_
report("naive Bayes + best calibrator", best)

# %%
# Reliability diagrams
# --------------------
# Each point is a bin of test images with similar top-label confidence: its
# mean confidence (x) against the fraction of those images classified
# correctly (y). With 540 test images, equal-mass bins (``strategy="quantile"``)
# keep every point an average over 54 images. The uncalibrated model claims
# near certainty for almost every image; after temperature scaling the points
# lie above the diagonal (under-confident); the isotonic map chosen by the
# grid search follows the diagonal.
fig, ax = plt.subplots(figsize=(6, 6))
curves = [
    (model, "uncalibrated"),
    (calibrated, "temperature scaling"),
    (best, f"best by GridSearchCV ({type(best['calibrator']).__name__})"),
]
for estimator, name in curves:
    ReliabilityDisplay.from_estimator(
        estimator, X_test, y_test, n_bins=10, strategy="quantile", name=name, ax=ax
    )
ax.set_title("Gaussian naive Bayes on digits (test set)")
ax.legend(loc="lower right")  # the empty corner: the curves lie at the top
plt.show()

# %%
# Cross-validated calibration from scratch
# ----------------------------------------
# When the model is not trained yet, :class:`~skcal.CalibratedClassifier`
# does both steps with cross-validation, like scikit-learn's
# :class:`~sklearn.calibration.CalibratedClassifierCV` but with any skcal
# calibrator: each of the 5 folds trains a classifier on 4/5 of the data and
# fits a calibrator on the remaining fifth; the 5 calibrated classifiers are
# averaged. All of train + calibration data is used.
cv_model = CalibratedClassifier(GaussianNB(), IsotonicScaler(), cv=5).fit(
    np.concatenate([X_train, X_cal]), np.concatenate([y_train, y_cal])
)
report("CalibratedClassifier (isotonic)", cv_model)
