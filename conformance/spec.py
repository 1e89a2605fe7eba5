"""The spec's frozen revisions: which rules, wires, contracts and levels each one judges.

A gate wired against one revision keeps its meaning as the catalogue grows (the habit of
MCP conformance's per-revision requirement sets): under ``--spec 1.1`` a rule added in
1.2 is observed, never failed (INFO, its reason saying "new since 1.1"), and a level
changed since weighs what it weighed then. The revisions are data
(``spec_versions.yaml``); this module answers questions about them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Final

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from fakeprovider.dialects import DialectId

from .codes import ConformanceError
from .verdicts import Contract, Level, SpecVersion


class UnknownSpecError(ConformanceError, ValueError):
    """A spec version the suite does not know, or a contract its revision did not have."""


class _Revision(BaseModel):
    version: SpecVersion
    date: str
    summary: str
    adds: list[str] = []
    dialects: list[DialectId] = []
    contracts: list[Contract] = []
    levels: dict[str, dict[Contract, tuple[Level, Level]]] = {}

    model_config = ConfigDict(extra="forbid", frozen=True)


class _Revisions(BaseModel):
    revisions: list[_Revision]

    model_config = ConfigDict(extra="forbid")


def _key(version: SpecVersion) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


@dataclass(frozen=True)
class SpecHistory:
    """The revisions in order, and for each rule, wire and contract the one that added it."""

    revisions: tuple[_Revision, ...]
    rule_since: Mapping[str, SpecVersion] = field(init=False)
    dialect_since: Mapping[DialectId, SpecVersion] = field(init=False)
    contract_since: Mapping[Contract, SpecVersion] = field(init=False)

    def __post_init__(self) -> None:
        versions = [revision.version for revision in self.revisions]
        if versions != sorted(versions, key=_key) or len(set(versions)) != len(versions):
            raise ValueError(f"spec revisions out of order or repeated: {versions}")
        rules: dict[str, SpecVersion] = {}
        for revision in self.revisions:
            for rule in revision.adds:
                if rule in rules:
                    raise ValueError(f"{rule} is added in {rules[rule]} and {revision.version}")
                rules[rule] = revision.version
        object.__setattr__(self, "rule_since", rules)
        object.__setattr__(self, "dialect_since", self._first("dialects"))
        object.__setattr__(self, "contract_since", self._first("contracts"))

    def _first(self, what: str) -> dict[str, SpecVersion]:
        first: dict[str, SpecVersion] = {}
        for revision in self.revisions:
            for name in getattr(revision, what):
                first.setdefault(name, revision.version)
        return first

    @property
    def versions(self) -> tuple[SpecVersion, ...]:
        return tuple(revision.version for revision in self.revisions)

    @property
    def latest(self) -> SpecVersion:
        return self.revisions[-1].version

    def known(self, version: SpecVersion) -> SpecVersion:
        """``version`` if it is a revision; else :class:`UnknownSpecError` naming them."""
        if version not in self.versions:
            raise UnknownSpecError(
                f"unknown spec version {version!r}: known {', '.join(self.versions)}"
            )
        return version

    def check_contract(self, version: SpecVersion, contract: Contract) -> None:
        """Refuse a contract the revision did not have (interop is new in 1.1)."""
        since = self.contract_since.get(contract)
        if since is None or _key(since) > _key(self.known(version)):
            had = [c for c, added in self.contract_since.items() if _key(added) <= _key(version)]
            raise UnknownSpecError(
                f"the {contract} contract is new in spec {since}: spec {version} has "
                f"{', '.join(had)} only"
            )

    def new_since(
        self, version: SpecVersion, rule: str, dialect: DialectId | None = None
    ) -> str | None:
        """Why ``rule`` (on a case of ``dialect``) is only observed under ``version``:
        "new since 1.1 (added in 1.2)"; None when that revision judges it. A rule no
        revision lists is judged (the catalogue test keeps every rule listed)."""
        added = self.rule_since.get(rule)
        if added is not None and _key(added) > _key(version):
            return f"new since {version} (added in {added})"
        wire = None if dialect is None else self.dialect_since.get(dialect)
        if wire is not None and _key(wire) > _key(version):
            return f"new since {version} (judged on {dialect} from {wire})"
        return None

    def level(self, version: SpecVersion, rule: str, contract: Contract, today: Level) -> Level:
        """What ``rule`` weighed under ``contract`` in ``version``, given its level today:
        the ``before`` of the first change after ``version``, or today's."""
        for revision in self.revisions:
            change = revision.levels.get(rule, {}).get(contract)
            if change is not None and _key(revision.version) > _key(version):
                return change[0]
        return today


def load_spec_history(text: str) -> SpecHistory:
    """The revisions in ``text`` (the YAML of ``spec_versions.yaml``)."""
    try:
        return SpecHistory(tuple(_Revisions.model_validate(yaml.safe_load(text)).revisions))
    except ValidationError as error:
        raise ValueError(f"spec_versions.yaml: {error}") from None


SPEC: Final = load_spec_history(
    resources.files("conformance").joinpath("spec_versions.yaml").read_text(encoding="utf-8")
)
LATEST_SPEC: Final = SPEC.latest


def observed_reason(new: str, reason: str) -> str:
    """The reason of a finding only observed because its rule is new: why, then what it saw."""
    return f"{new}; {reason}" if reason else new
