"""Whole-logit-vector calibration maps (temperature, vector, matrix, Dirichlet, ETS...)."""

from ._matrix import DirichletCalibrator, MatrixScaler

__all__ = ["DirichletCalibrator", "MatrixScaler"]
