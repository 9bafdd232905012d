"""Collect a network's logits and wrap it with a fitted calibrator."""

import sys

import numpy as np
import torch
from sklearn.base import clone
from torch import nn

from ..scaling import TemperatureScaler

__all__ = ["CalibratedModel", "collect_logits"]


def _to_device(obj, device):
    if isinstance(obj, torch.Tensor):
        return obj.to(device, non_blocking=True)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_device(o, device) for o in obj)
    if isinstance(obj, dict):
        return {k: _to_device(v, device) for k, v in obj.items()}
    return obj


def _split_batch(batch):
    """``(inputs, labels)`` of a DataLoader batch: a pair/sequence or a dict."""
    if isinstance(batch, dict):
        for key in ("label", "labels", "y", "target", "targets"):
            if key in batch:
                return {k: v for k, v in batch.items() if k != key}, batch[key]
        raise ValueError(
            f"a dict batch needs a 'label' / 'labels' / 'y' / 'target' key; got "
            f"{sorted(batch)}"
        )
    if isinstance(batch, (list, tuple)) and len(batch) >= 2:
        return batch[0], batch[1]
    raise ValueError(
        "each batch must be (inputs, labels) or a dict with a 'label' key; got "
        f"{type(batch).__name__}"
    )


def _progress(iterable, enabled, total, desc):
    """A tqdm bar over ``iterable`` when ``enabled`` and stderr is a terminal
    (in a log file or a pipe, ``leave=False`` would leave a stale "0%" line)."""
    isatty = getattr(sys.stderr, "isatty", None)
    if not enabled or isatty is None or not isatty():
        return iterable
    try:
        from tqdm.auto import tqdm
    except ImportError:  # the bar is optional
        return iterable
    return tqdm(iterable, total=total, desc=desc, unit="batch", leave=False)


