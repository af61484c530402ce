# syntax=docker/dockerfile:1
# ContextBus images (docs/operations.md, "Docker Compose"). Build from the repository root:
#   docker build --target runtime -t contextbus .         # the services
#   docker build --target bluez-sim -t contextbus-bluez-sim .
# Stages:
#   build      the Swift toolchain image; release binaries of storesvc, devicesvc and ctxbus with the Swift
#              runtime and Foundation linked statically, so that the runtime image needs no toolchain
#   runtime    Debian slim with libsqlite3 and libstdc++ (what the static-stdlib binaries still link; checked
#              with ldd) and the sqlite3 shell for online backups; user contextbus;
#              sockets in /run/ctxbus, the database in /var/lib/ctxbus
#   bluez-sim  runtime plus dbus-daemon, python3-dbus, python3-gi and scripts/bluezsim with its pinned
#              requirements: the simulated BlueZ for machines without a Bluetooth adapter
ARG SWIFT_IMAGE=swift:6.3-bookworm
ARG DEBIAN_IMAGE=debian:bookworm-slim

FROM ${SWIFT_IMAGE} AS build
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libsqlite3-dev libnats-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Every directory Package.swift names must exist, tests, benchmarks, the plugin and the examples included, even
# though only the service executables are built.
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
COPY Benchmarks ./Benchmarks
COPY Plugins ./Plugins
COPY examples ./examples
RUN for product in storesvc devicesvc ctxbus fleetsvc; do \
        swift build -c release --static-swift-stdlib --product "$product" || exit 1; \
    done \
    && mkdir -p /out \
    && bin=$(swift build -c release --static-swift-stdlib --show-bin-path) \
    && cp "$bin/storesvc" "$bin/devicesvc" "$bin/ctxbus" "$bin/fleetsvc" /out/

FROM ${DEBIAN_IMAGE} AS runtime
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libsqlite3-0 libnats3.4 libstdc++6 sqlite3 \
    && rm -rf /var/lib/apt/lists/*
RUN groupadd --system contextbus \
    && useradd --system --gid contextbus --home-dir /var/lib/ctxbus --shell /usr/sbin/nologin contextbus \
    && install -d -o contextbus -g contextbus -m 0750 /run/ctxbus /var/lib/ctxbus
COPY --from=build /out/storesvc /out/devicesvc /out/ctxbus /out/fleetsvc /usr/local/bin/
ENV CTXBUS_RUNTIME_DIR=/run/ctxbus \
    CTXBUS_DATA_DIR=/var/lib/ctxbus
USER contextbus
WORKDIR /var/lib/ctxbus
CMD ["storesvc", "--socket", "/run/ctxbus/store.sock", "--database", "/var/lib/ctxbus/store.sqlite"]

FROM runtime AS bluez-sim
USER root
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        dbus-daemon python3 python3-venv python3-dbus python3-gi \
    && rm -rf /var/lib/apt/lists/*
COPY scripts/bluez-sim /opt/contextbus/scripts/bluez-sim
COPY scripts/bluezsim /opt/contextbus/scripts/bluezsim
COPY compose/bluez-sim-entrypoint.sh /opt/contextbus/compose/bluez-sim-entrypoint.sh
# The same venv scripts/bluez-sim makes in a checkout (--system-site-packages for dbus and gi), from the
# pinned scripts/bluezsim/requirements.txt; its stamp file makes later starts skip installing.
ENV BLUEZ_SIM_VENV=/opt/bluez-sim-venv
RUN /opt/contextbus/scripts/bluez-sim --install \
    && install -d -o contextbus -g contextbus -m 0750 /run/bluez-sim
USER contextbus
ENTRYPOINT ["/opt/contextbus/compose/bluez-sim-entrypoint.sh"]
CMD []
