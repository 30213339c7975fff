"""Issue 13, point 8: ``skill-eval run --executor ray[=ADDRESS]`` against a real Ray.

Every Ray here runs inside a network namespace holding only loopback (made by
the test with ``unshare --net``; root, as in CI), so nothing it binds can be
reached from elsewhere. The module's cluster (``ray start --head``, shared by
the tests that connect to an address) and every driver run inside it; the
namespace's holder kills whatever still runs in it when the module ends, and
the teardown checks that no process is left in the namespace. Agents are real
subprocesses that log their own starts (tests/evals/agents/probe_agent.py):
the ground truth the records are compared with.

The module is skipped when Ray is not installed (or the machine cannot make a
network namespace) unless ``SKILL_EVAL_REQUIRE_RAY=1``, where that is a
failure. The test of the missing-extra message runs everywhere.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from skill_eval.evals.records import count_starts

from evals_helpers import AGENTS, PYTHON, SUITE, Suite, agent_command

PROBE = "euphemized-coverage"
REQUIRED = os.environ.get("SKILL_EVAL_REQUIRE_RAY") == "1"
RAY_INSTALLED = importlib.util.find_spec("ray") is not None
HEAD_PORT = 6379
"""The head's port (Ray's default): free, since the namespace is new."""
CLI_CODE = "import sys; from skill_eval.cli import main; sys.exit(main())"


def _why_not() -> str | None:
    """Why Ray tests cannot run here, or ``None``."""
    if not RAY_INSTALLED:
        return "ray is not installed (pip install -e '.[ray]')"
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "making a network namespace needs root"
    for tool in ("unshare", "nsenter", "ip"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (apt-get install util-linux iproute2)"
    return None


WHY_NOT = _why_not()
needs_ray = pytest.mark.skipif(WHY_NOT is not None and not REQUIRED, reason=f"Ray tests: {WHY_NOT}")


def _require() -> None:
    if WHY_NOT is not None:
        pytest.fail(f"SKILL_EVAL_REQUIRE_RAY=1 but the Ray tests cannot run: {WHY_NOT}")


# -- the network namespace ------------------------------------------------------------

HOLDER = r"""
import os, signal, subprocess, sys, time
# -- a network namespace's holder: lo up, then wait until the test closes stdin (or dies),
#    then end every process left in the namespace
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
for command in sys.argv[1:]:
    subprocess.run(command.split(), check=True)
me = os.getpid()
mine = os.readlink("/proc/self/ns/net")
print(mine, flush=True)
try:
    sys.stdin.read()
except BaseException:
    pass
def others():
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != me:
            try:
                if os.readlink(f"/proc/{name}/ns/net") == mine:
                    found.append(int(name))
            except OSError:
                pass
    return found
for sig, rounds in ((signal.SIGTERM, 50), (signal.SIGKILL, 100)):
    for _ in range(rounds):
        left = others()
        if not left:
            break
        for pid in left:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        time.sleep(0.1)
"""


class Namespace:
    """A network namespace with only ``lo`` (plus ``setup`` commands), held by a
    process of the test; :meth:`close` ends everything left in it."""

    def __init__(self, *setup: str) -> None:
        self.holder = subprocess.Popen(["unshare", "--net", "--", PYTHON, "-c", HOLDER, *setup],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.inode = self.holder.stdout.readline().strip()
        if not self.inode.startswith("net:"):
            self.holder.kill()
            raise RuntimeError("could not make a network namespace")

    def command(self, argv: list[str]) -> list[str]:
        """``argv`` run inside the namespace (``nsenter`` execs it: same pid)."""
        return ["nsenter", f"--net=/proc/{self.holder.pid}/ns/net", "--", *argv]

    def processes(self) -> list[int]:
        return processes_in(self.inode, exclude=self.holder.pid)

    def close(self) -> list[int]:
        """End the namespace; the processes still in it afterwards (should be none)."""
        if self.holder.poll() is None:
            self.holder.stdin.close()
            self.holder.wait(timeout=60)
        wait_for(lambda: not processes_in(self.inode), timeout=10)
        return processes_in(self.inode)


def processes_in(inode: str, exclude: int | None = None) -> list[int]:
    """Pids of the processes (not zombies) in the network namespace ``inode``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == exclude:
            continue
        try:
            if os.readlink(f"/proc/{name}/ns/net") == inode and alive(int(name)):
                found.append(int(name))
        except OSError:
            pass
    return found


