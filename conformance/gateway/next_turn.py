"""A two-turn case through a gateway (sans-IO): the next request the gateway forwarded
upstream, judged against the first turn the upstream streamed, by the rules a client's next
request is judged by (N1, N2 and the upstream wire's replay rule, AN-R2 or RS-R2).

The client's side is the reference's: it builds the next request in the downstream dialect
from what the gateway's answer handed it, as a library's users do, and the gateway carries
it back upstream. Ids must come back as the upstream gave them (the reverse of whatever
mapping the gateway applied downstream, reference dialects.md §8.4 GW-2). A continuity
token the downstream wire has no place for cannot come back from the client: its absence
upstream is recorded, never failed (DIALECTS.md "Gateways across dialects"); one the
gateway makes up, or one the downstream could carry and did not, fails.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from fakeprovider.dialects import DialectId
from fakeprovider.follow_up import (
    TOKEN_NAMES,
    FirstTurn,
    Problem,
    Replayed,
    Rule,
    follow_up_problems,
    replay_problems,
    replayed,
)

from ..invariants import CATALOGUE
from ..invariants.next_request import turn_of
from ..oracle import ExpectedAttempt
from ..results import InvariantVerdict
from ..verdicts import verdict_for
from .crossing import Observation
from .meaning_map import SLOTS, carries

REPLAY_RULES: Mapping[DialectId, str] = {
    "anthropic-messages": "AN-R2",
    "openai-responses": "RS-R2",
}
"""The upstream wire's own replay rule (chat-completions carries no continuity token)."""

# A first-turn loss that a next-turn problem follows from: a call the gateway lost or
# renamed downstream cannot be answered under its id, a token it dropped cannot come back.
EXPLAINED_BY: Mapping[str, tuple[str, ...]] = {
    "N1": ("GW-2", "M1"),
    "N2": ("GW-2", "M1"),
    "AN-R2": ("GW-5",),
    "RS-R2": ("GW-5",),
}


@dataclass(frozen=True)
class NextTurn:
    """What reached the upstream of the client's next request."""

    sent: bytes | None  # the body the upstream received; None: nothing reached it
    why_not: str = ""  # with no body: what the gateway did with the client's request


def next_turn_rules(source: DialectId) -> tuple[str, ...]:
    """The rules a two-turn case through a gateway judges, with ``source`` upstream."""
    replay = REPLAY_RULES.get(source)
    return ("N1", "N2") if replay is None else ("N1", "N2", replay)


def judge_next_turn(
    upstream: ExpectedAttempt, turn: NextTurn, source: DialectId, to: DialectId
) -> dict[str, list[Observation]]:
    """What each next-turn rule observed of the request the gateway sent upstream."""
    if turn.sent is None:
        # Nothing to read: the missing request is N1's loss alone, as for a client.
        missing = f"no next request reached the upstream: {turn.why_not}"
        return {"N1": [Observation("lost", missing)]}
    first = turn_of(upstream.blocks)
    problems = follow_up_problems(source, first, turn.sent)
    judged = {"N1": _observed(problems, "pairing"), "N2": _observed(problems, "history")}
    replay = REPLAY_RULES.get(source)
    if replay is not None:
        judged[replay] = _replayed(first, turn.sent, problems, source, to)
    return judged


def _observed(problems: tuple[Problem, ...], rule: Rule) -> list[Observation]:
    lost = [Observation("lost", p.reason) for p in problems if p.rule == rule]
    return lost or [Observation("held", "")]


def _replayed(
    first: FirstTurn, sent: bytes, problems: tuple[Problem, ...], source: DialectId, to: DialectId
) -> list[Observation]:
    """The replay rule: a token the downstream cannot carry may be missing upstream, and
    only then; anything else wrong with the tokens is the gateway's loss."""
    lost = _observed(problems, "replay")
    if lost[0].kind == "held":
        return lost
    uncarried = {token.kind for token in first.tokens if not carries(to, token.kind)}
    if not uncarried:
        return lost
    # The client had nothing to give back for those: the gateway may replay their blocks
    # bare (a thinking block without its signature) or leave them out.
    carried = FirstTurn(first.calls, tuple(t for t in first.tokens if t.kind not in uncarried))
    seen = replayed(source, sent)
    bare = [t for t in seen.tokens if not (t.kind in uncarried and t.value is None)]
    if replay_problems(carried, Replayed(tokens=bare)):
        return lost
    return [
        Observation(
            "unexpressed",
            f"not expressible in {to}: the first turn's {TOKEN_NAMES[kind]} cannot come back "
            f"from the client ({SLOTS[kind].elsewhere})",
        )
        for kind in sorted(uncarried)
    ]


def next_turn_verdicts(
    judged: Mapping[str, list[Observation]],
    first_turn: Mapping[str, InvariantVerdict],
    *,
    strict: bool,
) -> dict[str, InvariantVerdict]:
    """Each rule's heaviest observation, at the catalogue's (harness) level; a loss that
    follows from one the first turn already failed is recorded under that rule's name, so
    the maintainer is sent to the first turn's code."""
    verdicts = {}
    for rule_id, seen in judged.items():
        kind = max((o.kind for o in seen), key=_KINDS.index)
        reason = "; ".join(o.reason for o in seen if o.kind == kind)
        failed = {r for r, v in first_turn.items() if v.verdict == "fail"}
        cause = next((r for r in EXPLAINED_BY[rule_id] if r in failed), None)
        if kind == "lost" and cause is not None:
            reason = f"follows from {cause} in the first turn: {reason}"
            verdicts[rule_id] = InvariantVerdict(verdict="info", reason=reason)
            continue
        verdict = verdict_for(
            CATALOGUE[rule_id].level,
            kind == "held",
            weaker=kind == "weaker",
            strict=strict,
            recorded=kind == "unexpressed",
        )
        verdicts[rule_id] = InvariantVerdict(verdict=verdict, reason=reason)
    return verdicts


_KINDS = ("held", "unexpressed", "weaker", "lost")
