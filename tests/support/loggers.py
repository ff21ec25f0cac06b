"""The promptdeck and uvicorn loggers kept as they were around a test that sets logging up in-process.

``setup_logging`` (a command run through click's CliRunner, or called directly) adds a handler writing to the
stderr of that moment to both loggers; left there, later tests would log into a closed stream."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest


@pytest.fixture
def kept_logging() -> Iterator[None]:
    saved = [(logger, list(logger.handlers), logger.level, logger.propagate)
             for logger in (logging.getLogger("promptdeck"), logging.getLogger("uvicorn"))]
    yield
    for logger, handlers, level, propagate in saved:
        logger.handlers[:] = handlers
        logger.setLevel(level)
        logger.propagate = propagate
