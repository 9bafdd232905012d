"""skcal.torch.collect_logits and CalibratedModel."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from _helpers import temperature_reference  # noqa: E402
from torch.utils.data import DataLoader, IterableDataset, TensorDataset  # noqa: E402

import skcal  # noqa: E402
from skcal.torch import CalibratedModel, collect_logits  # noqa: E402


class _Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(6, 4)
        self.drop = torch.nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.lin(x)) * 3.0


@pytest.fixture
def data():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(300, 6, generator=g)
    y = (x[:, :4] + 0.8 * torch.randn(300, 4, generator=g)).argmax(dim=1)
    return x, y


def _net():
    torch.manual_seed(0)
    net = _Net()
    net.train()  # collect_logits must switch dropout off and restore the mode
    return net


def test_collect_logits_matches_direct_eval(data):
    x, y = data
    net = _net()
    logits, labels = collect_logits(net, DataLoader(TensorDataset(x, y), batch_size=64),
                                    progress=False)
    assert net.training  # mode restored
    net.eval()
    with torch.no_grad():
        ref = net(x)
    torch.testing.assert_close(logits, ref)
    assert labels.dtype == torch.int64 and torch.equal(labels, y)
    assert not logits.requires_grad and not logits.is_inference()


def test_collect_logits_progress_writes_nothing_to_a_log(data, capsys):
    # stderr is captured (not a terminal): main left a stale "0%" tqdm line there
    pytest.importorskip("tqdm")
    x, y = data
    logits, _ = collect_logits(_net(), DataLoader(TensorDataset(x, y), batch_size=64),
                               progress=True)
    assert logits.shape == (300, 4)
    assert capsys.readouterr().err == ""


def test_collect_logits_dtype_dict_batches_and_unsized(data):
    x, y = data

    class Stream(IterableDataset):
        def __iter__(self):
            for i in range(0, 300, 50):
                yield {"x": x[i:i + 50], "label": y[i:i + 50]}

    class DictNet(torch.nn.Module):
        def __init__(self, net):
            super().__init__()
            self.net = net

        def forward(self, x):
            return self.net(x)

    net = _net()
    logits, labels = collect_logits(DictNet(net), Stream(), dtype=torch.float16,
                                    progress=False)
    assert logits.dtype == torch.float16 and logits.shape == (300, 4)
    net.eval()
    with torch.no_grad():
        torch.testing.assert_close(logits, net(x).half())
    assert torch.equal(labels, y)


def test_collect_logits_errors(data):
    x, y = data
    net = _net()
    with pytest.raises(ValueError, match="must be \\(inputs, labels\\)"):
        collect_logits(net, [x[:5]], progress=False)
    with pytest.raises(ValueError, match="2-D"):
        collect_logits(lambda_net(), DataLoader(TensorDataset(x, y), batch_size=50),
                       progress=False)
    with pytest.raises(ValueError, match="no batches"):
        collect_logits(net, [], progress=False)


def lambda_net():
    class Flat(torch.nn.Module):
        def forward(self, x):
            return x.sum(dim=1)

    return Flat()


def test_calibrated_model_fits_exact_temperature(data):
    x, y = data
    net = _net()
    loader = DataLoader(TensorDataset(x, y), batch_size=64)
    cm = CalibratedModel(net, skcal.TemperatureScaler()).fit(loader, progress=False)
    net.eval()
    with torch.no_grad():
        z = net(x)
    T = temperature_reference(z.double().numpy(), y.numpy())
    assert abs(cm.calibrator_.temperature_ - T) < 1e-6
    cm.eval()
    with torch.no_grad():
        out = cm(x)
    torch.testing.assert_close(out, torch.log_softmax(z / T, dim=1), atol=1e-5, rtol=0)
    cmp = CalibratedModel(net, skcal.TemperatureScaler(), output="proba").fit(
        loader, progress=False)
    with torch.no_grad():
        torch.testing.assert_close(cmp(x).sum(dim=1), torch.ones(300))


@pytest.mark.parametrize("name", ["VectorScaler", "PlattScaler", "IsotonicScaler"])
def test_calibrated_model_any_calibrator(data, name):
    x, y = data
    net = _net()
    cm = CalibratedModel(net, getattr(skcal, name)()).fit(
        DataLoader(TensorDataset(x, y), batch_size=100), progress=False)
    cm.eval()
    with torch.no_grad():
        z = net(x)
        out = cm(x)
    ref = cm.calibrator_.predict_proba(z.numpy())
    np.testing.assert_allclose(out.exp().numpy(), ref, atol=1e-6)


def test_calibrated_model_without_closed_form(data):
    from skcal.base import BaseCalibrator

    class NoClosedForm(skcal.TemperatureScaler):
        _torch_spec = BaseCalibrator._torch_spec

    x, y = data
    net = _net()
    cm = CalibratedModel(net, NoClosedForm()).fit(
        DataLoader(TensorDataset(x, y), batch_size=100), progress=False)
    assert cm.calibration is None
    cm.eval()
    with torch.no_grad():
        out = cm(x)
        ref = torch.log_softmax(net(x) / cm.calibrator_.temperature_, dim=1)
    torch.testing.assert_close(out, ref, atol=1e-5, rtol=0)


def test_calibrated_model_not_fitted_and_bad_output(data):
    with pytest.raises(RuntimeError, match="not fitted"):
        CalibratedModel(_net())(data[0])
    with pytest.raises(ValueError, match="output"):
        CalibratedModel(_net(), output="probs")


def test_calibrated_model_exports(data):
    x, y = data
    net = _net()
    cm = CalibratedModel(net).fit(DataLoader(TensorDataset(x, y), batch_size=100),
                                  progress=False).eval()
    ep = torch.export.export(cm, (x[:8],))
    with torch.no_grad():
        torch.testing.assert_close(ep.module()(x[:8]), cm(x[:8]))


def test_collect_logits_loader_yielding_more_rows_than_the_dataset(data):
    # a sampler with replacement drawing more rows than len(dataset): the rows
    # after the first batch that overflowed came back with preallocated rows
    # that were never written (14 rows for 12, two of them garbage)
    from torch.utils.data import RandomSampler

    x, y = data
    ds = TensorDataset(x[:10], y[:10])
    sampler = RandomSampler(ds, replacement=True, num_samples=12,
                            generator=torch.Generator().manual_seed(1))
    idx = torch.tensor(list(RandomSampler(ds, replacement=True, num_samples=12,
                                          generator=torch.Generator().manual_seed(1))))
    net = _net()
    logits, labels = collect_logits(net, DataLoader(ds, batch_size=4, sampler=sampler),
                                    progress=False)
    net.eval()
    with torch.no_grad():
        ref = net(x[idx])
    assert logits.shape == (12, 4)
    torch.testing.assert_close(logits, ref)
    assert torch.equal(labels, y[idx])
