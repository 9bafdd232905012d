"""Label-bias corrections for language models: contextual and batch calibration.

Both divide the model's option probabilities by an estimate of its bias
towards each option, a probability vector ``prior_``:
``q(y | x) proportional to p(y | x) / prior_[y]``, i.e. calibrated logits
``log p(y | x) - log prior_[y]``. Contextual calibration (Zhao et al. 2021)
estimates the bias from content-free inputs, batch calibration (Zhou et al.
2024) from the mean prediction over unlabelled inputs.
"""

import numpy as np
from scipy.special import log_softmax, logsumexp

from ..base import BaseCalibrator
from .._backend import _numpy
from .._backend._array import to_numpy
from ..utils.validation import check_scores
from ..utils._params import store_params

__all__ = ["BatchCalibrator", "ContextualCalibrator"]


def _log_softmax(Z):
    return log_softmax(np.asarray(Z, dtype=np.float64), axis=1)


def mean_log_prior(Z, sample_weight=None):
    """``log(sum_i w_i softmax(z_i) / sum_i w_i)``: float64 ``(n_classes,)``.

    Computed in log space, so it is finite even when probabilities underflow.
    """
    LP = _log_softmax(Z)
    if sample_weight is None:
        return logsumexp(LP, axis=0) - np.log(LP.shape[0])
    w = np.asarray(sample_weight, dtype=np.float64)
    return logsumexp(LP, axis=0, b=(w / w.sum())[:, None])


class _PriorCorrection(BaseCalibrator):
    """Shared machinery: calibrated logits ``log_softmax(z) - log prior_``.

    ``y`` is optional in ``fit``: without labels ``classes_`` is ``classes``
    or ``0..K-1``.
    """

    def _encode_y(self, y, n_columns, n_samples):
        if y is None:
            classes = (np.arange(n_columns) if self.classes is None
                       else np.asarray(self.classes))
            if len(classes) != n_columns:
                raise ValueError(
                    f"classes has {len(classes)} entries but X has {n_columns} columns."
                )
            self.classes_ = classes
            return np.zeros(n_samples, dtype=np.int64)
        return super()._encode_y(y, n_columns, n_samples)

    def _prepare(self, Z):
        return Z, _numpy

    def fit(self, X, y=None, sample_weight=None):
        """Estimate the bias ``prior_``.

        Parameters
        ----------
        X : array-like or torch.Tensor of shape (n_samples, n_classes), (n_samples, 1) or (n_samples,)
            Option logits (e.g. from :func:`skcal.llm.score_options`); see the
            class docstring for which inputs they must be.
        y : array-like of shape (n_samples,), default=None
            Not used to estimate the bias; if given, it sets ``classes_`` (and
            is validated) as for any calibrator.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows in the mean.

        Returns
        -------
        self : object
        """
        return super().fit(X, y, sample_weight)

    def _log_prior(self, Z, sample_weight):
        return mean_log_prior(to_numpy(Z), None if sample_weight is None
                              else to_numpy(sample_weight))

    def _fit(self, Z, y, sample_weight, xp):
        lp = self._log_prior(Z, sample_weight)
        self.log_prior_ = lp - np.logaddexp.reduce(lp)
        self.prior_ = np.exp(self.log_prior_)

    def _predict_log_proba(self, Z, xp):
        Zn = to_numpy(Z)
        out = _log_softmax(_log_softmax(Zn) - self.log_prior_)
        return out.astype(np.float64 if Zn.dtype == np.float64 else np.float32)

    def _predict_proba(self, Z, xp):
        P = np.exp(self._predict_log_proba(Z, xp))
        return P / P.sum(axis=1, keepdims=True)

    def _torch_spec(self):
        # to_torch / ONNX: log_softmax(log_softmax(z) - log prior_)
        return {"kind": "affine", "features": "log_softmax", "bias": -self.log_prior_}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        return tags


