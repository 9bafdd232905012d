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
from ._modules import *  # noqa: F403 (the modules, as listed in _modules.__all__)
from ._modules import __all__ as _module_names

__all__ = sorted([*_module_names, "CalibratedModel", "collect_logits"])
