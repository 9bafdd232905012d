"""Plots for calibration (matplotlib is imported only when drawing)."""

from ._reliability import ReliabilityDisplay

__all__ = ["ReliabilityDisplay"]
