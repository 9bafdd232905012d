"""Render the JSON of bench_perclass_quality.py as the RST tables of docs/user_guide/perclass_guide.rst.

Usage::

    python benchmarks/perclass_table_rst.py results.json
"""

import json
import sys

METHODS = ["uncalibrated", "platt", "isotonic", "beta", "histogram", "scaling-binning", "bbq",
           "spline", "venn-abers"]
NAMES = {"scaling-binning": "scal.-bin.", "venn-abers": "Venn-Abers", "uncalibrated": "uncal.",
         "histogram": "histogram"}


def main(path):
    rows = json.load(open(path))
    for title, idx, fmt in (("test NLL", 0, "{:.3f}"), ("test top-label ECE (%, 15 bins)", 1, "{:.2f}"),
                            ("test Brier score", 2, "{:.3f}")):
        print(f"\n{title}\n")
        print(".. list-table::\n   :header-rows: 1\n")
        print("   * - set\n" + "".join(f"     - {NAMES.get(m, m)}\n" for m in METHODS), end="")
        for r in rows:
            vals = {m: r[m][idx] for m in METHODS if m in r}
            per = [m for m in METHODS[1:] if m in vals]
            best = min(per, key=lambda m: vals[m])
            print(f"   * - ``{r['set']}`` ({r['K']})")
            for m in METHODS:
                if m not in vals:
                    print("     - ")
                    continue
                v = fmt.format(vals[m]) if vals[m] != float("inf") else "inf"
                print(f"     - **{v}**" if m == best else f"     - {v}")


if __name__ == "__main__":
    main(sys.argv[1])
