"""The ``skcal benchmark`` comparison of calibration methods, and the peer libraries' adapters."""

from ._benchmark import (
    available_methods,
    failed_datasets,
    format_table,
    plot_reliability,
    run_benchmark,
    write_csv,
)

__all__ = [
    "available_methods",
    "failed_datasets",
    "format_table",
    "plot_reliability",
    "run_benchmark",
    "write_csv",
]
