"""Invariant library (built by the explorer issue): checks that read observations and events only."""