def collect_logits(
    model, loader, *, device=None, dtype=None, output_transform=None, progress=True
):
    """Run a network over a DataLoader and return its logits and the labels.

    Parameters
    ----------
    model : torch.nn.Module
        The trained network; put in eval mode for the pass (its previous
        mode is restored afterwards).
    loader : iterable of batches
        Typically a :class:`torch.utils.data.DataLoader` over the calibration
        set. A batch is ``(inputs, labels, ...)`` or a dict with a ``label``
        (``labels``, ``y``, ``target``) key; a dict's other entries are passed
        as keyword arguments. Inputs may be a tensor or nested lists / tuples
        / dicts of tensors.
    device : torch.device or str, default=None
        Where the network runs; by default the device of its first parameter
        (CPU for a parameterless module). Inputs are moved there.
    dtype : torch.dtype, default=None
        dtype of the returned logits (e.g. ``torch.float32`` for a network
        run in bfloat16, or ``torch.float16`` to halve host memory); by
        default the network's output dtype.
    output_transform : callable, default=None
        Applied to the network's output to get the (batch, n_classes)
        logits, e.g. ``lambda out: out.logits`` for Hugging Face models.
    progress : bool, default=True
        Show a tqdm progress bar, when tqdm is installed and stderr is a
        terminal (never in a log file or a pipe).

    Returns
    -------
    logits : torch.Tensor of shape (n_samples, n_classes), on the CPU
    labels : torch.Tensor of shape (n_samples,), int64, on the CPU

    Raises
    ------
    ValueError
        For a batch that has no labels, outputs that are not 2-D, or a class
        count that changes between batches.

    Notes
    -----
    The network runs under :func:`torch.inference_mode` (the returned
    tensors are ordinary ones, usable with autograd). Each batch's logits are
    copied to host memory as they come (device memory: one batch), into an
    output allocated once when the loader's dataset has a length (host
    memory: the logits and labels themselves); otherwise batches are kept and
    concatenated at the end (twice that, briefly).

    Examples
    --------
    >>> import torch
    >>> from torch.utils.data import DataLoader, TensorDataset
    >>> from skcal.torch import collect_logits
    >>> net = torch.nn.Linear(4, 3)
    >>> data = TensorDataset(torch.randn(10, 4), torch.randint(0, 3, (10,)))
    >>> logits, labels = collect_logits(net, DataLoader(data, batch_size=4), progress=False)
    >>> logits.shape, labels.dtype
    (torch.Size([10, 3]), torch.int64)
    """
    if device is None:
        p = next(iter(model.parameters()), None)
        device = p.device if p is not None else torch.device("cpu")
    device = torch.device(device)
    try:
        n_total = len(getattr(loader, "dataset", None))  # None: TypeError
    except TypeError:
        n_total = None
    try:
        n_batches = len(loader)
    except TypeError:
        n_batches = None
    was_training = model.training
    model.eval()
    logits_out = labels_out = None
    chunks, label_chunks = [], []
    pos = written = 0  # rows seen; rows written into the preallocated tensors
    try:
        for batch in _progress(loader, progress, n_batches, "collecting logits"):
            inputs, labels = _split_batch(batch)
            with torch.inference_mode():
                inputs = _to_device(inputs, device)
                out = model(**inputs) if isinstance(inputs, dict) else model(inputs)
                if output_transform is not None:
                    out = output_transform(out)
            # copies happen outside inference mode: ordinary tensors out
            if not isinstance(out, torch.Tensor) or out.ndim != 2:
                raise ValueError(
                    "the model's output must be a 2-D (batch, n_classes) tensor "
                    f"of logits, got {getattr(out, 'shape', type(out).__name__)}; "
                    "pass output_transform to extract it"
                )
            out = out.to("cpu", dtype=dtype or out.dtype)
            labels = torch.as_tensor(labels).reshape(-1).to("cpu", torch.int64)
            if labels.shape[0] != out.shape[0]:
                raise ValueError(
                    f"a batch has {out.shape[0]} outputs but {labels.shape[0]} labels"
                )
            b, k = out.shape
            if n_total is not None and logits_out is None:
                logits_out = torch.empty((n_total, k), dtype=out.dtype)
                labels_out = torch.empty(n_total, dtype=torch.int64)
            first = logits_out if logits_out is not None else (chunks or [out])[0]
            if k != first.shape[1]:
                raise ValueError(
                    f"the number of classes changed from {first.shape[1]} to {k}"
                )
            if logits_out is not None and pos + b <= n_total:
                logits_out[pos:pos + b] = out
                labels_out[pos:pos + b] = labels
                written = pos + b
            else:  # no length, or a loader yielding more than len(dataset)
                chunks.append(out)
                label_chunks.append(labels)
            pos += b
    finally:
        model.train(was_training)
    if logits_out is not None:
        logits_out, labels_out = logits_out[:written], labels_out[:written]
        if chunks:  # extra rows beyond len(dataset) (e.g. a sampler with replacement)
            logits_out = torch.cat([logits_out, *chunks])
            labels_out = torch.cat([labels_out, *label_chunks])
        return logits_out, labels_out
    if not chunks:
        raise ValueError("the loader yielded no batches")
    return torch.cat(chunks), torch.cat(label_chunks)


