# Scan & Snap lab: the dashboard on port 8501 (Streamlit's Docker guide, hardened).
# Build:  docker build -t scan-snap-lab .            (CPU torch)
#         docker build --build-arg TORCH_INDEX=https://download.pytorch.org/whl/cu128 -t scan-snap-lab:cuda .
# Run:    docker run -p 8501:8501 -v scansnap-data:/data scan-snap-lab
FROM python:3.11-slim

ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    SCANSNAP_DATA_DIR=/data

# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends curl \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY requirements.txt .
RUN pip install --index-url "${TORCH_INDEX}" "torch==2.13.0" \
    && pip install -r requirements.txt

COPY pyproject.toml README.md ./
COPY scansnap ./scansnap
RUN pip install --no-deps . \
    && useradd --create-home --uid 1000 lab \
    && mkdir -p /data \
    && chown -R lab:lab /data
USER 1000

EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["curl", "--fail", "http://localhost:8501/healthz"]
ENTRYPOINT ["scansnap", "lab", "--server.port=8501", "--server.address=0.0.0.0"]
