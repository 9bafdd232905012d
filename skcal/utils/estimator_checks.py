"""skcal's own estimator checks, on logit-shaped data.

scikit-learn's generic checks (:func:`sklearn.utils.estimator_checks.parametrize_with_checks`)
run on every registered calibrator with no expected failure except the ones
listed in :data:`SKLEARN_CHECKS_NOT_APPLICABLE`: those feed ``X`` whose column
count is unrelated to the number of classes in ``y``, which a calibrator must
reject with a ``ValueError`` (column ``j`` of ``X`` is the logit of
``classes_[j]``; skcal never guesses which label a column holds). Each was
run on every calibrator and fails only with that error; the entry of each
names the data it feeds and the functions here that re-run its intent on data
whose columns are the logits of the classes (each check's docstring says what
it asserts).

The functions here also add calibrator invariants (sample weights, label
encodings, memory layouts, pickling, ...).

Every check takes ``(name, estimator)`` like scikit-learn's checks and raises
``AssertionError`` on failure. :func:`check_calibrator` runs them all and
:func:`parametrize_with_calibrator_checks` makes a pytest decorator.
"""

import pickle
import warnings
from functools import partial

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from ..datasets import make_logits

__all__ = [
    "SKLEARN_CHECKS_NOT_APPLICABLE",
    "calibrator_checks",
    "check_calibrator",
    "parametrize_with_calibrator_checks",
]

_WRONG_SHAPE = (
    "feeds X whose column count is unrelated to the number of classes in y ({}); "
    "a calibrator must reject it (intent re-run on logits by {})"
)

#: scikit-learn generic checks that do not apply to calibrators, with the reason
#: and the skcal check that re-runs their intent on logit-shaped data.
SKLEARN_CHECKS_NOT_APPLICABLE = {
    check: _WRONG_SHAPE.format(data, ours) for check, data, ours in [
        ("check_estimators_overwrite_params", "3 labels, 2 columns",
         "check_params_not_overwritten"),
        ("check_estimators_fit_returns_self", "3 labels, 2 columns",
         "check_fit_returns_self"),
        ("check_readonly_memmap_input", "3 labels, 2 columns", "check_readonly_memmap"),
        ("check_estimators_nan_inf", "2 labels, 3 columns", "check_rejects_nan_inf"),
        ("check_classifiers_classes", "3 text labels, 2 columns", "check_label_encodings"),
        ("check_classifiers_train", "3 labels, 2 columns; also a training accuracy "
         "that a calibrator's argmax need not reach",
         "check_predict_consistency, check_wrong_column_count"),
        ("check_estimators_dtypes", "integer labels in 1..2 or 0..2 for 5 columns, "
         "drawn from the data: labels without 0 are ambiguous for a calibrator and "
         "refused", "check_dtypes"),
    ]
}


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _fit(estimator, X, y, **fit_params):
    """A clone of ``estimator`` fitted on ``(X, y)``, its warnings silenced."""
    return _quiet(clone(estimator).fit, X, y, **fit_params)


def check_fit_returns_self(name, estimator):
    """``fit`` returns the estimator itself and sets ``classes_``/``n_features_in_``/``n_iter_`` if any."""
    X, y = make_logits()
    est = clone(estimator)
    assert _quiet(est.fit, X, y) is est, f"{name}.fit does not return self"
    assert np.array_equal(est.classes_, [0, 1, 2])
    assert est.n_features_in_ == 3
    if hasattr(est, "n_iter_"):
        assert np.all(np.asarray(est.n_iter_) >= 1)


def check_unfitted_raises(name, estimator):
    """Every predict-time method raises ``NotFittedError`` before ``fit``."""
    X, y = make_logits(20)
    est = clone(estimator)
    methods = ("predict_proba", "predict", "predict_log_proba", "transform")
    for method, args in [*((m, (X,)) for m in methods), ("score", (X, y))]:
        try:
            getattr(est, method)(*args)
        except NotFittedError:
            continue
        raise AssertionError(f"{name}.{method} did not raise NotFittedError before fit")


def check_pickle_roundtrip(name, estimator):
    """A pickled and restored fitted estimator predicts identically."""
    X, y = make_logits()
    est = _fit(estimator, X, y)
    est2 = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(est.predict_proba(X), est2.predict_proba(X))
    np.testing.assert_array_equal(est.classes_, est2.classes_)


