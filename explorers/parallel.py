"""Breadth-first exploration of one transition system by several worker processes.

API (the contract with the CLI; generic: nothing here knows Yu-Gi-Oh!)::

    explore_parallel(
        make_system,            # Callable[[], TransitionSystem], picklable: a top-level function
                                # or functools.partial(top_level_fn, plain-data args...)
        workers,                # int >= 1: worker processes (1 is allowed: useful to compare)
        strategy="bfs",         # only "bfs" (ValueError otherwise: DFS is sequential)
        bounds=Bounds(),        # max_states / max_depth / timeout (see "Bounds" below)
        goals=(),               # goal ids, as explore()
        progress=None,          # a core.Progress, updated by this (parent) process
        stop_on_violation=False,
        measure_memory=False,   # res.visited_bytes: the visited sets of all workers together
        *,
        stop=None,              # Callable[[], str | None], polled between chunks (SIGINT etc.)
        memory_limit=None,      # bytes, for the parent and all workers together (RSS)
        finish=None,            # Callable[[TransitionSystem], Any], picklable: each worker calls
                                # it on its system at the end; the answers are in
                                # res.worker_info (a list, by worker), e.g. to merge not_judged
    ) -> ExploreResult          # the same ExploreResult as core.explore()

Each worker process calls ``make_system()`` once and builds its own engine and system. The
parent builds none: traces come back as action indices (``Violation.trace``, ``res.goals``), so
the caller replays them on its own system (``core.replay_trace``), as after ``explore()``.
A worker that fails to build its system or crashes raises :class:`WorkerError` in the parent
(with the worker's traceback as text). States must be picklable and self-contained (they travel
between worker processes; pickles are only ever exchanged between our own processes).

Not supported (v1): ``record_graph``, ``on_checkpoint`` / ``resume``, ``pack`` / ``unpack`` and
``strategy="dfs"``; the caller runs ``core.explore`` for those.

Results are byte-identical whatever the worker count, and on an exhaustive run identical to
``core.explore(system, "bfs", ...)`` (same states, transitions, stats, violations and traces).
"""
