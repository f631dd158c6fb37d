"""The docker target (--target docker): the compose stacks measured in their containers, one at a time."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

import stackctl
from stackctl import Stack, ToolError

from harness.cli import Progress
from harness.probes import Sampler
from harness.records import Settings, StackResult
from harness.schedule import Live, build_for_run, load_run, sweep
from harness.verification import verify_service


def measure(result: StackResult, url: str, settings: Settings, progress: Progress, sampler: Sampler | None) -> None:
    """One service on its own (the docker target): primer, then per concurrency a warm-up until stable and
    the repeats, into its result; `failed` is set on the first error."""
    live = Live(result.name, url, result, sampler=sampler)
    if settings.primer:
        progress.say(result.name, "primer c=8", settings.primer)
        result.primer = load_run(live, settings, 8, settings.primer, "primer", measured=False)
    order: list = []
    if not live.failed:
        sweep([live], settings, progress, order)
    live.mark("end")


def bench_docker(stacks: list[Stack], settings: Settings, progress: Progress, workdir: Path) -> list[StackResult]:
    """The compose stacks: images from host-built artifacts, containers on their published ports.
    CPU time and RSS of the container's main process (the server itself: the images exec it), plus the
    container's cgroup CPU time and memory (peak, limit). The conformance suite against the containers is
    wrk/docker-ci.sh's job (it needs the suite's issuer/audience); here the verification gates the numbers."""
    import containers
    limits = (settings.limits.cpus, settings.limits.memory_mb) if settings.limits else None
    env = containers.compose_env(containers.readable_key(settings.key_type), limits)
    for var in containers.SUITE_OVERRIDES:  # each container keeps the issuer it is reachable at (docker-compose.yml)
        env.pop(var, None)
    env.update(stackctl.BENCH_ENV)
    issuers = containers.compose_issuers()
    results = [StackResult(s.name, target="docker", failed="no service in docker-compose.yml")
               for s in stacks if s.name not in containers.PORTS]
    try:
        progress.say("docker", "stand-in base images, PostgreSQL")
        containers.standins()
        containers.compose(["up", "-d", "postgres"], env)
        for stack in stacks:
            if stack.name not in containers.PORTS:
                continue
            result = StackResult(stack.name, stack.manifest.get("description", ""), "docker")
            results.append(result)
            url = f"http://127.0.0.1:{containers.PORTS[stack.name]}"
            try:
                build_for_run(stack, settings, progress, result)
                result.artifact_bytes = stack.artifact.stat().st_size
                progress.say(stack.name, "image build")
                result.image_build_s = containers.build_images([stack.name], env, build_artifacts=False)[stack.name]
                result.image_bytes = containers.image_bytes(stack.name)
                progress.say(stack.name, "start container")
                t0 = time.monotonic()
                containers.compose(["up", "-d", "--no-deps", stack.name], env, limited=bool(limits))
                stackctl.wait_http(url + "/health", None, 180)
                result.startup_s = round(time.monotonic() - t0, 3)  # compose up -> /health 200
                cid = containers.container_id(env, stack.name)
                cg = containers.ContainerCgroup(cid)
                reason = verify_service(url, issuers.get(stack.name), settings.key_type)
                if reason:
                    result.failed = f"verification: {reason}"
                    continue
                sampler = Sampler(containers.container_pid(cid), t0)
                sampler.start()
                cpu0 = cg.cpu_seconds()
                try:
                    measure(result, url, settings, progress, sampler)
                finally:
                    sampler.stop()
                cpu1 = cg.cpu_seconds()
                result.samples = sampler.samples
                result.phases = sampler.phases
                result.container = {"cgroup_cpu_s": round(cpu1 - cpu0, 3) if cpu0 is not None and cpu1 is not None
                                    else None, **cg.memory(), "limits": {"cpus": settings.limits.cpus,
                                                                         "memory_mb": settings.limits.memory_mb}}
                if result.container.get("oom_kills"):
                    result.failed = f"OOM-killed in the container (oom_kill={result.container['oom_kills']})"
            except (ToolError, subprocess.TimeoutExpired, OSError) as e:
                result.failed = str(e)
            finally:
                logs = containers.compose(["logs", "--no-color", "--tail", "40", stack.name], env, check=False, quiet=True)
                result.log_tail = (logs.stdout or "")[-2000:]
                containers.compose(["stop", "-t", "15", stack.name], env, check=False, quiet=True)
    finally:
        containers.down(env)
    return results