def check_clone(name, estimator):
    """``clone`` of a fitted estimator has equal parameters and is not fitted."""
    X, y = make_logits()
    est = _fit(estimator, X, y)
    c = clone(est)
    assert c.get_params() == clone(estimator).get_params() or all(
        repr(v) == repr(c.get_params()[k]) for k, v in est.get_params().items()
    )
    assert not hasattr(c, "classes_"), "clone kept fitted attributes"


def _assert_raises_value_error(fn, *args, match=(), **kwargs):
    try:
        fn(*args, **kwargs)
    except ValueError as exc:
        msg = str(exc).lower()
        if match and not any(m.lower() in msg for m in match):
            raise AssertionError(f"error message {exc!r} names none of {match}") from exc
        return
    raise AssertionError(f"{getattr(fn, '__name__', fn)} accepted invalid input")


def check_rejects_nan_inf(name, estimator):
    """NaN or infinity in ``X`` raises a ValueError naming it, in fit and predict."""
    X, y = make_logits(60)
    est = _fit(estimator, X, y)
    for bad, word in ((np.nan, "nan"), (np.inf, "inf"), (-np.inf, "inf")):
        Xb = X.copy()
        Xb[5, 1] = bad
        _assert_raises_value_error(clone(estimator).fit, Xb, y, match=(word,))
        _assert_raises_value_error(est.predict_proba, Xb, match=(word,))


def check_bad_input_errors(name, estimator):
    """Clear ValueErrors: single class, empty, wrong ndim, mismatched lengths, bad weights."""
    X, y = make_logits(60)
    est = clone(estimator)
    _assert_raises_value_error(est.fit, X, np.zeros(60, int), match=("one class",))
    _assert_raises_value_error(est.fit, X[:0], y[:0], match=("empty", "0 sample"))
    _assert_raises_value_error(est.fit, X[:, :, None], y, match=("3-d", "dim"))
    _assert_raises_value_error(est.fit, X, y[:-1], match=("different numbers", "inconsistent"))
    _assert_raises_value_error(est.fit, X, y, sample_weight=-np.ones(60), match=("negative",))
    _assert_raises_value_error(est.fit, X, y, sample_weight=np.ones(5), match=("shape",))
    _assert_raises_value_error(
        est.fit, X, np.where(np.arange(60) == 0, 9, y), match=("classes", "columns")
    )
    _assert_raises_value_error(est.fit, X, y + 0.5, match=("unknown", "continuous"))
    fitted = _fit(estimator, X, y)
    _assert_raises_value_error(fitted.score, X, np.full(60, 9), match=("not among",))
    P = np.full((60, 3), 0.5)
    probs = clone(estimator).set_params(input_type="probabilities")
    _assert_raises_value_error(probs.fit, P, y, match=("sum",))
    _assert_raises_value_error(probs.fit, P * 3, y, match=("[0, 1]",))


def check_wrong_column_count(name, estimator):
    """A column count that does not match ``classes_`` raises at predict time."""
    X, y = make_logits(60)
    est = _fit(estimator, X, y)
    assert est.n_features_in_ == 3
    for method in ("predict_proba", "predict", "transform"):
        _assert_raises_value_error(getattr(est, method), X[:, :2], match=("features",))
        _assert_raises_value_error(
            getattr(est, method), np.hstack([X, X[:, :1]]), match=("features",)
        )
    _assert_raises_value_error(est.predict_proba, X[:, 0], match=("features",))


def check_dtypes(name, estimator):
    """float16/float32/float64 give finite rows summing to 1; float32 fits like float64."""
    X, y = make_logits(400)
    ref = _fit(estimator, X, y).predict_proba(X)
    assert ref.dtype == np.float64
    for dtype, atol in ((np.float32, 2e-4), (np.float16, 5e-2)):
        Xd = X.astype(dtype)
        est = _fit(estimator, Xd, y)
        P = est.predict_proba(Xd)
        assert P.dtype == np.float32, f"{name}: {dtype} input gave {P.dtype} output"
        assert np.isfinite(P).all()
        np.testing.assert_allclose(P.sum(axis=1), 1, atol=1e-5)
        if dtype == np.float16 and getattr(estimator, "_piecewise_constant", False):
            # A step map (binning) is discontinuous: float16 rounding ties a few
            # scores, which may move one row across a bin edge. All but 1% of
            # the rows must agree to atol; the others by less than one bin step.
            err = np.abs(P - ref).max(axis=1)
            assert np.quantile(err, 0.99) <= atol, f"{name} {dtype} fit differs"
            assert err.max() <= 0.25, f"{name} {dtype} fit differs by {err.max():.3g}"
            continue
        np.testing.assert_allclose(P, ref, atol=atol, err_msg=f"{name} {dtype} fit differs")


