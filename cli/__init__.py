"""bpcheck: a model checker and property-test harness for the Yu-Gi-Oh! TCG Battle Phase.

The reference model lives in :mod:`bpcheck.model`; the command line in :mod:`bpcheck.cli`.
"""

__version__ = "0.1.0"
