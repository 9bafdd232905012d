"""
==========================================================
Temperature scaling a PyTorch network, exactly
==========================================================

The usual PyTorch recipe for temperature scaling (Guo et al., "On Calibration
of Modern Neural Networks", ICML 2017, and its reference implementation
``ModelWithTemperature``) wraps the trained network, collects its logits on a
validation set, and fits the temperature with **one call of LBFGS with
lr=0.01 and max_iter=50, starting from T = 1.5**. That is a fixed budget of
small steps, not a solve: when the optimal temperature is far from 1.5 the
recipe stops short of it, and nothing warns.

This example trains a small convolutional network on scikit-learn's digits
(8x8 images, 10 classes), then

1. reproduces the recipe and reports its temperature,
2. fits :class:`skcal.torch.CalibratedModel` with
   :class:`~skcal.TemperatureScaler`, which minimises the validation NLL to
   convergence (Newton's method on ``log(1/T)``),
3. compares both against the NLL curve and on a held-out test set, and
4. exports the calibrated network with :func:`torch.export.export`.
"""

# %%
# Data and a small CNN
# --------------------
# Three splits: training (the network, 20% of the images), validation (the
# temperature) and test (the comparison). The network is trained to a near
# zero training loss with no regularisation, which makes it over-confident,
# as modern networks are. (One torch thread: for a network this small it is
# the fastest setting, and on a busy machine several threads mostly wait on
# each other; the setting is restored at the end.)
import matplotlib.pyplot as plt
import numpy as np
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from skcal import TemperatureScaler
from skcal.display import ReliabilityDisplay
from skcal.metrics import expected_calibration_error, negative_log_likelihood
from skcal.torch import CalibratedModel, collect_logits

n_threads = torch.get_num_threads()
torch.set_num_threads(1)
torch.manual_seed(0)
X, y = load_digits(return_X_y=True)
X = torch.tensor(X / 16.0, dtype=torch.float32).reshape(-1, 1, 8, 8)
y = torch.tensor(y)
idx = np.arange(len(y))
train, rest = train_test_split(idx, train_size=0.2, stratify=y, random_state=0)
val, test = train_test_split(rest, test_size=0.5, stratify=y[rest], random_state=0)


def loader(ix):
    return DataLoader(TensorDataset(X[ix], y[ix]), batch_size=256)


net = nn.Sequential(
    nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(16 * 2 * 2, 10),
)
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
for step in range(600):  # full-batch training
    opt.zero_grad()
    nn.functional.cross_entropy(net(X[train]), y[train]).backward()
    opt.step()
net.eval()

# %%
# The LBFGS recipe
# ----------------
# ``collect_logits`` runs the network over a DataLoader under
# ``torch.inference_mode`` (with a progress bar in a terminal). The recipe
# then optimises a temperature parameter as ``ModelWithTemperature`` does.
val_logits, val_labels = collect_logits(net, loader(val), progress=False)

temperature = nn.Parameter(torch.ones(1) * 1.5)
lbfgs = torch.optim.LBFGS([temperature], lr=0.01, max_iter=50)


def closure():
    lbfgs.zero_grad()
    loss = nn.functional.cross_entropy(val_logits / temperature, val_labels)
    loss.backward()
    return loss


lbfgs.step(closure)
t_recipe = temperature.item()

# %%
# skcal: the exact optimum
# ------------------------
# ``CalibratedModel.fit`` collects the same logits and fits any skcal
# calibrator to convergence; its forward pass is the network followed by the
# fitted map as a torch module (``TemperatureScaler.to_torch()``).
calibrated = CalibratedModel(net, TemperatureScaler()).fit(loader(val), progress=False)
t_skcal = calibrated.calibrator_.temperature_


def val_nll(t):
    return nn.functional.cross_entropy(val_logits / t, val_labels).item()


print(f"LBFGS recipe (lr=0.01, max_iter=50): T = {t_recipe:.4f}, "
      f"validation NLL = {val_nll(t_recipe):.5f}")
print(f"skcal TemperatureScaler:             T = {t_skcal:.4f}, "
      f"validation NLL = {val_nll(t_skcal):.5f}  ({calibrated.calibrator_.n_iter_} "
      "Newton iterations)")

# %%
# On the test set
# ---------------
test_logits, test_labels = collect_logits(net, loader(test), progress=False)
yt = test_labels.numpy()
P = {
    "uncalibrated": torch.softmax(test_logits, 1).numpy(),
    f"LBFGS recipe (T={t_recipe:.2f})": torch.softmax(test_logits / t_recipe, 1).numpy(),
}
with torch.no_grad():
    P[f"skcal (T={t_skcal:.2f})"] = calibrated(X[test]).exp().numpy()
for name, p in P.items():
    print(f"{name:>24}: test NLL {negative_log_likelihood(yt, p):.4f}, "
          f"ECE {expected_calibration_error(yt, p):.4f}")

# %%
# The figure: the validation NLL as a function of T with both temperatures
# marked (left), and the test reliability diagrams (right).
fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 4.6), layout="constrained")
ts = np.geomspace(0.7, max(4.0, 1.5 * t_skcal), 200)
ax0.plot(ts, [val_nll(t) for t in ts], color="0.3", label="validation NLL")
ax0.axvline(1.5, color="0.6", ls=":", label="recipe's start, T = 1.5")
ax0.plot([t_recipe], [val_nll(t_recipe)], "o", ms=9, color="C1",
         label=f"LBFGS recipe, T = {t_recipe:.3f}")
ax0.plot([t_skcal], [val_nll(t_skcal)], "*", ms=14, color="C2",
         label=f"skcal, T = {t_skcal:.3f}")
ax0.set(xscale="log", xlabel="temperature T", ylabel="NLL on the validation set",
        title="Where each fit stops")
ax0.set_xticks([0.75, 1, 1.5, 2, 3, 4], labels=["0.75", "1", "1.5", "2", "3", "4"])
ax0.minorticks_off()
ax0.legend()
for i, (name, p) in enumerate(P.items()):
    ReliabilityDisplay.from_predictions(yt, p, n_bins=10, name=name, ax=ax1,
                                        ref_line=i == 0)
ax1.set_title("Test set, top-label reliability")
plt.show()

# %%
# Exporting the calibrated network
# --------------------------------
# The calibrated model is an ordinary ``nn.Module`` whose temperature is a
# buffer: it exports (and compiles) as one graph, and runs without skcal or
# scikit-learn.
exported = torch.export.export(calibrated, (X[test][:4],))
with torch.no_grad():
    print(torch.allclose(exported.module()(X[test][:4]), calibrated(X[test][:4])))
torch.set_num_threads(n_threads)
