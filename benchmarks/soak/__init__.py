"""The soak test: ``python -m benchmarks.soak --minutes N`` (``make soak``). See
:mod:`benchmarks.soak.harness` for the faults and :mod:`benchmarks.soak.audit` for the checks."""
