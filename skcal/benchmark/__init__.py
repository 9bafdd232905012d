"""The ``skcal benchmark`` comparison of calibration methods, and the peer libraries' adapters."""

from ._benchmark import (
    add_intervals,
    available_methods,
    failed_datasets,
    format_table,
    plot_reliability,
    run_benchmark,
    write_csv,
)

__all__ = [
    "add_intervals",
    "available_methods",
    "failed_datasets",
    "format_table",
    "plot_reliability",
    "run_benchmark",
    "write_csv",
]
