"""Report writers (built by the reports issue): they read results, never rule internals."""