def check_large_logits(name, estimator):
    """Logits of magnitude 1e4 give finite, valid probabilities in every dtype."""
    X, y = make_logits(200, scale=1.0)
    X = X * 1e4 / np.abs(X).max()
    for dtype in (np.float16, np.float32, np.float64):
        est = _fit(estimator, X.astype(dtype), y)
        P = est.predict_proba(X.astype(dtype))
        assert np.isfinite(P).all(), f"{name}: non-finite output for |logits|=1e4 {dtype}"
        np.testing.assert_allclose(P.sum(axis=1), 1, atol=1e-5)
        assert (P >= 0).all() and (P <= 1).all()


def check_readonly_memmap(name, estimator):
    """Fitting on read-only memory maps works and equals fitting on arrays."""
    X, y = make_logits()
    sw = np.linspace(0.5, 2.0, len(y))
    ref = _fit(estimator, X, y, sample_weight=sw).predict_proba(X)
    # as scikit-learn's check_readonly_memmap_input (the files are removed at exit)
    from sklearn.utils._testing import create_memmap_backed_data

    Xm, ym, swm = create_memmap_backed_data([X, y, sw])
    assert not (Xm.flags.writeable or ym.flags.writeable or swm.flags.writeable)
    est = _fit(estimator, Xm, ym, sample_weight=swm)
    np.testing.assert_allclose(est.predict_proba(Xm), ref, rtol=1e-10, atol=1e-12)


def check_params_not_overwritten(name, estimator):
    """``fit`` changes no constructor parameter and adds only ``_``-suffixed attributes."""
    X, y = make_logits()
    est = clone(estimator)
    before = {k: repr(v) for k, v in est.get_params().items()}
    attrs_before = set(vars(est))
    _quiet(est.fit, X, y)
    after = {k: repr(v) for k, v in est.get_params().items()}
    assert before == after, f"{name}.fit changed parameters: {before} -> {after}"
    new = set(vars(est)) - attrs_before
    public = [a for a in new if not a.startswith("_") and not a.endswith("_")]
    assert not public, f"{name}.fit set public attributes without a trailing _: {public}"


def check_fit_idempotent(name, estimator):
    """Fitting twice gives the same predictions."""
    X, y = make_logits()
    est = clone(estimator)
    P1 = _quiet(est.fit, X, y).predict_proba(X)
    P2 = _quiet(est.fit, X, y).predict_proba(X)
    np.testing.assert_allclose(P1, P2, rtol=1e-12, atol=1e-14)


def check_sample_weight_equivalence(name, estimator):
    """Integer weights fit like repeated rows; rescaled weights fit alike;
    unit weights like no weights (the one weight policy, :ref:`sample-weights`)."""
    X, y = make_logits(150)
    rng = np.random.default_rng(1)
    w = rng.integers(0, 4, size=len(y))
    w[:3] = 1  # every class keeps weight
    Xr, yr = np.repeat(X, w, axis=0), np.repeat(y, w)
    P_w = _fit(estimator, X, y, sample_weight=w).predict_proba(X)
    P_r = _fit(estimator, Xr, yr).predict_proba(X)
    np.testing.assert_allclose(
        P_w, P_r, atol=1e-6, err_msg=f"{name}: weights != repetition"
    )
    # only the ratios of the weights matter, priors included (they count rows)
    for scale in (1e-3, 1e3):
        P_s = _fit(estimator, X, y, sample_weight=scale * w).predict_proba(X)
        np.testing.assert_allclose(
            P_s, P_w, atol=1e-8, err_msg=f"{name}: weights x {scale} change the fit"
        )
    P_1 = _fit(estimator, X, y, sample_weight=np.ones(len(y))).predict_proba(X)
    P_n = _fit(estimator, X, y).predict_proba(X)
    np.testing.assert_allclose(P_1, P_n, atol=1e-10)
    P_l = _fit(estimator, X, y, sample_weight=list(map(float, w))).predict_proba(X)
    np.testing.assert_allclose(P_l, P_w, atol=1e-12)


def check_object_dtype(name, estimator):
    """Object-dtype arrays and nested lists of numbers fit like float64 arrays."""
    X, y = make_logits(120)
    ref = _fit(estimator, X, y).predict_proba(X)
    P_obj = _fit(estimator, X.astype(object), y).predict_proba(X.astype(object))
    P_list = _fit(estimator, X.tolist(), y.tolist()).predict_proba(X.tolist())
    np.testing.assert_allclose(P_obj, ref, atol=1e-12)
    np.testing.assert_allclose(P_list, ref, atol=1e-12)


