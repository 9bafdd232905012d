"""Whole-logit-vector calibration maps (temperature-type scalings)."""

from ._local_temperature import LocalTemperatureScaler

__all__ = ["LocalTemperatureScaler"]
