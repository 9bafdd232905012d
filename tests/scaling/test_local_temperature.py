"""LocalTemperatureScaler: instance-dependent temperature T(x) (Tomani et al. 2022)."""

import pickle
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from scipy.special import log_softmax

from _helpers import nll, temperature_reference
from skcal import LocalTemperatureScaler, TemperatureScaler

from conftest import SHARED_SETS, load_shared

torch = pytest.importorskip("torch")


def _varying_temperature_data(n, seed, *, extra=False):
    """Logits whose true temperature depends on the sample.

    Without ``extra``: rows with a large top-2 gap are over-confident by 4,
    the others by 1 (visible from the logits). With ``extra``: a binary domain
    feature ``d`` (not visible in the logits) sets the temperature to 0.7 or 3.
    Labels are drawn from ``softmax(z / T_true)``.
    """
    rng = np.random.default_rng(seed)
    K = 5
    Z = rng.normal(size=(n, K)) * rng.uniform(0.5, 6, size=(n, 1))
    srt = np.sort(Z, axis=1)
    d = rng.integers(0, 2, size=n).astype(float)
    if extra:
        T = np.where(d == 1, 3.0, 0.7)
    else:
        T = np.where(srt[:, -1] - srt[:, -2] > 2.0, 4.0, 1.0)
    P = np.exp(log_softmax(Z / T[:, None], axis=1))
    y = (P.cumsum(axis=1) > rng.uniform(size=(n, 1))).argmax(axis=1)
    return Z, y, T, d


def test_local_temperature_beats_global_when_temperature_varies():
    Z, y, T_true, _ = _varying_temperature_data(6000, 0)
    Zt, yt, Tt, _ = _varying_temperature_data(6000, 1)
    # independent reference: the NLL-optimal global temperature by scipy
    T_glob = temperature_reference(Z, y)
    lts = LocalTemperatureScaler().fit(Z, y)
    assert lts.local_
    nll_glob, nll_oracle = nll(Zt, yt, T_glob), nll(Zt, yt, Tt)
    nll_lts = -lts.score(Zt, yt)
    # the local model recovers most of the gap between global TS and the oracle
    assert nll_oracle < nll_glob
    assert nll_lts < nll_glob - 0.6 * (nll_glob - nll_oracle)
    T = lts.temperatures(Zt)
    assert T[Tt == 4].mean() > 2.0 and T[Tt == 1].mean() < 1.6
    np.testing.assert_array_equal(lts.predict(Zt), Zt.argmax(axis=1))


def test_local_temperature_shrinks_to_global_scipy_reference():
    # a single true temperature: nothing to gain locally
    rng = np.random.default_rng(3)
    Z = 3 * rng.normal(size=(3000, 4))
    P = np.exp(log_softmax(Z / 2.0, axis=1))
    y = (P.cumsum(axis=1) > rng.uniform(size=(3000, 1))).argmax(axis=1)
    T_ref = temperature_reference(Z, y)
    lts = LocalTemperatureScaler(shrink_threshold=1e9).fit(Z, y)
    assert not lts.local_
    np.testing.assert_allclose(lts.temperature_, T_ref, rtol=1e-6)
    np.testing.assert_allclose(lts.temperatures(Z), T_ref, rtol=1e-6)
    np.testing.assert_allclose(
        lts.predict_proba(Z), np.exp(log_softmax(Z / T_ref, axis=1)), rtol=1e-5, atol=1e-9
    )


def test_local_temperature_initialised_at_global_temperature():
    from skcal.scaling._local_temperature import _init_params, _network_temperature

    # the initial network gives T(x) == T_min + t0 whatever the features
    phi = np.random.default_rng(0).normal(size=(500, 7)) * 10
    params = _init_params([7, 16, 8, 1], 2.5 - 0.05, seed=3)
    T = _network_temperature(phi, params[0::2], params[1::2], 0.05)
    np.testing.assert_allclose(T, 2.5, rtol=1e-13)
    # and a network that does not beat the global T on validation is not kept:
    # with a zero learning rate it never moves, its gain is exactly 0
    Z, y, _, _ = _varying_temperature_data(2000, 2)
    lts = LocalTemperatureScaler(learning_rate=1e-300, shrink_threshold=0).fit(Z, y)
    assert not lts.local_ and lts.best_iter_ == 0
    np.testing.assert_allclose(lts.validation_nll_[0], lts.validation_nll_[1], rtol=1e-12)