def check_memory_layouts(name, estimator):
    """C- and Fortran-ordered and non-contiguous inputs give the same fit."""
    X, y = make_logits(120)
    ref = _fit(estimator, X, y).predict_proba(X)
    XF = np.asfortranarray(X)
    Xs = np.repeat(X, 2, axis=1)[:, ::2]  # non-contiguous view of the same values
    for Xv in (XF, Xs):
        P = _fit(estimator, Xv, y).predict_proba(Xv)
        np.testing.assert_allclose(P, ref, atol=1e-12)


def check_label_encodings(name, estimator):
    """Int, string, bool and permuted labels give the same fit (output column j is classes_[j])."""
    X, y = make_logits(200)
    ref = _fit(estimator, X, y).predict_proba(X)
    names = np.array(["ant", "bee", "cat"])
    est = _fit(estimator, X, names[y])
    np.testing.assert_array_equal(est.classes_, names)
    np.testing.assert_allclose(est.predict_proba(X), ref, atol=1e-10)
    assert set(est.predict(X)) <= set(names)
    # explicit classes in a different order name the input columns; classes_
    # stays sorted and the output is in its order (scikit-learn's scorers rely on it)
    order = np.array([2, 0, 1])
    est = _quiet(clone(estimator).set_params(classes=names[order]).fit, X[:, order], names[y])
    np.testing.assert_array_equal(est.classes_, names)
    np.testing.assert_allclose(est.predict_proba(X[:, order]), ref, atol=1e-8)
    # binary bool labels
    Xb, yb = make_logits(200, 2)
    refb = _fit(estimator, Xb, yb).predict_proba(Xb)
    estb = _fit(estimator, Xb, yb.astype(bool))
    np.testing.assert_array_equal(estb.classes_, [False, True])
    np.testing.assert_allclose(estb.predict_proba(Xb), refb, atol=1e-10)


def check_absent_class(name, estimator):
    """A class absent from the calibration set warns, keeps K columns and stays finite."""
    X, y = make_logits(200, 4)
    keep = y != 3
    est = clone(estimator)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        est.fit(X[keep], y[keep])
    assert any("never occur" in str(r.message) for r in rec), f"{name}: no warning"
    np.testing.assert_array_equal(est.classes_, [0, 1, 2, 3])
    P = est.predict_proba(X)
    assert P.shape == (200, 4) and np.isfinite(P).all()
    np.testing.assert_allclose(P.sum(axis=1), 1, atol=1e-8)


def check_predict_consistency(name, estimator):
    """Rows sum to 1; transform == log(predict_proba); predict == classes_[argmax]."""
    X, y = make_logits(200)
    est = _fit(estimator, X, y)
    P = est.predict_proba(X)
    assert P.shape == (200, 3)
    assert (P >= 0).all() and (P <= 1).all()
    np.testing.assert_allclose(P.sum(axis=1), 1, atol=1e-10)
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(est.transform(X), np.log(P), atol=1e-10, rtol=1e-10)
    np.testing.assert_array_equal(est.predict(X), est.classes_[np.argmax(P, axis=1)])


def check_score_is_log_likelihood(name, estimator):
    """``score`` is the weighted mean log-probability of the true class."""
    X, y = make_logits(200)
    est = _fit(estimator, X, y)
    P = est.predict_proba(X)
    with np.errstate(divide="ignore"):
        expected = np.mean(np.log(P[np.arange(200), y]))
        sw = np.arange(200) % 3 + 1.0
        expected_w = np.sum(sw * np.log(P[np.arange(200), y])) / sw.sum()
    np.testing.assert_allclose(est.score(X, y), expected, rtol=1e-10)
    np.testing.assert_allclose(est.score(X, y, sample_weight=sw), expected_w, rtol=1e-10)


def check_sample_order(name, estimator):
    """Permuting rows permutes predictions; predicting a subset equals the subset."""
    X, y = make_logits(150)
    est = _fit(estimator, X, y)
    perm = np.random.default_rng(3).permutation(150)
    P = est.predict_proba(X)
    np.testing.assert_allclose(est.predict_proba(X[perm]), P[perm], atol=1e-14)
    np.testing.assert_allclose(est.predict_proba(X[:7]), P[:7], atol=1e-14)
    P2 = _fit(estimator, X[perm], y[perm]).predict_proba(X)
    np.testing.assert_allclose(P2, P, atol=1e-7)


