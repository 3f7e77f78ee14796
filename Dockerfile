# Builds the parchis-server binary (web client and SQL migrations are embedded in it).
# The toolchain is the workspace's rust-version (Cargo.toml); crates/server/tests/deploy.rs
# fails when the two differ.
FROM rust:1.89-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p parchis-server

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --home /var/lib/parchis --create-home parchis
COPY --from=build /src/target/release/parchis-server /usr/local/bin/parchis-server
USER parchis
WORKDIR /var/lib/parchis
ENV PARCHIS_BIND=0.0.0.0 \
    PARCHIS_PORT=8080 \
    PARCHIS_DATA_DIR=/var/lib/parchis
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --retries=3 \
  CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
ENTRYPOINT ["/usr/local/bin/parchis-server"]
