"""urlvet."""