def test_local_temperature_deterministic_and_global_torch_state_untouched():
    Z, y, _, _ = _varying_temperature_data(1500, 4)
    state = torch.get_rng_state().clone()
    threads = torch.get_num_threads()
    default = torch.get_default_dtype()
    a = LocalTemperatureScaler(random_state=7, max_iter=60).fit(Z, y)
    torch.manual_seed(123)  # the global seed must not matter
    b = LocalTemperatureScaler(random_state=7, max_iter=60).fit(Z, y)
    c = LocalTemperatureScaler(random_state=8, max_iter=60).fit(Z, y)
    assert torch.get_num_threads() == threads and torch.get_default_dtype() == default
    torch.manual_seed(0)
    assert a.local_
    np.testing.assert_array_equal(a.predict_proba(Z), b.predict_proba(Z))
    for wa, wc in zip(a.coefs_, c.coefs_):
        assert not np.array_equal(wa, wc) or wa.shape != wc.shape
    torch.set_rng_state(state)


def test_local_temperature_pickles_and_predicts_without_torch(tmp_path):
    Z, y, _, _ = _varying_temperature_data(1500, 5)
    lts = LocalTemperatureScaler(max_iter=60).fit(Z, y)
    assert lts.local_
    assert all(isinstance(a, np.ndarray) for a in lts.coefs_ + lts.intercepts_)
    path = tmp_path / "lts.pkl"
    path.write_bytes(pickle.dumps(lts))
    np.save(tmp_path / "Z.npy", Z)
    np.save(tmp_path / "P.npy", lts.predict_proba(Z))
    code = textwrap.dedent(f"""
        import sys, pickle, numpy as np

        class _NoTorch:  # any import of torch now fails
            def find_spec(self, name, path=None, target=None):
                if name == "torch" or name.startswith("torch."):
                    raise ImportError("torch is blocked in this test")

        sys.meta_path.insert(0, _NoTorch())
        lts = pickle.loads(open({str(path)!r}, "rb").read())
        P = lts.predict_proba(np.load({str(tmp_path / "Z.npy")!r}))
        np.testing.assert_array_equal(P, np.load({str(tmp_path / "P.npy")!r}))
        assert "torch" not in sys.modules
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=str(__import__("pathlib").Path(__file__).parents[2]))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_local_temperature_torch_input_follows_device_and_dtype():
    Z, y, _, _ = _varying_temperature_data(600, 6)
    ref = LocalTemperatureScaler(max_iter=20).fit(Z, y)
    Zt = torch.from_numpy(Z)
    est = LocalTemperatureScaler(max_iter=20).fit(Zt, torch.from_numpy(y))
    P = est.predict_proba(Zt.float())
    assert isinstance(P, torch.Tensor) and P.dtype == torch.float32
    np.testing.assert_allclose(P.numpy(), ref.predict_proba(Z), atol=1e-6)


def test_local_temperature_extra_features_pipeline_and_grid_search():
    from sklearn.compose import ColumnTransformer
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline

    Z, y, T_true, d = _varying_temperature_data(5000, 7, extra=True)
    Zt, yt, Tt, dt = _varying_temperature_data(5000, 8, extra=True)
    X, Xt = np.column_stack([Z, d]), np.column_stack([Zt, dt])
    with_f = LocalTemperatureScaler(n_extra_features=1).fit(X, y)
    without = LocalTemperatureScaler().fit(Z, y)
    assert with_f.n_features_in_ == 6 and with_f.classes_.tolist() == [0, 1, 2, 3, 4]
    assert with_f.local_
    # the domain is invisible in the logits: only the extra feature finds it
    assert -with_f.score(Xt, yt) < -without.score(Zt, yt) - 0.02
    T = with_f.temperatures(Xt)
    assert T[dt == 1].mean() > 2.0 > 1.0 > T[dt == 0].mean()
    # inside a Pipeline (a ColumnTransformer passing both blocks) and GridSearchCV
    pipe = make_pipeline(
        ColumnTransformer([("logits", "passthrough", list(range(5))),
                           ("feat", "passthrough", [5])]),
        LocalTemperatureScaler(n_extra_features=1, max_iter=80),
    )
    gs = GridSearchCV(pipe, {"localtemperaturescaler__top_k": [1, 3]}, cv=2).fit(X, y)
    assert gs.best_params_["localtemperaturescaler__top_k"] in (1, 3)
    assert gs.predict_proba(Xt).shape == (5000, 5)
    with pytest.raises(ValueError, match="n_extra_features"):
        LocalTemperatureScaler(n_extra_features=5).fit(Z, y)
    with pytest.raises(ValueError, match="features"):
        with_f.predict_proba(Zt)
    Xbad = X.copy()
    Xbad[0, 5] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        LocalTemperatureScaler(n_extra_features=1).fit(Xbad, y)


def test_label_column_mismatch_says_the_extra_features_leave_fewer_logit_columns():
    # 4 columns with n_extra_features=2 are 2 logits: labels 0..3 do not fit,
    # and the message must not leave the user counting 4 columns against "2"
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 4)), np.arange(40) % 4
    with pytest.raises(ValueError) as info:
        LocalTemperatureScaler(n_extra_features=2).fit(X, y)
    msg = str(info.value)
    assert msg.startswith(
        "X has 4 columns; its last 2 are read as extra features "
        "(n_extra_features=2), leaving 2 logit columns. y has 4 distinct labels "
        "but there are 2 columns: labels [2, 3] are not column indices 0..1"
    ), msg
    # one score column and 2 features: a binary score (2 classes)
    with pytest.raises(ValueError) as info:
        LocalTemperatureScaler(n_extra_features=2).fit(X[:, :3], np.arange(40) % 3)
    assert str(info.value).startswith(
        "X has 3 columns; its last 2 are read as extra features "
        "(n_extra_features=2), leaving 1 logit column (a binary score, counted as "
        "2 columns). y has 3 distinct labels but there are 2 columns"
    ), str(info.value)
    # classes= of all 4 columns: the same note
    with pytest.raises(ValueError, match=r"^X has 4 columns; its last 2 .*classes has 4 "
                                         r"labels but there are 2 columns"):
        LocalTemperatureScaler(n_extra_features=2, classes=[0, 1, 2, 3]).fit(X, y)
    # without extra features the message is unchanged (no note)
    with pytest.raises(ValueError, match=r"^y has 4 distinct labels but there are 3"):
        LocalTemperatureScaler().fit(X[:, :3], y)


def test_local_temperature_no_features_is_an_error():
    Z, y, _, _ = _varying_temperature_data(100, 9)
    with pytest.raises(ValueError, match="top_k"):
        LocalTemperatureScaler(top_k=0).fit(Z, y)


def test_local_temperature_small_set_uses_global_temperature():
    Z, y, _, _ = _varying_temperature_data(40, 10)
    lts = LocalTemperatureScaler().fit(Z, y)
    ts = TemperatureScaler().fit(Z, y)
    assert not lts.local_
    np.testing.assert_allclose(lts.predict_proba(Z), ts.predict_proba(Z), rtol=1e-12)


@pytest.mark.shared_data
@pytest.mark.parametrize("name", SHARED_SETS)
def test_local_temperature_never_worse_than_global_on_real_sets(name):
    """Honesty target of issue 13: test NLL <= 1.005 x global TS on every real set."""
    d = load_shared(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ts = TemperatureScaler().fit(d["logits_val"], d["y_val"])
        lts = LocalTemperatureScaler(hidden_layer_sizes=(8,), max_iter=150).fit(
            d["logits_val"], d["y_val"]
        )
    nll_ts = -ts.score(d["logits_test"], d["y_test"])
    nll_lts = -lts.score(d["logits_test"], d["y_test"])
    assert nll_lts <= 1.005 * nll_ts, (name, nll_lts, nll_ts)


@pytest.mark.parametrize("device", [None, "cpu"])
def test_local_temperature_gradient_matches_torch_autograd(device):
    # the one hand-written objective (NumPy, or torch tensors) against torch
    # autograd of the loss written out here, at a non-trivial network
    from skcal._backend._dispatch import get_backend
    from skcal.scaling._local_temperature import _init_params, _objective

    rng = np.random.default_rng(13)
    n, K = 700, 6
    Z = rng.normal(size=(n, K)) * 3
    y = rng.integers(0, K, size=n)
    w = rng.random(n) + 0.5
    phi = rng.normal(size=(n, 4))
    val = rng.random(n) < 0.3
    params = _init_params([4, 5, 3, 1], 1.5, seed=0)
    params = [p + 0.3 * rng.normal(size=p.shape) for p in params]
    xp = get_backend(None, "numpy" if device is None else "torch")
    grad_fn, val_fn, to_np, ps = _objective(params, phi, Z, y, w, ~val, val, 0.05, 0.01,
                                            xp, device)
    got = [to_np(g) for g in grad_fn(ps)]

    def loss(tp, mask):
        h = torch.from_numpy(phi[mask])
        for i in range(0, len(tp), 2):
            h = h @ tp[i] + tp[i + 1]
            if i < len(tp) - 2:
                h = torch.tanh(h)
        T = 0.05 + torch.log1p(torch.exp(h[:, 0]))
        lp = torch.log_softmax(torch.from_numpy(Z[mask]) / T[:, None], dim=1)
        ww = torch.from_numpy(w[mask] / w[mask].sum())
        return -(ww * lp[torch.arange(int(mask.sum())), torch.from_numpy(y[mask])]).sum()

    tp = [torch.tensor(p, requires_grad=True) for p in params]
    total = loss(tp, ~val) + 0.01 * sum((p * p).sum() for p in tp[0::2])
    ref = torch.autograd.grad(total, tp)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r.numpy(), rtol=1e-10, atol=1e-13)
    with torch.no_grad():
        np.testing.assert_allclose(val_fn(ps), float(loss(tp, val)), rtol=1e-12)


def test_local_temperature_numpy_and_torch_training_agree():
    # the same objective and Adam on NumPy arrays and on torch tensors
    Z, y, _, _ = _varying_temperature_data(800, 11)
    a = LocalTemperatureScaler(hidden_layer_sizes=(6, 5), max_iter=25, tol=0,
                               n_iter_no_change=1000, weight_decay=0.01)
    b = LocalTemperatureScaler(**a.get_params())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a.fit(Z, y)
        b.fit(torch.from_numpy(Z), torch.from_numpy(y))
    assert a.n_iter_ == b.n_iter_ and len(a.coefs_) == 3
    for p, q in zip(a.coefs_ + a.intercepts_, b.coefs_ + b.intercepts_):
        np.testing.assert_allclose(p, q, rtol=1e-8, atol=1e-9)


def test_local_temperature_dataframe_logits_named_by_labels_and_extra_column():
    pd = pytest.importorskip("pandas")
    Z, y, _, d = _varying_temperature_data(600, 12, extra=True)
    lab = np.array(list("vwxyz"))[y]
    cols = {c: Z[:, i] for i, c in enumerate("vwxyz")}
    df = pd.DataFrame({**cols, "domain": d})
    ref = LocalTemperatureScaler(n_extra_features=1, max_iter=30).fit(df, lab)
    assert ref.classes_.tolist() == list("vwxyz") and ref.n_features_in_ == 6
    # logit columns in another order are matched to the labels by name;
    # classes_ is sorted and the output follows it (the extra column stays last)
    order = list("xvwzy")
    df2 = pd.DataFrame({**{c: cols[c] for c in order}, "domain": d})
    est = LocalTemperatureScaler(n_extra_features=1, max_iter=30).fit(df2, lab)
    assert est.classes_.tolist() == list("vwxyz")
    np.testing.assert_allclose(est.predict_proba(df2), ref.predict_proba(df), atol=1e-12)
    with pytest.raises(ValueError, match="feature names"):
        ref.predict_proba(df2)


def test_predict_with_extra_features_is_the_argmax_of_the_class_logits():
    # found by a new user: predict took the argmax over the extra feature
    # columns too (IndexError, or a wrong class where a feature is largest)
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 300)
    X = rng.normal(size=(300, 3))
    X[np.arange(300), y] += 2
    Xe = np.hstack([X, 10 * rng.normal(size=(300, 2))])
    est = LocalTemperatureScaler(n_extra_features=2, random_state=0).fit(Xe, y)
    pred = est.predict(Xe)
    np.testing.assert_array_equal(pred, X.argmax(axis=1))
    np.testing.assert_array_equal(pred, est.predict_proba(Xe).argmax(axis=1))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_predict_on_torch_tensors(dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, 300)
    X = rng.normal(size=(300, 3))
    X[np.arange(300), y] += 2
    est = LocalTemperatureScaler(random_state=0).fit(X, y)
    Xt = torch.from_numpy(X).to(getattr(torch, dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        pred = est.predict(Xt)
    assert isinstance(pred, torch.Tensor)
    expected = Xt.float().numpy().argmax(axis=1)
    np.testing.assert_array_equal(pred.numpy(), expected)


def test_local_temperature_integer_weights_are_repeated_rows_on_agnews():
    # the shrinkage rule (network kept or global temperature) counts the
    # validation rows by the weight policy: Kish's effective size made
    # ``local_`` differ between weights and repeated rows (False vs True here)
    from skcal.datasets import load_agnews_gpt2

    d = load_agnews_gpt2()
    X, y = d.logits_val[:600], d.y_val[:600]
    w = np.random.default_rng(1).integers(0, 3, 600)
    weighted = LocalTemperatureScaler(random_state=0).fit(X, y, sample_weight=w)
    repeated = LocalTemperatureScaler(random_state=0).fit(np.repeat(X, w, 0), np.repeat(y, w))
    scaled = LocalTemperatureScaler(random_state=0).fit(X, y, sample_weight=2.5 * w)
    assert weighted.local_ == repeated.local_ == scaled.local_
    P = weighted.predict_proba(d.logits_test)
    np.testing.assert_allclose(P, repeated.predict_proba(d.logits_test), rtol=0, atol=1e-10)
    np.testing.assert_allclose(P, scaled.predict_proba(d.logits_test), rtol=0, atol=1e-10)
