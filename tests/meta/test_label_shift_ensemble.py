"""EM label-shift adaptation and the calibrate-then-ensemble helper."""

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import softmax

from skcal import (
    BiasCorrectedTemperatureScaler,
    CalibratedEnsemble,
    TemperatureScaler,
    adapt_to_label_shift,
    calibrate_ensemble,
)

from conftest import load_shared


def ref_priors(P, s):
    """Maximum-likelihood target priors by SLSQP on the simplex (independent of EM)."""
    k = P.shape[1]
    R = P / s

    def f(pi):
        return -np.mean(np.log(R @ pi))

    res = minimize(f, np.full(k, 1.0 / k), method="SLSQP", bounds=[(0, 1)] * k,
                   constraints={"type": "eq", "fun": lambda p: p.sum() - 1},
                   options={"ftol": 1e-15, "maxiter": 2000})
    return res.x


def test_em_is_the_maximum_likelihood_priors():
    rng = np.random.default_rng(0)
    P = softmax(rng.normal(size=(2000, 4)) * 2, axis=1)
    s = np.array([0.1, 0.2, 0.3, 0.4])
    Q, pi = adapt_to_label_shift(P, s, tol=1e-12, max_iter=100000)
    np.testing.assert_allclose(pi, ref_priors(P, s), atol=1e-5)
    np.testing.assert_allclose(Q.mean(0), pi, atol=1e-10)
    np.testing.assert_allclose(Q, (P * pi / s) / (P * pi / s).sum(1, keepdims=True), atol=1e-12)


def test_em_rejects_bad_input():
    P = np.full((3, 2), 0.5)
    with pytest.raises(ValueError, match="source_priors"):
        adapt_to_label_shift(P, [0.5, 0.6])
    with pytest.raises(ValueError, match="source_priors has 3"):
        adapt_to_label_shift(P, [0.2, 0.3, 0.5])
    with pytest.raises(ValueError, match="sum to 1"):
        adapt_to_label_shift(np.full((3, 2), 0.7), [0.5, 0.5])


#: max |estimated - true| target prior, per set (stated tolerance of the EM test)
_PRIOR_TOL = 0.03


@pytest.mark.shared_data
@pytest.mark.parametrize(
    "name", ["cifar10_resnet20_chenyaofo", "pathmnist_resnet50", "cifar10_vgg16_kumar",
             "imdb_cv_labelerrors"],
)
def test_em_recovers_simulated_label_shift_on_real_sets(name):
    d = load_shared(name)
    Zv, yv, Zt, yt = d["logits_val"], d["y_val"], d["logits_test"], d["y_test"]
    k = Zv.shape[1]
    cal = BiasCorrectedTemperatureScaler().fit(Zv, yv)
    source = np.bincount(yv, minlength=k) / len(yv)
    rng = np.random.default_rng(0)
    for _ in range(3):
        # target priors far from the source: Dirichlet(1) draws, every class kept
        target = rng.dirichlet(np.ones(k)) * 0.8 + 0.2 / k
        by_class = [np.flatnonzero(yt == c) for c in range(k)]
        n_max = min(len(ix) / t for ix, t in zip(by_class, target))
        rows = np.concatenate([
            rng.choice(ix, size=int(n_max * t), replace=False) for ix, t in zip(by_class, target)
        ])
        true = np.bincount(yt[rows], minlength=k) / len(rows)
        P = cal.predict_proba(Zt[rows]).astype(np.float64)
        P /= P.sum(1, keepdims=True)
        _, pi = adapt_to_label_shift(P, source)
        err = np.abs(pi - true).max()
        naive = np.abs(P.mean(0) - true).max()
        assert err <= _PRIOR_TOL, (err, naive)


def test_calibrated_ensemble_averages_member_calibrators():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 400)
    members = [s * (np.eye(3)[y] + rng.normal(size=(400, 3))) for s in (2.0, 5.0, 9.0)]
    ens = calibrate_ensemble(members, y)
    ref = np.mean([TemperatureScaler().fit(m, y).predict_proba(m) for m in members], axis=0)
    np.testing.assert_allclose(ens.predict_proba(members), ref, atol=1e-12)
    np.testing.assert_allclose(ens.predict_proba(np.stack(members)), ref, atol=1e-12)
    assert ens.n_members_ == 3 and isinstance(ens, CalibratedEnsemble)
    np.testing.assert_array_equal(ens.predict(members), ref.argmax(1))
    np.testing.assert_allclose(ens.score(members, y), np.mean(np.log(ref[np.arange(400), y])))
    with pytest.raises(ValueError, match="members"):
        ens.predict_proba(members[:2])
    with pytest.raises(ValueError, match="different numbers of rows"):
        CalibratedEnsemble().fit([members[0], members[1][:10]], y)


def test_calibrated_ensemble_score_checks_labels_and_weights():
    # labels outside classes_ were scored against a neighbouring column
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, 300)
    members = [s * (np.eye(3)[y] + rng.normal(size=(300, 3))) for s in (2.0, 6.0)]
    ens = calibrate_ensemble(members, y)
    P = ens.predict_proba(members)
    w = rng.integers(0, 4, 300).astype(float)
    np.testing.assert_allclose(ens.score(members, y, sample_weight=w),
                               np.average(np.log(P[np.arange(300), y]), weights=w))
    with pytest.raises(ValueError, match=r"\b7\b"):
        ens.score(members, np.where(y == 2, 7, y))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        ens.score(members, y[:-1])
    with pytest.raises(ValueError, match="sample_weight"):
        ens.score(members, y, sample_weight=-w)


@pytest.mark.parametrize("priors, message", [([0.5, 0.5, 0.0], "entry 2 is 0.0"),
                                             ([0.6, 0.6, -0.2], "entry 2 is -0.2"),
                                             ([0.3, 0.3, 0.3], "sum to 1")])
def test_source_priors_errors_name_the_problem(priors, message):
    from skcal import adapt_to_label_shift

    P = np.full((4, 3), 1 / 3)
    with pytest.raises(ValueError, match=message):
        adapt_to_label_shift(P, priors)


@pytest.mark.parametrize("kw", [{"max_iter": 0}, {"max_iter": 2.5}, {"tol": -1.0}])
def test_adapt_to_label_shift_refuses_bad_solver_parameters(kw):
    P = np.array([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]])
    name = next(iter(kw))
    with pytest.raises(ValueError, match=f"'{name}' parameter of adapt_to_label_shift"):
        adapt_to_label_shift(P, [0.2, 0.3, 0.5], **kw)


def test_calibrate_ensemble_members_of_different_widths_are_named():
    from skcal import calibrate_ensemble

    rng = np.random.default_rng(0)
    y = np.arange(120) % 3
    Z = rng.normal(size=(120, 3))
    with pytest.raises(ValueError, match=r"Member 1 of X has 2 column\(s\) but member 0 has 3"):
        calibrate_ensemble([Z, Z[:, :2]], y)
    # binary members: one score column and two logit columns are the same problem
    yb = y % 2
    ens = calibrate_ensemble([Z[:, 0], np.column_stack([np.zeros(120), Z[:, 0]])], yb)
    P = ens.calibrators_[0].predict_proba(Z[:, 0])
    np.testing.assert_allclose(ens.predict_proba([Z[:, 0], np.column_stack(
        [np.zeros(120), Z[:, 0]])]), P, rtol=1e-9)