class ContextualCalibrator(_PriorCorrection):
    """Contextual calibration (Zhao et al. 2021): remove the bias seen on content-free inputs.

    A language model asked to classify a *content-free* input (the prompt
    with the input text replaced by ``"N/A"``, ``""`` or ``"[MASK]"``) should
    be indifferent between the options; the probabilities ``p_cf`` it gives
    instead measure its bias (towards frequent, recent or first-listed labels).
    Contextual calibration divides it out: ``q(y | x) proportional to
    p(y | x) / p_cf(y)``, with ``p_cf`` the mean of the content-free inputs'
    option probabilities. It needs no labels.

    Parameters
    ----------
    content_free_logits : array-like of shape (n_content_free, n_classes), default=None
        Option logits of the content-free inputs (same prompt template and
        options as the data). If given, ``fit(X, y)`` takes the bias from them
        and uses ``X``/``y`` only for ``classes_``, so that the calibrator can
        be fitted on labelled data inside a ``Pipeline`` or ``GridSearchCV``.
        If None, ``fit(X)`` treats ``X`` itself as the content-free inputs'
        logits.
    input_type : {"logits", "probabilities"}, default="logits"
    classes : array-like of shape (n_classes,), default=None
    backend : {"auto", "numpy", "torch"}, default="auto"
        Accepted for API compatibility; the arithmetic is NumPy (a tensor input
        gets a tensor on its device back).

    Attributes
    ----------
    prior_ : ndarray of shape (n_classes,)
        ``p_cf``, normalised over the options.
    log_prior_ : ndarray of shape (n_classes,)
        ``log(prior_)``.
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int

    Notes
    -----
    Zhao et al. fit an affine map ``q = softmax(W p + b)`` of the option
    probabilities ``p`` (normalised over the options) so that the
    content-free inputs' prediction becomes uniform: ``W = diag(p_cf)^{-1}``,
    ``b = 0``. In log space this is ``log_softmax(log_softmax(z) - log p_cf)``,
    which is what is computed. With several content-free inputs (e.g. "N/A",
    "" and "[MASK]") ``p_cf`` is the mean of their normalised probabilities.

    References
    ----------
    Z. Zhao, E. Wallace, S. Feng, D. Klein, S. Singh, "Calibrate Before Use:
    Improving Few-Shot Performance of Language Models", ICML 2021.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.llm import ContextualCalibrator
    >>> cf = np.log([[0.8, 0.2]])  # the model prefers option 0 on "N/A"
    >>> cc = ContextualCalibrator().fit(cf)
    >>> np.round(cc.predict_proba(np.log([[0.8, 0.2], [0.9, 0.1]])), 3)
    array([[0.5  , 0.5  ],
           [0.692, 0.308]])
    """

    _parameter_constraints: dict = {
        **BaseCalibrator._parameter_constraints,
        "content_free_logits": ["array-like", None],
    }

    def __init__(self, *, content_free_logits=None, input_type="logits", classes=None,
                 backend="auto"):
        store_params(self, locals())

    def _log_prior(self, Z, sample_weight):
        if self.content_free_logits is None:
            return super()._log_prior(Z, sample_weight)
        C, _ = check_scores(self.content_free_logits, input_type=self.input_type,
                            name="content_free_logits")
        C = to_numpy(C)
        if C.shape[1] != Z.shape[1]:
            shape = np.shape(self.content_free_logits)
            read = (f"is 1-D, shape {shape}, read as binary scores"
                    if len(shape) == 1 else f"has {C.shape[1]} columns")
            raise ValueError(
                f"content_free_logits {read} but X has {Z.shape[1]} classes: pass an "
                f"array of shape (n_content_free, {Z.shape[1]}) (one content-free "
                "input: [[...]])."
            )
        return mean_log_prior(C)


class BatchCalibrator(_PriorCorrection):
    """Batch calibration (Zhou et al. 2024): remove the bias of the mean prediction.

    The model's bias towards each option is estimated, without labels, as its
    mean option probability over a batch of inputs,
    ``prior(y) = mean_i p(y | x_i)``, and divided out:
    ``q(y | x) proportional to p(y | x) / prior(y)``. ``fit(X)`` estimates it
    on unlabelled logits ``X`` (e.g. the calibration split, or the test batch
    itself as in the paper's zero-shot setting; labels are ignored).

    Parameters
    ----------
    input_type : {"logits", "probabilities"}, default="logits"
    classes : array-like of shape (n_classes,), default=None
    backend : {"auto", "numpy", "torch"}, default="auto"
        Accepted for API compatibility; the arithmetic is NumPy.

    Attributes
    ----------
    prior_ : ndarray of shape (n_classes,)
        The mean option probability over the fitted rows (weighted).
    log_prior_ : ndarray of shape (n_classes,)
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int

    Notes
    -----
    Zhou et al. estimate the contextual prior as the batch mean
    ``p(y) ~ (1/M) sum_i p(y | x_i)`` and score ``log p(y | x) - log p(y)``;
    here the scores are normalised by a softmax so that they are
    probabilities. The per-option mean is computed in log space, so classes
    whose probabilities underflow keep a finite prior.

    References
    ----------
    H. Zhou, X. Wan, L. Proleev, D. Mincu, J. Chen, K. Heller, S. Roy, "Batch
    Calibration: Rethinking Calibration for In-Context Learning and Prompt
    Engineering", ICLR 2024.

    Examples
    --------
    >>> import numpy as np
    >>> from skcal.llm import BatchCalibrator
    >>> Z = np.log([[0.9, 0.1], [0.6, 0.4], [0.7, 0.3]])
    >>> bc = BatchCalibrator().fit(Z)
    >>> np.round(bc.prior_, 3)
    array([0.733, 0.267])
    >>> bc.predict(Z)
    array([0, 1, 1])
    """

    def fit_predict_proba(self, X):
        """Fit on ``X`` and return its calibrated probabilities (the test-time use of the paper).

        Parameters
        ----------
        X : array-like or torch.Tensor of shape (n_samples, n_classes)

        Returns
        -------
        proba : ndarray or torch.Tensor of shape (n_samples, n_classes)
        """
        return self.fit(X).predict_proba(X)