def listening(pid: int) -> list[str]:
    """The local addresses of the TCP sockets listening in ``pid``'s network
    namespace, as ``ADDRESS:PORT`` (from /proc, so without any tool)."""
    found = []
    for name, width in (("tcp", 8), ("tcp6", 32)):
        try:
            lines = Path(f"/proc/{pid}/net/{name}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] != "0A":  # LISTEN
                continue
            address, port = fields[1].split(":")
            raw = bytes.fromhex(address)
            words = [raw[i:i + 4][::-1] for i in range(0, len(raw), 4)]  # /proc prints host-order words
            data = b"".join(words)
            if width == 8:
                text = ".".join(str(b) for b in data)
            elif data[:12] == b"\0" * 10 + b"\xff\xff":
                text = "::ffff:" + ".".join(str(b) for b in data[12:])
            else:
                text = ":".join(data[i:i + 2].hex() for i in range(0, 16, 2))
            found.append(f"{text}:{int(port, 16)}")
    return found


def loopback_only(addresses: list[str]) -> list[str]:
    """The addresses of ``addresses`` that are not on loopback."""
    return [a for a in addresses if not re.match(r"^(127\.\d+\.\d+\.\d+|::ffff:127\.\d+\.\d+\.\d+|0{4}(:0{4}){6}:0001):\d+$", a)]


# -- helpers --------------------------------------------------------------------------


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def wait_for(predicate, timeout=60.0, step=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def logged(log: Path, kind: str = "start") -> list[tuple[int, str]]:
    if not log.exists():
        return []
    lines = [line.split() for line in log.read_text().splitlines() if line.strip()]
    return [(int(pid), start_id) for pid, start_id, what in lines if what == kind]


def parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
        return int(handle.read().rsplit(")", 1)[1].split()[1])


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def ray_env(home: Path) -> dict[str, str]:
    """The environment of the cluster and the drivers: a home of their own (Ray
    keeps tokens under ~/.ray) and no usage statistics."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update(HOME=str(home), RAY_USAGE_STATS_ENABLED="0", PYTHONUNBUFFERED="1")
    return env


def new_suite(tmp_path: Path, name: str = "ws") -> Suite:
    root = tmp_path / name
    shutil.copytree(SUITE, root)
    return Suite(root)


class Cluster:
    """A Ray head started with ``ray start`` inside a loopback-only namespace."""

    def __init__(self, folder: Path, multi_node: bool = False) -> None:
        self.folder = folder
        self.home = folder / "home"
        self.home.mkdir(parents=True)
        self.multi_node = multi_node
        # Ray turns 127.0.0.1 into "the address that routes outside" unless in single-machine mode,
        # which refuses a second node: for several nodes, the namespace routes everything to lo,
        # so that this address is 127.0.0.1 too
        self.namespace = Namespace("ip route add default dev lo") if multi_node else Namespace()
        self.address = ""
        self.started_in = 0.0
        self.temp: Path | None = None
        base = "/dev/shm" if os.access("/dev/shm", os.W_OK | os.X_OK) else None
        self.scratch = Path(tempfile.mkdtemp(prefix="se-test-ray-scratch-", dir=base))
        """The workers' SKILL_EVAL_SCRATCH (they take the environment of ``ray start``, not the driver's)."""

    def ray_cli(self, *args: str) -> subprocess.CompletedProcess:
        ray = Path(PYTHON).with_name("ray")
        argv = [str(ray)] if ray.exists() else [PYTHON, "-c", "from ray.scripts.scripts import main; main()"]
        env = ray_env(self.home)
        env["SKILL_EVAL_SCRATCH"] = str(self.scratch)
        if not self.multi_node:
            env["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # keep the node address 127.0.0.1 (see ray_executor)
        result = subprocess.run(self.namespace.command(argv + list(args)), env=env, capture_output=True, text=True,
                                timeout=180)
        assert result.returncode == 0, result.stdout + result.stderr
        return result

    def start(self, cpus: int = 4) -> None:
        """The head node (with ``cpus`` CPUs for tasks)."""
        self.temp = Path(tempfile.mkdtemp(prefix="se-ray-", dir="/tmp"))  # AF_UNIX paths: 107 bytes at most
        clock = time.monotonic()
        self.ray_cli("start", "--head", "--node-ip-address=127.0.0.1", f"--port={HEAD_PORT}", f"--num-cpus={cpus}",
                     "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={self.temp}")
        self.started_in = time.monotonic() - clock
        self.address = f"127.0.0.1:{HEAD_PORT}"

    def add_node(self, cpus: int) -> None:
        """Another node of the cluster (its own raylet and workers, on 127.0.0.1 too)."""
        self.ray_cli("start", f"--address={self.address}", "--node-ip-address=127.0.0.1", f"--num-cpus={cpus}",
                     "--disable-usage-stats")

    def close(self) -> list[int]:
        left = self.namespace.close()
        if self.temp is not None:
            shutil.rmtree(self.temp, ignore_errors=True)
        shutil.rmtree(self.scratch, ignore_errors=True)
        return left

    def driver(self, args: list[str], cwd: Path) -> subprocess.Popen:
        """``skill-eval ARGS`` inside the namespace (a real process; its pid is the driver's)."""
        return subprocess.Popen(self.namespace.command([PYTHON, "-c", CLI_CODE, *args]), cwd=cwd,
                                env=ray_env(self.home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def run(self, args: list[str], cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess:
        process = self.driver(args, cwd)
        out, err = process.communicate(timeout=timeout)
        return subprocess.CompletedProcess(process.args, process.returncode, out, err)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """One Ray cluster for the module (Ray takes seconds to start), stopped after:
    the teardown fails if any process is left in its namespace."""
    if REQUIRED:
        _require()
    if WHY_NOT is not None:
        pytest.skip(WHY_NOT)
    cluster = Cluster(tmp_path_factory.mktemp("ray-cluster"))
    try:
        cluster.start()
        print(f"ray start took {cluster.started_in:.1f} s", file=sys.stderr)
        yield cluster
    finally:
        left = cluster.close()
        assert left == [], f"processes survived the Ray cluster: {[command_line(p) for p in left]}"


def ray_run(suite: Suite, cluster: Cluster, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return cluster.run(["run", *args, "--no-progress", "--executor", f"ray={cluster.address}"], cwd=suite.root,
                       timeout=timeout)


# -- without the extra ---------------------------------------------------------------


def test_without_ray_the_ray_executor_exits_2_with_the_install_line(suite, tmp_path):
    log = tmp_path / "agent.log"
    suite.configure({"a": {"command": agent_command("probe_agent.py", "--log", str(log))}})
    no_ray = "import sys; sys.modules['ray'] = None; from skill_eval.cli import main; sys.exit(main())"
    for option in ("ray", "ray=127.0.0.1:6379"):
        result = subprocess.run([PYTHON, "-c", no_ray, "run", str(suite.root), "--no-progress", "--executor", option],
                                cwd=suite.root, capture_output=True, text=True, timeout=120)
        assert result.returncode == 2, result.stderr
        assert "pip install 'skill-eval[ray]'" in result.stderr and "Traceback" not in result.stderr
    result = subprocess.run([PYTHON, "-c", CLI_CODE, "run", str(suite.root), "--executor", "dask"],
                            cwd=suite.root, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "use local, ray" in result.stderr, result.stderr
    assert not log.exists() and suite.files() == []


# -- the same records as the local executor ----------------------------------------------

VOLATILE = {
    "plan": ("plan_id", "created", "runner"),
    "start": ("start_id", "started", "plan_id", "runner"),
    "outcome": ("start_id", "ended", "duration_s", "answer_file", "output_file"),
}


def normalized(suite: Suite) -> list[str]:
    """The suite's records without what differs between any two runs (ids,
    times, the runner's pid), each start joined with its outcome and answer;
    sorted, as JSON."""
    lines = suite.lines()
    outcomes = {line["start_id"]: line for line in lines if line["type"] == "outcome"}
    items = []
    for line in lines:
        if line["type"] == "outcome":
            continue
        item = {k: v for k, v in line.items() if k not in VOLATILE[line["type"]]}
        if line["type"] == "plan":
            item["starts"] = sorted(line["starts"])
        else:
            outcome = outcomes.get(line["start_id"], {})
            item["outcome"] = {k: v for k, v in outcome.items() if k not in VOLATILE["outcome"]}
            if "answer_file" in outcome:
                item["outcome"]["answer"] = (suite.runs / outcome["answer_file"]).read_text()
        items.append(json.dumps(item, sort_keys=True))
    return sorted(items)


@needs_ray
def test_the_ray_executor_writes_the_records_the_local_executor_writes(cluster, tmp_path):
    local, remote = new_suite(tmp_path, "local"), new_suite(tmp_path, "ray")
    for suite in (local, remote):
        suite.configure({
            "rule": {"command": agent_command("rule_agent.py", "--prompt-file", "{prompt_file}"),
                     "treatment": "args", "treatment-args": ["--skill-dir", "{skill_dir}"]},
            "crash": {"command": agent_command("crash_agent.py")},
            "big": {"command": agent_command("probe_agent.py", "--out-bytes", "3000", "--err-bytes", "5000"),
                    "max-output": 2000},
            # a harness preset (a stand-in harness of ours): the skill installed on the worker, output parsed there
            "harness": {"preset": "codex", "executable": str(AGENTS / "fake_harness.py"), "model": "m1",
                        "env": {"FAKE_HARNESS": "codex"}},
        })
    from skill_eval.evals.cli import run_main

    def plans(suite: Suite) -> list[list[str]]:
        return [[str(suite.root), "--agent", "rule", "--reps", "2"],
                [str(suite.probe(PROBE)), "--agent", "crash", "--reps", "1", "--arms", "control"],
                [str(suite.probe(PROBE)), "--agent", "big", "--reps", "1", "--arms", "treatment"],
                [str(suite.probe(PROBE)), "--agent", "harness", "--reps", "1"]]

    for here, there in zip(plans(local), plans(remote)):
        assert run_main([*here, "--no-progress"]) in (0, 1)
        result = ray_run(remote, cluster, *there)
        own_lines = [line.split("its stderr ends:")[0] for line in result.stderr.splitlines()]  # the agent's own stderr is quoted there
        assert result.returncode in (0, 1) and not any("Traceback" in line for line in own_lines), result.stderr
    records = remote.all_records()
    assert len(records) == 8 + 1 + 1 + 2
    statuses = sorted({(r["agent"], r["status"]) for r in records})
    assert statuses == [("big", "ok"), ("crash", "error"), ("harness", "ok"), ("rule", "ok")]
    harness = {r["arm"]: r for r in records if r["agent"] == "harness"}
    assert harness["treatment"]["passed"] is True and harness["control"]["passed"] is False
    assert harness["treatment"]["tokens_in"] == 1500 and harness["control"]["tokens_in"] == 1000
    assert {r["arm"]: r["passed"] for r in records if r["agent"] == "rule" and r["rep"] == 1 and r["probe"] == PROBE} \
        == {"control": False, "treatment": True}
    assert normalized(remote) == normalized(local)


# -- lost and cancelled tasks ------------------------------------------------------------------


def _configure_sleeper(suite: Suite, log: Path, seconds: float, max_starts: int | None = None) -> None:
    suite.configure({"a": {"command": agent_command("probe_agent.py", "--log", str(log), "--sleep", str(seconds))}},
                    max_starts=max_starts)


@needs_ray
def test_a_killed_ray_worker_is_an_interrupted_start_the_plain_command_resumes(cluster, tmp_path):
    suite, log = new_suite(tmp_path), tmp_path / "agent.log"
    _configure_sleeper(suite, log, 60)
    args = [str(suite.probe(PROBE)), "--arms", "control", "--reps", "1"]
    driver = cluster.driver(["run", *args, "--no-progress", "--executor", f"ray={cluster.address}"], suite.root)
    try:
        assert wait_for(lambda: len(logged(log)) == 1, timeout=120), driver.stderr.read() if driver.poll() else ""
        [(agent, start_id)] = logged(log)
        # ROOT/work; ROOT in the worker's registry's folder, that in the worker's scratch folder
        scratch = Path(os.readlink(f"/proc/{agent}/cwd"))
        worker_folder = scratch.parent.parent.parent
        assert worker_folder.name.startswith("skill-eval-ray-"), scratch
        assert worker_folder.parent == cluster.scratch
        worker = parent(agent)
        assert "ray" in command_line(worker).lower(), command_line(worker)
        os.kill(worker, signal.SIGKILL)
        out, err = driver.communicate(timeout=120)
    finally:
        if driver.poll() is None:
            driver.kill()
    # the agent does not outlive its worker, nor does its scratch (the worker's watchdog), though no
    # other worker has started yet
    assert wait_for(lambda: not alive(agent), timeout=15)
    assert wait_for(lambda: not worker_folder.exists(), timeout=15), list(cluster.scratch.iterdir())
    assert driver.returncode == 1, err
    assert "1 start(s) interrupted; run the same command again to resume them" in err
    [record] = suite.records(PROBE)
    assert record["start_id"] == start_id and record["status"] == "interrupted"
    assert record["error"].startswith("interrupted: the Ray task was lost"), record["error"]
    assert "WorkerCrashedError" in record["error"], record["error"]
    # the plain command resumes it, as a new counted start
    _configure_sleeper(suite, log, 0)
    result = ray_run(suite, cluster, *args)
    assert result.returncode == 0 and "(1 resuming interrupted starts)" in result.stderr, result.stderr
    first, second = suite.records(PROBE)
    assert second["resume_of"] == start_id and second["status"] == "ok"
    assert len(logged(log)) == count_starts(suite.files()) == 2


@needs_ray
def test_ctrl_c_of_the_driver_cancels_its_ray_tasks_as_interrupted_starts(cluster, tmp_path):
    suite, log = new_suite(tmp_path), tmp_path / "agent.log"
    _configure_sleeper(suite, log, 60)
    args = [str(suite.root), "--arms", "control", "--reps", "2", "-j", "2"]
    driver = cluster.driver(["run", *args, "--no-progress", "--executor", f"ray={cluster.address}"], suite.root)
    try:
        assert wait_for(lambda: len(logged(log)) == 2, timeout=120)
        driver.send_signal(signal.SIGINT)
        out, err = driver.communicate(timeout=120)
    finally:
        if driver.poll() is None:
            driver.kill()
    assert driver.returncode == 130, err
    agents = [pid for pid, _id in logged(log)]
    assert wait_for(lambda: not any(alive(pid) for pid in agents), timeout=15)
    # the two started are on record as interrupted starts; the two queued ones never started (not starts)
    records = suite.all_records()
    assert sorted(r["status"] for r in records) == ["interrupted", "interrupted"], (records, err)
    assert {r["start_id"] for r in records} == {start_id for _pid, start_id in logged(log)}
    assert "interrupted: 2 start(s) recorded, 2 never started" in err, err
    assert all(r["error"].startswith("interrupted: the run was cancelled")
               for r in records), records
    _configure_sleeper(suite, log, 0)
    result = ray_run(suite, cluster, *args)
    assert result.returncode == 0 and "4 start(s) to make (2 resuming interrupted starts)" in result.stderr, \
        result.stderr
    assert len(logged(log)) == count_starts(suite.files()) == 6


@needs_ray
def test_a_driver_killed_9_leaves_interrupted_starts_and_no_agent(cluster, tmp_path):
    suite, log = new_suite(tmp_path), tmp_path / "agent.log"
    _configure_sleeper(suite, log, 60)
    args = [str(suite.probe(PROBE)), "--arms", "control", "--reps", "2", "-j", "2"]
    driver = cluster.driver(["run", *args, "--no-progress", "--executor", f"ray={cluster.address}"], suite.root)
    try:
        assert wait_for(lambda: len(logged(log)) == 2, timeout=120)
    finally:
        driver.kill()
        driver.communicate(timeout=60)
    agents = [pid for pid, _id in logged(log)]
    assert wait_for(lambda: not any(alive(pid) for pid in agents), timeout=30), \
        [command_line(pid) for pid in agents if alive(pid)]
    records = suite.records(PROBE)
    assert sorted(r["status"] for r in records) == ["interrupted", "interrupted"]
    _configure_sleeper(suite, log, 0)
    result = ray_run(suite, cluster, *args)
    assert result.returncode == 0 and "(2 resuming interrupted starts)" in result.stderr, result.stderr
    assert len(logged(log)) == count_starts(suite.files()) == 4


# -- one budget across drivers --------------------------------------------------------------


@needs_ray
def test_two_ray_drivers_at_once_never_pass_the_cap(cluster, tmp_path):
    suite, log = new_suite(tmp_path), tmp_path / "agent.log"
    _configure_sleeper(suite, log, 1, max_starts=6)
    drivers = [cluster.driver(["run", str(suite.probe(name)), "--reps", "2", "--no-progress",
                               "--executor", f"ray={cluster.address}"], suite.root)
               for name in (PROBE, "two-gaps")]
    results = []
    for driver in drivers:
        out, err = driver.communicate(timeout=180)
        results.append((driver.returncode, err))
    assert sorted(code for code, _err in results) == [0, 1], results
    refused = next(err for code, err in results if code == 1)
    assert "refused: the plan needs 4 start(s) but only 2" in refused and "max-starts = 6" in refused
    assert len(logged(log)) == count_starts(suite.files()) == 4


@needs_ray
def test_two_ray_drivers_on_the_same_probes_run_each_start_once(cluster, tmp_path):
    suite, log = new_suite(tmp_path), tmp_path / "agent.log"
    _configure_sleeper(suite, log, 1, max_starts=8)
    args = ["run", str(suite.root), "--reps", "2", "--no-progress", "--executor", f"ray={cluster.address}"]
    drivers = [cluster.driver(args, suite.root) for _ in range(2)]
    errors = [driver.communicate(timeout=180)[1] for driver in drivers]
    results = [(driver.returncode, err) for driver, err in zip(drivers, errors)]
    assert {code for code, _err in results} == {0}, results
    keys = [(r["probe"], r["arm"], r["rep"]) for r in suite.all_records()]
    assert len(keys) == 8 and len(set(keys)) == 8
    assert len(logged(log)) == count_starts(suite.files()) == 8


# -- a Ray of its own, on loopback only -----------------------------------------------------


@needs_ray
def test_without_an_address_the_run_starts_a_loopback_only_ray_and_stops_it(tmp_path):
    if REQUIRED:
        _require()
    suite, log = new_suite(tmp_path), tmp_path / "agent.log"
    _configure_sleeper(suite, log, 3)
    home = tmp_path / "home"
    home.mkdir()
    # a namespace that looks like a machine on a network: besides 127.0.0.1 it has an address
    # (192.0.2.1, TEST-NET-1, on lo) and a default route, so Ray's "which address reaches the
    # outside" lookup finds 192.0.2.1; nothing may listen there
    namespace = Namespace("ip addr add 192.0.2.1/32 dev lo", "ip route add default dev lo src 192.0.2.1")
    try:
        driver = subprocess.Popen(namespace.command(
            [PYTHON, "-c", CLI_CODE, "run", str(suite.root), "--reps", "1", "-j", "2", "--no-progress",
             "--executor", "ray"]), cwd=suite.root, env=ray_env(home), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        try:
            assert wait_for(lambda: len(logged(log)) >= 1, timeout=120)
            agent = logged(log)[0][0]
            sockets = listening(agent)
            out, err = driver.communicate(timeout=180)
        finally:
            if driver.poll() is None:
                driver.kill()
        assert driver.returncode == 0, err
        assert len(sockets) >= 2, sockets  # the Ray of the run was listening (GCS, raylet, ...)
        assert loopback_only(sockets) == [], sockets
        assert "8.8.8.8" not in err, err
        assert len(logged(log)) == count_starts(suite.files()) == 4
        # the run stopped its Ray: nothing is left in the namespace but its holder
        assert wait_for(lambda: namespace.processes() == [], timeout=30), \
            [command_line(pid) for pid in namespace.processes()]
    finally:
        left = namespace.close()
    assert left == [], [command_line(pid) for pid in left]


def start_ray_driver(namespace, suite, home: Path, output: int) -> subprocess.Popen:
    """``skill-eval run`` of :data:`PROBE` (one rep, two jobs) with a Ray of
    its own, started in ``namespace``; its stdout and stderr go to ``output``."""
    return subprocess.Popen(namespace.command(
        [PYTHON, "-c", CLI_CODE, "run", str(suite.probe(PROBE)), "--reps", "1", "-j", "2", "--no-progress",
         "--executor", "ray"]), cwd=suite.root, env=ray_env(home), stdout=output, stderr=output)


@needs_ray
def test_a_driver_with_a_ray_of_its_own_killed_9_leaves_no_process(tmp_path):
    if REQUIRED:
        _require()
    suite, log = new_suite(tmp_path), tmp_path / "agent.log"
    _configure_sleeper(suite, log, 60)
    home = tmp_path / "home"
    home.mkdir()
    namespace = Namespace()
    try:
        driver = start_ray_driver(namespace, suite, home, subprocess.DEVNULL)
        try:
            assert wait_for(lambda: len(logged(log)) == 2, timeout=120)
        finally:
            driver.kill()
            driver.wait(timeout=60)
        # the driver's guard ends its Ray (the workers' watchdogs, the agents): nothing is left
        assert wait_for(lambda: namespace.processes() == [], timeout=30), \
            [command_line(pid) for pid in namespace.processes()]
        assert sorted(r["status"] for r in suite.records(PROBE)) == ["interrupted", "interrupted"]
    finally:
        left = namespace.close()
    assert left == [], [command_line(pid) for pid in left]


@needs_ray
def test_a_lost_node_is_an_interrupted_start(tmp_path):
    """A cluster whose head runs no tasks and one node that runs them; that
    node's raylet is killed while its agents run (the node is lost)."""
    if REQUIRED:
        _require()
    suite, log = new_suite(tmp_path), tmp_path / "agent.log"
    _configure_sleeper(suite, log, 60)
    cluster = Cluster(tmp_path / "lost-node", multi_node=True)
    try:
        cluster.start(cpus=0)
        cluster.add_node(cpus=2)
        args = [str(suite.probe(PROBE)), "--arms", "control", "--reps", "2"]
        driver = cluster.driver(["run", *args, "--no-progress", "--executor", f"ray={cluster.address}"], suite.root)
        try:
            assert wait_for(lambda: len(logged(log)) == 2, timeout=120)
            agents = [pid for pid, _id in logged(log)]
            raylets = {parent(parent(pid)) for pid in agents}
            assert len(raylets) == 1 and "raylet" in command_line(next(iter(raylets))), \
                [command_line(pid) for pid in raylets]
            os.kill(raylets.pop(), signal.SIGKILL)
            out, err = driver.communicate(timeout=180)
        finally:
            if driver.poll() is None:
                driver.kill()
        assert wait_for(lambda: not any(alive(pid) for pid in agents), timeout=30)
        assert driver.returncode == 1, err
        records = suite.records(PROBE)
        assert sorted(r["status"] for r in records) == ["interrupted", "interrupted"], [(r["status"], r.get("error")) for r in records]
        assert all("NodeDiedError" in r["error"] for r in records), records
        assert {r["start_id"] for r in records} == {start_id for _pid, start_id in logged(log)}
        assert "2 start(s) interrupted; run the same command again to resume them" in err
    finally:
        left = cluster.close()
    assert left == [], [command_line(pid) for pid in left]


@needs_ray
def test_a_cluster_out_of_reach_or_without_the_agent_spends_nothing(cluster, tmp_path):
    suite, log = new_suite(tmp_path), tmp_path / "agent.log"
    _configure_sleeper(suite, log, 0)
    result = cluster.run(["run", str(suite.root), "--no-progress", "--executor", "ray=127.0.0.1:1"], suite.root)
    assert result.returncode == 2 and "ray=127.0.0.1:1: nothing answers there" in result.stderr, result.stderr
    # an agent the driver finds (on its PATH) but the cluster's workers do not
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    (bin_folder / "se-test-agent").write_text(f"#!{PYTHON}\n" + (Path(__file__).parent / "agents" / "crash_agent.py")
                                              .read_text())
    (bin_folder / "se-test-agent").chmod(0o755)
    suite.configure({"a": {"command": ["se-test-agent"]}})
    process = subprocess.Popen(cluster.namespace.command([PYTHON, "-c", CLI_CODE, "run", str(suite.root),
                                                          "--no-progress", "--executor", f"ray={cluster.address}"]),
                               cwd=suite.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**ray_env(cluster.home), "PATH": f"{bin_folder}:{os.environ['PATH']}"})
    _out, err = process.communicate(timeout=180)
    assert process.returncode == 2, err
    assert "the agent's executable 'se-test-agent' was not found on the Ray worker" in err and "Traceback" not in err
    assert suite.files() == [] and not log.exists()
