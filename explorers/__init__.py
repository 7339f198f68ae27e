"""Explicit-state explorers (built by the explorer issue): generic search over engine states."""
