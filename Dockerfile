# swarrow in a CUDA runtime image: the GPU path needs only the driver (from the host, through
# the NVIDIA container toolkit) and NVRTC (in the runtime image); without a GPU it runs on the
# CPU. Build and run:
#   docker build -t swarrow:0.1.0 .
#   docker run --rm --gpus all -v "$PWD:/data" -w /data swarrow:0.1.0 \
#       swarrow search -q examples/queries.fasta -d examples/db.fasta.gz -o hits.parquet
ARG CUDA_IMAGE=nvidia/cuda:13.0.0-runtime-ubuntu24.04

# Rust 1.89 or later (the AVX-512 intrinsics of the CPU engine are stable since 1.89).
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo install --path . --locked --root /out

FROM ${CUDA_IMAGE}
# procps: Nextflow reads task metrics with ps.
RUN apt-get update && apt-get install -y --no-install-recommends procps \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/bin/swarrow /usr/local/bin/swarrow
CMD ["swarrow", "--help"]
