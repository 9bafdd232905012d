"""Calibration of large language models' answers to multiple-choice prompts.

- :func:`option_log_probs` and :func:`score_options` turn a causal language
  model's next-token logits and the token ids of each answer option into class
  logits: the options' log-probabilities, summed over an option's tokens. They
  can be fed to any skcal calibrator.
- :class:`ContextualCalibrator` (Zhao et al. 2021, "Calibrate before use")
  divides out the model's answer bias measured on content-free inputs.
- :class:`BatchCalibrator` (Zhou et al. 2024, "Batch calibration") divides out
  the bias estimated from the mean prediction over unlabelled inputs.

Calibration temperature (``TemperatureScaler``) is fitted to labels and changes
the reported probabilities; it is not the sampling temperature of text
generation (see the user guide page "Calibrating language models").
Importing this package imports neither torch nor transformers.
"""

from ._options import option_log_probs, score_options
from ._prior import BatchCalibrator, ContextualCalibrator

__all__ = ["BatchCalibrator", "ContextualCalibrator", "option_log_probs", "score_options"]
