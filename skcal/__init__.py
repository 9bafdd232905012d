"""skcal: post-hoc probability calibration for scikit-learn and PyTorch."""

__version__ = "0.1.0"
