"""HTA's utils package, as far as notebooks import from it."""
