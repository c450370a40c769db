# flower-bot as a container: one replica. compose.yaml runs two on one PostgreSQL.
FROM python:3.11-slim
# git for the runs and bound repositories; bubblewrap and socat for the sandbox (FLOWER_SANDBOX=on)
RUN apt-get update && apt-get install -y --no-install-recommends git bubblewrap socat ca-certificates \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml README.md ./
COPY engine engine
COPY bot bot
RUN pip install --no-cache-dir ".[postgres]"
# never root: the runs' CLI refuses some settings as root, and the sandbox wants an ordinary user
RUN useradd --create-home --uid 10001 flower && mkdir -p /data/flower && chown flower /data/flower  # a new volume takes this owner
USER flower
ENV FLOWER_HOME=/data/flower
CMD ["flower-bot"]
