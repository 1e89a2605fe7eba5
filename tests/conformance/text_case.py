"""One small fixture the CLI and plugin tests write where a command reads it."""

from __future__ import annotations

from pathlib import Path

TEXT_CASE = """\
id: text-hello
title: Two text fragments, stop, usage, [DONE]
expect: {finish: stop, text: Hello, usage: {input_tokens: 5, output_tokens: 2}}
attempts:
  - stream:
      steps:
        - chunk: {choices: [{index: 0, delta: {role: assistant, content: Hel}, finish_reason: null}]}
        - chunk: {choices: [{index: 0, delta: {content: lo}, finish_reason: null}]}
        - chunk: {choices: [{index: 0, delta: {}, finish_reason: stop}]}
        - chunk: {choices: [], usage: {prompt_tokens: 5, completion_tokens: 2, total_tokens: 7}}
        - done
"""  # noqa: E501


def write_text_case(directory: Path) -> Path:
    """``directory/text-hello.yaml``: two text fragments, stop, usage, [DONE]."""
    path = directory / "text-hello.yaml"
    path.write_text(TEXT_CASE, encoding="utf-8")
    return path
