"""Data files shipped inside the package (protected domains)."""
