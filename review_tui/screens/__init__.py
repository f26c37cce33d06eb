"""Review UI."""
