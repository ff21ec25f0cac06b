"""Attacks on promptdeck, kept as tests: each reproduces a hostile client, prompt author or server."""
