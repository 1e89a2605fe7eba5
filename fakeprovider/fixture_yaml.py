"""A scenario written as a fixture file: YAML that reads like the hand-written corpus.

Defaults are left out, steps are one-line flow mappings (or the bare words done, stall, ...)
and multi-line text is a literal block; :func:`fixture_yaml` round-trips through
:func:`fakeprovider.fixtures.load_fixture` to the same scenario.
"""

from __future__ import annotations

from typing import Any

import yaml
from pydantic import BaseModel

from .scenario import Scenario, StreamAttempt


class _FlowMap(dict[str, Any]):
    """Dumped in YAML flow style (one line): a step's value, as hand-written fixtures do."""


class _FlowList(list[Any]):
    """Dumped in YAML flow style: a list of scalars such as tags."""


class _FixtureDumper(yaml.SafeDumper):
    pass


def _represent_flow_map(dumper: yaml.SafeDumper, value: _FlowMap) -> yaml.Node:
    return dumper.represent_mapping("tag:yaml.org,2002:map", value, flow_style=True)


def _represent_flow_list(dumper: yaml.SafeDumper, value: _FlowList) -> yaml.Node:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=True)


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    # Multi-line text as a literal block; the emitter falls back to quoting where a block
    # is not allowed (inside flow style, trailing spaces, control characters).
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_FixtureDumper.add_representer(_FlowMap, _represent_flow_map)
_FixtureDumper.add_representer(_FlowList, _represent_flow_list)
_FixtureDumper.add_representer(str, _represent_str)


def fixture_yaml(scenario: Scenario) -> str:
    """The scenario as a fixture file: defaults left out, bare words for done/stall/…"""
    data = scenario.model_dump(mode="json", exclude_defaults=True)
    for attempt, dumped in zip(scenario.attempts, data["attempts"], strict=True):
        if isinstance(attempt, StreamAttempt):
            dumped["stream"]["steps"] = [
                _fixture_step(step, dumped_step)
                for step, dumped_step in zip(
                    attempt.stream.steps, dumped["stream"]["steps"], strict=True
                )
            ]
    text: str = yaml.dump(_styled(data), Dumper=_FixtureDumper, sort_keys=False, width=4096)
    return text


def _fixture_step(step: BaseModel, dumped: dict[str, Any]) -> Any:
    # A step's first field is the key that tells its kind (chunk, done, pause_ms…); dumped
    # without defaults, {"done": true} loses it and becomes {}, so put it back.
    key = next(iter(type(step).model_fields))
    dumped = {key: getattr(step, key)} | dumped
    if dumped == {key: True}:
        return key  # the bare word: done, stall, reset, end…
    return {
        name: _FlowMap(value) if isinstance(value, dict) else value
        for name, value in dumped.items()
    }


def _styled(value: Any) -> Any:
    if isinstance(value, _FlowMap | str):
        return value
    if isinstance(value, dict):
        return {key: _styled(item) for key, item in value.items()}
    if isinstance(value, list):
        if all(not isinstance(item, dict | list) for item in value):
            return _FlowList(value)
        return [_styled(item) for item in value]
    return value
