"""Adapters the suite can run: loaders, the bundled reference adapter, mutants and shims."""
