"""The benchmark runner behind `make bench` (`wrk/bench.py` is its entry point), one module per job:

    cli           the command line, the profiles, progress lines
    estimate      the schedule's time per target and phase (--estimate, the progress countdown)
    records       typed records: Settings, Limits, FlyShared, Snapshot, Measurement, RateSpec, WarmUp,
                  StackResult (to_json: its results.json entry), and the constants the phases share
    keys          the dev key types: algorithm, kid, names, the openssl speed algorithm
    cgroups       the server's cgroup (v1 or v2): quota, cpuset, memory limit, what it reads back
    governor      fly's shared-CPU rule: the balance arithmetic and the thread that rewrites the quota
    probes        /proc readings, the sampler, one run's CPU accounting, GC pauses, the start-up probe
    ceilings      OpenSSL's and each stack's own signing ceiling
    loadgen       wrk and oha: one run each, their output read, what fails a run
    latency       every request's latency as a 1 % histogram; a point's runs pooled
    schedule      warm-up, the interleaved sweep, the open-loop points and steps, the capacity range from repeated
                  steps, fly's burst
    verification  the tokens checked against the JWKS, the conformance gate
    environment   the machine, the tools, the libraries and the settings as results.json records them
    summary       the statistics of each stack's runs
    reports       results.md and the charts
    tables        results.md's per-login tables (own cost and hand-offs per login at every load)
    floor         the floor (wrk/floor/), a calibration target, and every stack's ratio to it
    dockerbench   --target docker: the compose stacks in their containers
    argon2        the argon2 profile: argon2id ceiling, logins per core, Keycloak's figure
    runner        each stack prepared, started and stopped; main()

wrk/ stays on sys.path (the modules import `stackctl` from it, as bench.py always did).
"""