class CalibratedModel(nn.Module):
    """A network followed by a calibrator fitted exactly on its logits.

    The wrapper of Guo et al.'s ``ModelWithTemperature``, done with any skcal
    calibrator: :meth:`fit` collects the logits of a calibration loader and
    fits the calibrator to its optimum (not a fixed number of LBFGS steps);
    :meth:`forward` returns calibrated log-probabilities (calibrated logits)
    or probabilities.

    Parameters
    ----------
    model : torch.nn.Module
        The trained network, mapping a batch of inputs to (batch, n_classes)
        logits (or use ``output_transform``).
    calibrator : skcal calibrator
        Unfitted; cloned by :meth:`fit`. Default: ``TemperatureScaler()``.
    output : {"logits", "proba"}, default="logits"
        What :meth:`forward` returns: calibrated log-probabilities (which are
        also valid logits) or probabilities.
    output_transform : callable, default=None
        Extracts the logits from the network's output (as in
        :func:`collect_logits`).

    Attributes
    ----------
    calibrator_ : skcal calibrator
        The fitted calibrator (after :meth:`fit`).
    calibration : torch.nn.Module or None
        ``calibrator_.to_torch()`` on the network's device: the fitted map
        as a module (buffers only), used by :meth:`forward`; None for a
        calibrator without a closed form, whose ``predict_log_proba`` is then
        called on the tensor instead (not traceable by ``torch.compile``).

    Examples
    --------
    >>> import torch
    >>> from torch.utils.data import DataLoader, TensorDataset
    >>> from skcal import TemperatureScaler
    >>> from skcal.torch import CalibratedModel
    >>> torch.manual_seed(0)  # doctest: +ELLIPSIS
    <torch._C.Generator object at ...>
    >>> net = torch.nn.Linear(4, 3)
    >>> x, y = torch.randn(200, 4), torch.randint(0, 3, (200,))
    >>> cal = CalibratedModel(net, TemperatureScaler(), output="proba")
    >>> cal = cal.fit(DataLoader(TensorDataset(x, y), batch_size=64), progress=False)
    >>> bool(torch.allclose(cal(x[:2]).sum(dim=1), torch.ones(2)))
    True
    """

    def __init__(self, model, calibrator=None, *, output="logits", output_transform=None):
        super().__init__()
        if output not in ("logits", "proba"):
            raise ValueError(f"output must be 'logits' or 'proba', got {output!r}")
        self.model = model
        self.calibrator = calibrator
        self.output = output
        self.output_transform = output_transform
        self.calibration = None

    def fit(self, loader, *, device=None, progress=True, sample_weight=None):
        """Collect the logits of ``loader`` and fit the calibrator on them.

        Parameters
        ----------
        loader : iterable of batches
            The calibration set (held out from training); see
            :func:`collect_logits`.
        device : torch.device or str, default=None
            Where the network runs (default: its parameters' device).
        progress : bool, default=True
            Show a progress bar while collecting.
        sample_weight : array-like of shape (n_samples,), default=None
            Passed to the calibrator's ``fit``.

        Returns
        -------
        self : CalibratedModel
        """
        logits, labels = collect_logits(
            self.model, loader, device=device, dtype=torch.float32,
            output_transform=self.output_transform, progress=progress,
        )
        calibrator = (TemperatureScaler() if self.calibrator is None
                      else clone(self.calibrator))
        # integer labels 0..K-1 name the logit columns, so a class missing
        # from the calibration set keeps its column
        if "classes" in calibrator.get_params() and calibrator.classes is None:
            calibrator.set_params(classes=np.arange(logits.shape[1]))
        self.calibrator_ = calibrator.fit(logits, labels, sample_weight=sample_weight)
        if device is None:
            p = next(iter(self.model.parameters()), None)
            device = p.device if p is not None else torch.device("cpu")
        try:
            self.calibration = self.calibrator_.to_torch(device=device)
        except NotImplementedError:
            self.calibration = None
        return self

    def forward(self, *args, **kwargs):
        """Calibrated log-probabilities (``output="logits"``) or probabilities.

        Parameters
        ----------
        *args, **kwargs
            The network's inputs.

        Returns
        -------
        out : torch.Tensor of shape (batch, n_classes), float32

        Raises
        ------
        RuntimeError
            If called before :meth:`fit`.
        """
        if not hasattr(self, "calibrator_"):
            raise RuntimeError("CalibratedModel is not fitted yet; call fit(loader) first")
        z = self.model(*args, **kwargs)
        if self.output_transform is not None:
            z = self.output_transform(z)
        lp = (self.calibration(z) if self.calibration is not None
              else self.calibrator_.predict_log_proba(z.detach().float()))
        return lp.exp() if self.output == "proba" else lp
