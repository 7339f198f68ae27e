"""Stateful differential testing of an engine with Hypothesis (docs/fuzzing.md): the public name
of :mod:`bpcheck.harness.testing`, where the state machine is built."""

from bpcheck.harness.testing import (
    EngineDisagrees,
    EngineFault,
    InvariantViolated,
    MachineFailure,
    engine_state_machine,
    machine_settings,
    run_engine_state_machine,
    strip_paths,
)

__all__ = [
    "EngineDisagrees",
    "EngineFault",
    "InvariantViolated",
    "MachineFailure",
    "engine_state_machine",
    "machine_settings",
    "run_engine_state_machine",
    "strip_paths",
]
