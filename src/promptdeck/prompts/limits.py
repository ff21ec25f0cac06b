"""The limits every render runs under, in a module of their own.

``execution`` reads them on the stdio handshake's path, where the template machinery (``render`` and its
``sandbox``) is not needed yet: it is imported when the first prompt is read (issue 29).
"""

from __future__ import annotations

#: Longest text a render may produce (and so the largest step allowed on the way).
MAX_OUTPUT_CHARS = 4 * 1024 * 1024
#: Longest a template may take to render.
MAX_RENDER_SECONDS = 2.0
