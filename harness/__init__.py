"""The harness: bpcheck's library of runs built on the explorers, engines and reports.

What the commands of :mod:`bpcheck.cli` call, and what a user's own code and test suite call
(:mod:`bpcheck.strategies`, :mod:`bpcheck.testing`, the pytest plugin): checking boards with
``-j N`` and ``--fail-fast`` (:mod:`.jobs`), scenarios, fuzzing, replays and traces, mutants,
proofs, reports and outputs. It never imports :mod:`bpcheck.cli`.
"""
