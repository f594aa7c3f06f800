# One image for everything in docker-compose.yml: the arena server and admin CLI
# (`arena`), and the bot client (`arena-bot`). NumPy and Numba come as wheels,
# so no compiler is needed.
FROM python:3.11-slim

# The installed package is read-only for the runtime user, so Numba caches its
# compiled kernels under /tmp instead of beside the modules.
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    NUMBA_CACHE_DIR=/tmp/numba-cache

WORKDIR /src
COPY pyproject.toml README.md ./
COPY protocol ./protocol
COPY bots ./bots
COPY arena ./arena
RUN pip install . && rm -rf /src

# Not root at run time; /data (SQLite) and /tokens (bot tokens) belong to it, so
# named volumes mounted there start out writable.
RUN useradd --create-home --uid 1000 arena \
    && mkdir -p /data /tokens \
    && chown arena:arena /data /tokens
USER arena
WORKDIR /data

EXPOSE 8765
CMD ["arena", "serve", "--host", "0.0.0.0", "--port", "8765", "--db", "sqlite+aiosqlite:////data/arena.db"]
