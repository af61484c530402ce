"""The checks behind scripts/check-deploy (run it, not this file: it installs docker-compose first).

Every problem is collected as one line; the process exits 1 if there is any, 0 otherwise."""

from __future__ import annotations

import fnmatch
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "compose" / "docker-compose.yml"
SYSTEMD = ROOT / "deploy" / "systemd"
OUR_BINARIES = ("storesvc", "devicesvc", "ctxbus", "fleetsvc")

problems: list[str] = []


def problem(text: str) -> None:
    problems.append(text)


def relative(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


# MARK: - What our programs accept


class Flags:
    """The flags each program accepts: its --help output when it is built, else the flags its sources parse."""

    def __init__(self) -> None:
        self.cache: dict[str, tuple[set[str], str]] = {}

    def of(self, program: str) -> tuple[set[str], str]:
        if program not in self.cache:
            self.cache[program] = self._load(program)
        return self.cache[program]

    def _load(self, program: str) -> tuple[set[str], str]:
        if program == "bluez-sim":
            # scripts/bluez-sim's own options plus the simulator's argparse options (it passes the rest on).
            text = (ROOT / "scripts" / "bluez-sim").read_text() + (ROOT / "scripts/bluezsim/simd.py").read_text()
            return set(re.findall(r"--[a-z][a-z0-9-]*", text)), "scripts/bluez-sim and scripts/bluezsim/simd.py"
        for build in ("debug", "release"):
            binary = ROOT / ".build" / build / program
            # A binary older than the sources may lack flags added since: read the sources instead.
            if binary.is_file() and os.access(binary, os.X_OK) and binary.stat().st_mtime >= newest_source():
                try:
                    run = subprocess.run([str(binary), "--help"], capture_output=True, text=True, timeout=30)
                except (OSError, subprocess.TimeoutExpired) as error:
                    problem(f"{relative(binary)} --help failed: {error}")
                    continue
                if run.returncode == 0 and run.stdout.strip():
                    return set(re.findall(r"--[a-z][a-z0-9-]*", run.stdout)), f"{relative(binary)} --help"
        sources = ROOT / "Sources" / program
        if not sources.is_dir():
            problem(f"no sources for {program} (Sources/{program})")
            return set(), f"Sources/{program}"
        flags: set[str] = set()
        # The services also take the flags ContextBusServer parses for every service (OperationsOptions,
        # ServerAccessOptions).
        shared = [ROOT / "Sources/BusProtocol/Server/Service"] if program in ("storesvc", "devicesvc") else []
        for directory in [sources, *shared]:
            for file in directory.rglob("*.swift"):
                flags.update(re.findall(r'"(--[a-z][a-z0-9-]*)"', file.read_text()))
        return flags, f"the flags parsed in Sources/{program}"


FLAGS = Flags()


def newest_source() -> float:
    """The modification time of the newest Swift file under Sources/ (or Package.swift)."""
    times = [path.stat().st_mtime for path in (ROOT / "Sources").rglob("*.swift")]
    return max(times + [(ROOT / "Package.swift").stat().st_mtime])


def check_arguments(where: str, argv: list[str], program: str | None = None) -> None:
    """Checks that every --flag in argv is one the program (argv[0], or `program`) accepts."""
    if not argv:
        return
    name = program or os.path.basename(argv[0])
    if name not in OUR_BINARIES and name != "bluez-sim":
        return
    accepted, source = FLAGS.of(name)
    arguments = argv if program else argv[1:]
    for argument in arguments:
        if argument.startswith("--"):
            flag = argument.split("=", 1)[0]
            if flag not in accepted:
                problem(f"{where}: {name} has no flag {flag} (not in {source})")


def option_value(argv: list[str], flag: str) -> str | None:
    for index, argument in enumerate(argv):
        if argument == flag and index + 1 < len(argv):
            return argv[index + 1]
        if argument.startswith(flag + "="):
            return argument.split("=", 1)[1]
    return None


# MARK: - Package.swift


def package_products() -> set[str]:
    text = (ROOT / "Package.swift").read_text()
    return set(re.findall(r'\.(?:executable|library)\(\s*name:\s*"([^"]+)"', text))


def package_directories() -> set[str]:
    """The top-level directories holding the targets Package.swift declares."""
    text = (ROOT / "Package.swift").read_text()
    directories: set[str] = set()
    for kind, body in re.findall(r"\.(systemLibrary|target|executableTarget|testTarget)\(([^)]*)\)", text):
        name = re.search(r'name:\s*"([^"]+)"', body)
        path = re.search(r'path:\s*"([^"]+)"', body)
        if path:
            directories.add(path.group(1).split("/")[0])
        elif name:
            directories.add("Tests" if kind == "testTarget" else "Sources")
    return directories


# MARK: - Dockerfile


class Dockerfile:
    """The instructions of a Dockerfile, continuation lines joined, with what the checks need."""

    def __init__(self, path: Path, context: Path) -> None:
        self.path = path
        self.context = context
        self.instructions: list[tuple[int, str, str]] = []  # (line, keyword, rest)
        self.stages: list[str] = []
        self.copies: list[tuple[str, str, str]] = []  # (stage, source relative to the context, destination)
        self._parse()

    def _parse(self) -> None:
        pending, start = "", 0
        for number, line in enumerate(self.path.read_text().splitlines(), 1):
            stripped = line.strip()
            if not pending and (not stripped or stripped.startswith("#")):
                continue
            if not pending:
                start = number
            if stripped.endswith("\\"):
                pending += stripped[:-1] + " "
                continue
            pending += stripped
            keyword, _, rest = pending.partition(" ")
            self.instructions.append((start, keyword.upper(), rest.strip()))
            pending = ""
        stage = ""
        for line, keyword, rest in self.instructions:
            if keyword == "FROM":
                match = re.search(r"\s+AS\s+(\S+)\s*$", rest, re.IGNORECASE)
                stage = match.group(1) if match else str(len(self.stages))
                self.stages.append(stage)
            elif keyword in ("COPY", "ADD"):
                words = shlex.split(rest)
                if any(word.startswith("--from=") for word in words):
                    source = next(word.split("=", 1)[1] for word in words if word.startswith("--from="))
                    if source not in self.stages:
                        problem(f"{self.where(line)}: COPY --from={source} names no earlier stage")
                    continue
                words = [word for word in words if not word.startswith("--")]
                if words and words[0].startswith("["):
                    words = json.loads(rest[rest.index("[") :])
                *sources, destination = words
                for source in sources:
                    self.copies.append((stage, source, destination))

    def where(self, line: int) -> str:
        return f"{relative(self.path)}:{line}"

    def image_path_in_repository(self, image_path: str) -> Path | None:
        """The repository file a COPY put at image_path, if any."""
        for _, source, destination in self.copies:
            destination = destination.rstrip("/")
            if image_path == destination:
                return self.context / source
            if image_path.startswith(destination + "/"):
                tail = image_path[len(destination) + 1 :]
                candidate = self.context / source / tail
                if (self.context / source).is_dir():
                    return candidate
        return None

    def check(self) -> None:
        ignored = dockerignore_patterns(self.context)
        for stage, source, destination in self.copies:
            matches = glob.glob(str(self.context / source))
            if not matches:
                problem(f"{relative(self.path)}: COPY source {source} (stage {stage}) does not exist")
            for pattern in ignored:
                if fnmatch.fnmatch(source.rstrip("/"), pattern) or source.startswith(pattern.rstrip("/") + "/"):
                    problem(f"{relative(self.path)}: COPY source {source} is excluded by .dockerignore ({pattern})")
        build_stage = self.stages[0] if self.stages else ""
        copied = {source.split("/")[0] for stage, source, _ in self.copies if stage == build_stage}
        for directory in sorted(package_directories()):
            if directory not in copied:
                problem(f"{relative(self.path)}: stage {build_stage} builds the package but does not COPY "
                        f"{directory}/, which Package.swift names")
        products = package_products()
        for line, keyword, rest in self.instructions:
            if keyword == "RUN":
                for product in re.findall(r"--product\s+(\S+)", rest):
                    for name in re.findall(r"[A-Za-z_][A-Za-z0-9_-]*", product.replace('"$product"', "")):
                        if name != "product" and name not in products:
                            problem(f"{self.where(line)}: swift build --product {name}: no such product")
                loop = re.search(r"for product in ([^;]+);", rest)
                if loop:
                    for name in loop.group(1).split():
                        if name not in products:
                            problem(f"{self.where(line)}: product {name} is not in Package.swift")
                self.check_image_paths(line, rest)
            elif keyword in ("CMD", "ENTRYPOINT"):
                if not rest.startswith("["):
                    problem(f"{self.where(line)}: {keyword} should be a JSON array (exec form) so signals reach it")
                    continue
                argv = json.loads(rest)
                check_arguments(self.where(line), argv)
                self.check_image_paths(line, " ".join(argv))
            elif keyword == "FROM":
                pass

    def check_image_paths(self, line: int, text: str) -> None:
        """Paths under /opt/contextbus that a RUN, CMD or ENTRYPOINT names must come from the repository."""
        for image_path in re.findall(r"/opt/contextbus/[A-Za-z0-9_./-]+", text):
            repository_path = self.image_path_in_repository(image_path)
            if repository_path is None:
                problem(f"{self.where(line)}: {image_path} is not put there by any COPY")
            elif not repository_path.exists():
                problem(f"{self.where(line)}: {image_path} comes from {relative(repository_path)}, which does not exist")
            elif repository_path.is_file() and not os.access(repository_path, os.X_OK) and (
                re.search(re.escape(image_path) + r"(\s|$)", text) and not image_path.endswith((".py", ".txt"))
            ):
                problem(f"{self.where(line)}: {relative(repository_path)} is run but is not executable")
            if repository_path is not None and repository_path.name == "bluez-sim":
                after = text.split(image_path, 1)[1].split("&&")[0].split()
                check_arguments(self.where(line), after, program="bluez-sim")

    def entrypoint(self, target: str | None) -> list[str]:
        """The ENTRYPOINT of the target stage (inherited from the stage it is built FROM)."""
        chain: dict[str, str | None] = {}
        entry: dict[str, list[str]] = {}
        stage = ""
        for _, keyword, rest in self.instructions:
            if keyword == "FROM":
                match = re.search(r"\s+AS\s+(\S+)\s*$", rest, re.IGNORECASE)
                stage = match.group(1) if match else stage
                base = rest.split()[0]
                chain[stage] = base if base in chain else None
            elif keyword == "ENTRYPOINT" and rest.startswith("["):
                entry[stage] = json.loads(rest)
        stage_name = target or (self.stages[-1] if self.stages else "")
        while stage_name:
            if stage_name in entry:
                return entry[stage_name]
            stage_name = chain.get(stage_name)
        return []


def dockerignore_patterns(context: Path) -> list[str]:
    path = context / ".dockerignore"
    if not path.is_file():
        return []
    return [line.strip() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


# MARK: - Compose


def compose_variants() -> list[tuple[list[Path], list[str]]]:
    """The base file alone and with each override in compose/, each without and with every profile."""
    overrides = sorted(path for path in (ROOT / "compose").glob("*.yml") if path != COMPOSE)
    try:
        services = (yaml.safe_load(COMPOSE.read_text()) or {}).get("services") or {}
    except yaml.YAMLError:
        services = {}  # docker-compose config reports it
    profiles = sorted({profile for service in services.values() if isinstance(service, dict)
                       for profile in service.get("profiles", [])})
    variants = []
    for files in [[COMPOSE]] + [[COMPOSE, override] for override in overrides]:
        variants.append((files, []))
        for profile in profiles:
            variants.append((files, [profile]))
    return variants


def check_compose() -> None:
    if not COMPOSE.is_file():
        problem("compose/docker-compose.yml is missing")
        return
    # Interpolation must not depend on the caller's environment.
    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith(("CTXBUS_", "BLUEZ_SIM_", "COMPOSE_"))}
    dockerfiles: dict[Path, Dockerfile] = {}
    for files, profiles in compose_variants():
        command = ["docker-compose"] + [arg for file in files for arg in ("-f", str(file))]
        command += [arg for profile in profiles for arg in ("--profile", profile)]
        label = " ".join(["docker-compose"] + [f"-f {relative(file)}" for file in files]
                         + [f"--profile {profile}" for profile in profiles])
        quiet = subprocess.run(command + ["config", "-q"], capture_output=True, text=True, cwd=ROOT, env=environment)
        if quiet.returncode != 0:
            problem(f"{label} config -q failed: {(quiet.stderr or quiet.stdout).strip()}")
            continue
        rendered = subprocess.run(command + ["config"], capture_output=True, text=True, cwd=ROOT, env=environment)
        config = yaml.safe_load(rendered.stdout)
        services = config.get("services", {})
        if profiles and not any(profile in service.get("profiles", []) for service in services.values()
                                for profile in profiles):
            problem(f"{label}: the profile enables no service")
        for name, service in services.items():
            check_service(label, name, service, config, dockerfiles)
        check_wiring(label, services)
    for dockerfile in dockerfiles.values():
        dockerfile.check()


def check_service(label: str, name: str, service: dict, config: dict, dockerfiles: dict[Path, Dockerfile]) -> None:
    where = f"{label}: service {name}"
    dockerfile = None
    build = service.get("build")
    if build:
        context = Path(build["context"])
        if not context.is_dir():
            problem(f"{where}: build context {context} does not exist")
            return
        path = context / build.get("dockerfile", "Dockerfile")
        if not path.is_file():
            problem(f"{where}: Dockerfile {relative(path)} does not exist")
            return
        dockerfile = dockerfiles.setdefault(path, Dockerfile(path, context))
        target = build.get("target")
        if target and target not in dockerfile.stages:
            problem(f"{where}: build target {target} is not a stage of {relative(path)}")
    command = service.get("command") or []
    if isinstance(command, str):
        command = shlex.split(command)
    entrypoint = service.get("entrypoint") or (dockerfile.entrypoint(build.get("target")) if dockerfile else [])
    if entrypoint:
        if dockerfile:
            repository_path = dockerfile.image_path_in_repository(entrypoint[0])
            if repository_path is not None and repository_path.name == "bluez-sim-entrypoint.sh":
                check_arguments(where, command, program="bluez-sim")
    else:
        check_arguments(where, command)
    mounted = set()
    for volume in service.get("volumes", []):
        if isinstance(volume, str):
            parts = volume.split(":")
            source, target = (parts[0], parts[1]) if len(parts) > 1 else (None, parts[0])
            kind = "bind" if source and source.startswith(("/", ".")) else "volume"
        else:
            source, target, kind = volume.get("source"), volume["target"], volume.get("type", "volume")
        mounted.add(target)
        if kind == "bind" and source:
            source_path = Path(source)
            if ROOT in source_path.parents or source_path == ROOT:
                if not source_path.exists():
                    problem(f"{where}: bind mount source {relative(source_path)} does not exist in the repository")
        elif kind == "volume" and source and source not in (config.get("volumes") or {}):
            problem(f"{where}: volume {source} is not declared under volumes:")
    bus = (service.get("environment") or {}).get("DBUS_SYSTEM_BUS_ADDRESS")
    if bus:
        if not bus.startswith("unix:path="):
            problem(f"{where}: DBUS_SYSTEM_BUS_ADDRESS {bus} is not a unix:path= address")
        elif not any(bus[len("unix:path="):].startswith(target.rstrip("/") + "/") for target in mounted):
            problem(f"{where}: the bus socket {bus} is on no mounted volume")
    health = (service.get("healthcheck") or {}).get("test") or []
    for argument in health:
        if argument.startswith("/run/") and not any(argument.startswith(t.rstrip("/") + "/") for t in mounted):
            problem(f"{where}: the healthcheck's {argument} is on no mounted volume")
    if health[:1] in (["CMD"], ["CMD-SHELL"]) and len(health) > 1 and health[1] == "ctxbus":
        check_ctxbus_command(f"{where}: healthcheck", health[1:])


def check_ctxbus_command(where: str, argv: list[str]) -> None:
    """Runs a ctxbus command line (a healthcheck's) with the built ctxbus against sockets that do not exist here:
    exit 3 (not reachable) means ctxbus took the command line, 64 that it did not."""
    binary = next((ROOT / ".build" / build / "ctxbus" for build in ("debug", "release")
                   if (ROOT / ".build" / build / "ctxbus").is_file()), None)
    if binary is None:
        print(f"check-deploy: {where}: ctxbus is not built; its command line is not checked")
        return
    with tempfile.TemporaryDirectory() as scratch:
        arguments = [scratch + "/none.sock" if argument.startswith("/run/") else argument for argument in argv[1:]]
        environment = dict(os.environ, CTXBUS_RUNTIME_DIR=scratch)
        run = subprocess.run([str(binary), *arguments], capture_output=True, text=True, timeout=60, env=environment)
    if run.returncode != 3:
        problem(f"{where}: `{' '.join(argv)}` exits {run.returncode}, not 3, without a service: "
                f"{run.stderr.strip()}")


def volume_of(service: dict, path: str) -> str | None:
    """The named volume (or bind source) that holds path in this service."""
    best = None
    for volume in service.get("volumes", []):
        source, target = (volume.split(":")[0], volume.split(":")[1]) if isinstance(volume, str) else (
            volume.get("source"), volume["target"])
        if path.startswith(target.rstrip("/") + "/") and (best is None or len(target) > len(best[1])):
            best = (source, target)
    return best[0] if best else None


def check_wiring(label: str, services: dict) -> None:
    store, device = services.get("storesvc"), services.get("devicesvc")
    if not store or not device:
        problem(f"{label}: services storesvc and devicesvc are both required")
        return
    store_command, device_command = store.get("command") or [], device.get("command") or []
    socket = option_value(store_command, "--socket")
    store_for_device = option_value(device_command, "--store")
    database = option_value(store_command, "--database")
    if not socket or not store_for_device or not database:
        problem(f"{label}: storesvc needs --socket and --database, devicesvc --store (explicit paths on volumes)")
        return
    if socket != store_for_device:
        problem(f"{label}: devicesvc --store {store_for_device} is not storesvc --socket {socket}")
    if volume_of(store, socket) is None or volume_of(store, socket) != volume_of(device, store_for_device):
        problem(f"{label}: storesvc's socket {socket} and devicesvc's --store are not on one shared volume")
    if volume_of(store, database) is None:
        problem(f"{label}: the database {database} is on no volume: it would be lost with the container")


# MARK: - systemd


def unit_values(path: Path) -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith(("#", ";", "[")) and "=" in line:
            key, _, value = line.partition("=")
            values.setdefault(key.strip(), []).append(value.strip())
    return values


def check_systemd() -> None:
    units = sorted(list(SYSTEMD.glob("*.service")) + list(SYSTEMD.glob("*.socket")))
    if not units:
        problem("deploy/systemd has no unit files")
        return
    for unit in units:
        for command in unit_values(unit).get("ExecStart", []):
            argv = shlex.split(command.lstrip("-@:+!"))
            check_arguments(relative(unit), argv)
            if os.path.basename(argv[0]) not in OUR_BINARIES:
                problem(f"{relative(unit)}: ExecStart runs {argv[0]}, not one of {', '.join(OUR_BINARIES)}")
    socket_unit, store_unit = SYSTEMD / "storesvc.socket", SYSTEMD / "storesvc.service"
    if socket_unit.is_file() and store_unit.is_file():
        listen = unit_values(socket_unit).get("ListenStream", [""])[0]
        store_argv = shlex.split(unit_values(store_unit).get("ExecStart", [""])[0])
        if option_value(store_argv, "--socket") != listen:
            problem(f"deploy/systemd: storesvc.socket listens on {listen} but storesvc.service says "
                    f"--socket {option_value(store_argv, '--socket')}")
        device_unit = SYSTEMD / "devicesvc.service"
        if device_unit.is_file():
            device_argv = shlex.split(unit_values(device_unit).get("ExecStart", [""])[0])
            if option_value(device_argv, "--store") != listen:
                problem(f"deploy/systemd: devicesvc.service --store {option_value(device_argv, '--store')} "
                        f"is not storesvc.socket's {listen}")
        if unit_values(socket_unit).get("SocketUser") != unit_values(store_unit).get("User"):
            problem("deploy/systemd: storesvc.socket's SocketUser is not storesvc.service's User")
    device_socket, device_unit = SYSTEMD / "devicesvc.socket", SYSTEMD / "devicesvc.service"
    if device_socket.is_file() and device_unit.is_file():
        listen = unit_values(device_socket).get("ListenStream", [""])[0]
        device_argv = shlex.split(unit_values(device_unit).get("ExecStart", [""])[0])
        if option_value(device_argv, "--socket") != listen:
            problem(f"deploy/systemd: devicesvc.socket listens on {listen} but devicesvc.service says "
                    f"--socket {option_value(device_argv, '--socket')}")
        if unit_values(device_socket).get("SocketUser") != unit_values(device_unit).get("User"):
            problem("deploy/systemd: devicesvc.socket's SocketUser is not devicesvc.service's User")
    for service in SYSTEMD.glob("*.service"):
        values = unit_values(service)
        if values.get("Type") != ["notify"] or not values.get("WatchdogSec"):
            problem(f"{relative(service)}: not Type=notify with a WatchdogSec= (the services notify and pet it)")
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        print("check-deploy: systemd-analyze not found; unit files checked for flags and paths only")
    else:
        with tempfile.TemporaryDirectory() as scratch:
            # verify insists that ExecStart's binary exists: point it at the built one (or /bin/true).
            copies = []
            for unit in units:
                text = unit.read_text()
                for program in OUR_BINARIES:
                    built = next((ROOT / ".build" / build / program for build in ("debug", "release")
                                  if (ROOT / ".build" / build / program).is_file()), Path("/bin/true"))
                    text = text.replace(f"/usr/local/bin/{program} ", f"{built} ")
                copy = Path(scratch) / unit.name
                copy.write_text(text)
                copies.append(str(copy))
            run = subprocess.run([analyze, "verify", *copies], capture_output=True, text=True)
            output = (run.stdout + run.stderr).strip()
            if run.returncode != 0 or output:
                problem(f"systemd-analyze verify deploy/systemd: {output.replace(scratch + '/', '')}")
            check_exposure(analyze, [copy for copy in copies if copy.endswith(".service")])
    sysusers, tmpfiles = shutil.which("systemd-sysusers"), shutil.which("systemd-tmpfiles")
    users, directories = SYSTEMD / "contextbus.sysusers.conf", SYSTEMD / "contextbus.tmpfiles.conf"
    for path in (users, directories):
        if not path.is_file():
            problem(f"{relative(path)} is missing")
            return
    if sysusers and tmpfiles:
        with tempfile.TemporaryDirectory() as scratch:
            (Path(scratch) / "etc").mkdir()
            run = subprocess.run([sysusers, f"--root={scratch}", str(users)], capture_output=True, text=True)
            passwd = Path(scratch, "etc", "passwd")
            if run.returncode != 0 or not passwd.is_file() or "contextbus:" not in passwd.read_text():
                problem(f"systemd-sysusers {relative(users)} did not create contextbus: {run.stderr.strip()}")
            run = subprocess.run([tmpfiles, f"--root={scratch}", "--create", str(directories)],
                                 capture_output=True, text=True)
            for directory in ("run/ctxbus", "var/lib/ctxbus"):
                if run.returncode != 0 or not Path(scratch, directory).is_dir():
                    problem(f"systemd-tmpfiles {relative(directories)} did not create /{directory}: "
                            f"{run.stderr.strip()}")


# systemd-analyze security's levels, best first (src/analyze/analyze-security.c): the units must be OK or better.
ACCEPTED_EXPOSURE = ("PERFECT", "SAFE", "OK")


def check_exposure(analyze: str, services: list[str]) -> None:
    """Prints `systemd-analyze security --offline=yes`'s exposure score of each service unit; one worse than OK is a
    problem. Skipped, with a note, where systemd-analyze cannot review a unit file offline (systemd before 250)."""
    for service in services:
        name = os.path.basename(service)
        run = subprocess.run([analyze, "security", "--offline=yes", "--no-pager", service],
                             capture_output=True, text=True)
        match = re.search(r"Overall exposure level for \S+: ([0-9.]+) (\w+)", run.stdout + run.stderr)
        if match is None:
            print(f"check-deploy: systemd-analyze security cannot review {name} offline here; exposure not checked")
            continue
        score, level = match.group(1), match.group(2)
        print(f"check-deploy: systemd-analyze security {name}: exposure {score} {level}")
        if level not in ACCEPTED_EXPOSURE:
            problem(f"deploy/systemd/{name}: exposure {score} {level}, worse than OK")


def main() -> int:
    check_compose()
    check_systemd()
    if problems:
        for line in problems:
            print(f"check-deploy: {line}", file=sys.stderr)
        print(f"check-deploy: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print("check-deploy: compose (every profile and override), Dockerfile and systemd units are valid")
    return 0


if __name__ == "__main__":
    sys.exit(main())
