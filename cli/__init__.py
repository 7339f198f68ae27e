"""The `bpcheck` command line: parse, call the library, print, exit.

Nothing outside this package imports it (tests/test_layers.py): the library is :mod:`bpcheck`
and :mod:`bpcheck.harness`; each ``cmd_*`` here reads its arguments, calls it, prints the result
and returns the exit status of :mod:`bpcheck.cli.exits`.
"""
