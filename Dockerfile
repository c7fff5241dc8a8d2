# The platform's image (gateway, operator, CLI: `sless`), for providers who build with
# Docker. It describes the same image as scripts/image, which builds it with no Docker
# engine, reproducibly, with an SBOM (the image the project tests): Debian bookworm +
# python3.11, semgrep at /opt/semgrep, sless and uv.lock's wheels at /opt/sless, user
# 65532, entrypoint `sless`. Keep the two in step.
#
#   docker build -t registry.example.com/sless:0.1.0 .
#
# Base pinned by digest in production (docker buildx imagetools inspect debian:bookworm-slim).
FROM debian:bookworm-slim AS base
RUN apt-get update && apt-get install -y --no-install-recommends python3.11 python3 ca-certificates \
    && rm -rf /var/lib/apt/lists/*

FROM base AS build
COPY --from=ghcr.io/astral-sh/uv:latest /uv /usr/local/bin/uv
ARG SEMGREP_VERSION=1.185.0
WORKDIR /src
COPY pyproject.toml uv.lock README.md ./
COPY sless ./sless
# the locked environment, sless not editable; only its site-packages goes in
RUN UV_PROJECT_ENVIRONMENT=/venv uv sync --frozen --no-dev --no-editable --python /usr/bin/python3.11 \
    && mv /venv/lib/python3.11/site-packages /opt/sless \
    && find /opt/sless -name direct_url.json -delete
RUN uv pip install --target /opt/semgrep --python /usr/bin/python3.11 "semgrep==${SEMGREP_VERSION}" \
    && rm -rf /opt/semgrep/bin && find /opt/semgrep -name direct_url.json -delete
RUN printf '#!/bin/sh\nexec python3 -m sless.cli "$@"\n' > /usr/local/bin/sless \
    && for e in semgrep:entrypoint pysemgrep:pysemgrep; do \
         printf '%s\n' '#!/usr/bin/python3' 'import sys' 'sys.path.insert(0, "/opt/semgrep")' \
           "from semgrep.console_scripts.${e#*:} import main" 'sys.exit(main())' > "/usr/local/bin/${e%%:*}"; \
       done \
    && chmod 0755 /usr/local/bin/sless /usr/local/bin/semgrep /usr/local/bin/pysemgrep

FROM base
COPY --from=build /opt/sless /opt/sless
COPY --from=build /opt/semgrep /opt/semgrep
COPY --from=build /usr/local/bin/sless /usr/local/bin/semgrep /usr/local/bin/pysemgrep /usr/local/bin/
RUN mkdir -p /var/lib/sless  # root-owned, as in scripts/image: the Deployments mount a volume there
ENV PATH=/usr/local/bin:/usr/bin:/bin PYTHONPATH=/opt/sless PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 SLESS_DATA_DIR=/var/lib/sless HOME=/tmp
USER 65532:65532
WORKDIR /
EXPOSE 8080
ENTRYPOINT ["sless"]
