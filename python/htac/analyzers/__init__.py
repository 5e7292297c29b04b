"""HTA's analyzers package, as far as notebooks import from it (critical_path_analysis)."""
