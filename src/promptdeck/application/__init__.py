"""Prompts in an application: render a library right where the model is called (docs/application.md)."""

from __future__ import annotations

from .prompts import Prompts
from .rendered import PromptListing, Rendered

__all__ = ["PromptListing", "Prompts", "Rendered"]
