"""Helpers shared by promptdeck's tests (not part of the package)."""
