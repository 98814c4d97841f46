"""heapprof-report benchmark workload for python3, run with PYTHONMALLOC=malloc so that every
object is a malloc: python3 starting and importing a few standard modules. Its profile has
about 15k contexts of deep stacks (1 MB), the size the report tool is measured on
(bench/report.sh, docs/PERFORMANCE.md). Prints one line."""
import importlib
import sys

for name in ("argparse", "json", "logging", "re", "typing"):
    importlib.import_module(name)
print(len(sys.modules))
