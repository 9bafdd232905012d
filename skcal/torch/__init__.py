"""PyTorch integration: calibrators as modules, logit collection, calibrated models.

- :meth:`skcal.base.BaseCalibrator.to_torch` returns a fitted calibrator as one
  of the modules below (:class:`AffineLogits`, :class:`TemperatureMixture`,
  :class:`LocalTemperature`, :class:`OneVsRestSigmoid`,
  :class:`OneVsRestInterpolation`; the wrappers :class:`UniformMixture` and
  :class:`TopVersusAll` around one of them);
- :func:`collect_logits` runs a network over a DataLoader;
- :class:`CalibratedModel` wraps a network with a calibrator fitted exactly on
  its logits.

Importing this subpackage imports torch (``import skcal`` does not).
"""

from ._model import CalibratedModel, collect_logits
from ._modules import (
    AffineLogits,
    LocalTemperature,
    OneVsRestInterpolation,
    OneVsRestSigmoid,
    TemperatureMixture,
    TopVersusAll,
    UniformMixture,
)

__all__ = [
    "AffineLogits",
    "CalibratedModel",
    "LocalTemperature",
    "OneVsRestInterpolation",
    "OneVsRestSigmoid",
    "TemperatureMixture",
    "TopVersusAll",
    "UniformMixture",
    "collect_logits",
]
