# syntax=docker/dockerfile:1
# budget-server container image.
#
# The project is developed and tested with Swift 6.3.1. The build stage uses the official
# swift image; any 6.x tag at or above 6.1 on Debian bookworm builds it (Package.swift asks
# for tools version 6.0). Pin the tag you test with.

# ---- build -------------------------------------------------------------------------------
FROM swift:6.1-bookworm AS build

RUN apt-get update \
    && apt-get install -y --no-install-recommends libpq-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /src

# Tests/ is copied too: Package.swift declares test targets, and SwiftPM refuses to load a
# package whose target folders are missing, even to build one product. migrations/, openapi.yaml
# and Plugins/ are build inputs: the EmbedMigrations and EmbedOpenAPI plugins compile
# migrations/*.sql and openapi.yaml into the binary.
COPY Package.swift ./
COPY Plugins ./Plugins
COPY Sources ./Sources
COPY Tests ./Tests
COPY migrations ./migrations
COPY openapi.yaml ./
RUN swift build -c release --static-swift-stdlib --product budget-server \
    && mkdir -p /staging \
    && cp "$(swift build -c release --static-swift-stdlib --show-bin-path)/budget-server" /staging/

# ---- runtime -----------------------------------------------------------------------------
FROM debian:bookworm-slim

# libpq5: the PostgreSQL client library the binary links against (the Swift runtime and
# Foundation are linked statically). No PostgreSQL server here: the container always gets
# DATABASE_URL and never starts an embedded cluster.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libpq5 ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --home-dir /app --no-create-home budget

WORKDIR /app
# The migrations are inside the binary; mount a folder and pass --migrations-dir to apply others.
COPY --from=build /staging/budget-server /app/budget-server

USER budget:budget
EXPOSE 3000

# No HEALTHCHECK here: docker-compose.yml defines one (bash + /dev/tcp, since this image has
# no curl). Add the same one here if the image is run without compose.
ENTRYPOINT ["/app/budget-server"]
CMD ["serve", "--host", "0.0.0.0", "--port", "3000"]
