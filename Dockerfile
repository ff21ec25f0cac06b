# promptdeck over Streamable HTTP, serving the bundled example library (mount your own over /srv/prompts).
#   docker build -t promptdeck .
#   docker run --rm -p 8000:8000 promptdeck                       # http://localhost:8000/mcp
#   docker run --rm -p 8000:8000 -v "$PWD/prompts:/srv/prompts:ro" promptdeck
#   docker run --rm -p 8000:8000 -e PGPASSWORD promptdeck \
#       serve --store postgresql://promptdeck@db.internal/prompts --label production --http 0.0.0.0:8000
# tests/packaging/test_docker.py lints this file with hadolint and runs its ENTRYPOINT, CMD and HEALTHCHECK as written.
FROM python:3.12-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /opt/promptdeck
COPY pyproject.toml README.md ./
COPY src ./src
# Every extra the server's code imports (tests/packaging/test_docker.py derives them): http (uvicorn with
# httptools and uvloop), store (psycopg, PostgreSQL), webhooks (their signer), oauth (token validation) and
# dotprompt (*.prompt files), so one image serves a folder or a store. What is installed is this source
# tree, whose dependencies pyproject.toml bounds: hadolint's DL3013 asks for pins that do not apply to it.
# hadolint ignore=DL3013
RUN pip install --no-cache-dir ".[http,store,webhooks,oauth,dotprompt]" \
    && rm -rf /opt/promptdeck/src /opt/promptdeck/build \
    && useradd --system --uid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin promptdeck

COPY examples/prompts /srv/prompts

USER 10001
EXPOSE 8000

# No curl in slim images: the image's own Python asks /healthz (200 "ok"); any error or other status fails.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import urllib.request as u; u.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]

# 0.0.0.0: inside a container the loopback default would be unreachable through a published port. The
# Host and Origin checks stay on: loopback names (localhost:8000, 127.0.0.1:8000) are accepted, so
# `-p 8000:8000` works as is; reach it by any other name and add `--allow-host that.name`.
ENTRYPOINT ["promptdeck"]
CMD ["serve", "/srv/prompts", "--http", "0.0.0.0:8000"]