def check_binary_inputs(name, estimator):
    """A binary score vector, an (n, 1) column and (n, 2) logits [0, s] fit alike."""
    X, y = make_logits(200, 2)
    s = X[:, 1] - X[:, 0]
    Z2 = np.column_stack([np.zeros_like(s), s])
    P2 = _fit(estimator, Z2, y).predict_proba(Z2)
    for Xv in (s, s[:, None]):
        est = _fit(estimator, Xv, y)
        P = est.predict_proba(Xv)
        assert P.shape == (200, 2)
        np.testing.assert_allclose(P, P2, atol=1e-10)
        assert est.n_features_in_ == 1


def check_pipeline(name, estimator):
    """Works inside a Pipeline, ``cross_val_score`` and ``GridSearchCV``."""
    X, y = make_logits(300)
    pipe = make_pipeline(FunctionTransformer(), clone(estimator))
    P = _quiet(pipe.fit, X, y).predict_proba(X)
    np.testing.assert_allclose(P, _fit(estimator, X, y).predict_proba(X), atol=1e-12)
    scores = _quiet(cross_val_score, clone(estimator), X, y, cv=3)
    # mean log-likelihood: <= 0, never NaN (-inf is possible for a calibrator that
    # gives a true class probability 0 on a held-out fold, e.g. unclipped isotonic)
    assert scores.shape == (3,) and np.all(scores <= 0) and not np.isnan(scores).any()
    gs = GridSearchCV(clone(estimator), {"input_type": ["logits"]}, cv=3)
    _quiet(gs.fit, X, y)
    np.testing.assert_allclose(gs.best_score_, scores.mean(), rtol=1e-10)


def check_feature_names_out(name, estimator):
    """``get_feature_names_out`` names one column per class; ``set_output`` works."""
    X, y = make_logits(60)
    est = _fit(estimator, X, y)
    names = est.get_feature_names_out()
    assert len(names) == est.transform(X).shape[1] == 3
    assert names[0].endswith("_0")
    out = est.set_output(transform="default").transform(X)
    assert isinstance(out, np.ndarray)


def check_y_2d_column_warns(name, estimator):
    """A column-vector ``y`` of shape (n, 1) warns and fits like a 1-D ``y``."""
    from sklearn.exceptions import DataConversionWarning

    X, y = make_logits(90)
    est = clone(estimator)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        est.fit(X, y[:, None])
    assert any(issubclass(r.category, DataConversionWarning) for r in rec)
    ref = _fit(estimator, X, y).predict_proba(X)
    np.testing.assert_allclose(est.predict_proba(X), ref, atol=1e-12)


_CHECKS = [
    check_fit_returns_self,
    check_unfitted_raises,
    check_pickle_roundtrip,
    check_clone,
    check_rejects_nan_inf,
    check_bad_input_errors,
    check_wrong_column_count,
    check_dtypes,
    check_large_logits,
    check_readonly_memmap,
    check_params_not_overwritten,
    check_fit_idempotent,
    check_sample_weight_equivalence,
    check_object_dtype,
    check_memory_layouts,
    check_label_encodings,
    check_absent_class,
    check_predict_consistency,
    check_score_is_log_likelihood,
    check_sample_order,
    check_binary_inputs,
    check_pipeline,
    check_feature_names_out,
    check_y_2d_column_warns,
]


def calibrator_checks(estimator):
    """Yield ``(estimator, check)`` pairs; ``check(name, estimator)`` runs one check.

    Parameters
    ----------
    estimator : BaseCalibrator
        An unfitted skcal calibrator.

    Yields
    ------
    estimator : BaseCalibrator
    check : callable
    """
    for check in _CHECKS:
        yield estimator, check


def check_calibrator(estimator):
    """Run every skcal check on ``estimator``.

    Parameters
    ----------
    estimator : BaseCalibrator
        An unfitted calibrator.

    Raises
    ------
    AssertionError
        At the first failing check.
    """
    name = type(estimator).__name__
    for est, check in calibrator_checks(estimator):
        check(name, est)


def parametrize_with_calibrator_checks(estimators):
    """pytest decorator running every skcal check on every estimator.

    Parameters
    ----------
    estimators : list of BaseCalibrator
        Unfitted calibrators.

    Returns
    -------
    decorator
        ``pytest.mark.parametrize("estimator, check", ...)`` with readable ids.
    """
    import pytest

    params = [
        pytest.param(est, partial(check, type(est).__name__),
                     id=f"{type(est).__name__}-{check.__name__}")
        for est in estimators
        for _, check in calibrator_checks(est)
    ]
    return pytest.mark.parametrize("estimator, check", params)
